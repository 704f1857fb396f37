"""A/B artifacts of session 18: GEMM (sm_90a, warp-specialized) and both MLA programs, their
names tagged with the compiler build (`new`: opaque first descriptors, `old`: the commit before).

    python build_ab.py OUT_DIR TAG
"""
import os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "bench"))
import gemm, mla_decode_ws, mla_decode
import tlc, tlc.language as T
out, tag = sys.argv[1], sys.argv[2]
matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
CONFIGS = [(128, 256, 64, 256, 3, 8), (128, 256, 64, 256, 4, 0), (256, 128, 64, 256, 3, 8)]
for layout, trans_b in (("nn", False), ("nt", True)):
    folder = os.path.join(out, f"{layout}_float16"); os.makedirs(folder, exist_ok=True)
    for size in (4096, 8192):
        for bm, bn, bk, threads, stages, panel in CONFIGS:
            name = f"bench_{bm}x{bn}x{bk}s{stages}{f'p{panel}' if panel else ''}{tag}_{size}"
            matmul(size, size, size, bm, bn, bk, threads, stages, "float16",
                   trans_B=trans_b, panel=panel).save(os.path.join(folder, name + ".tlcart"))
mla = os.path.join(out, "mla"); os.makedirs(mla, exist_ok=True)
pages = T.dynamic("pages")
for batch, kv_len in ((132, 8192), (64, 8192), (132, 32768)):
    mla_decode_ws.mla_decode_ws(batch, 128, pages, kv_len // 64).save(
        os.path.join(mla, f"mla_bench_b{batch}_s{kv_len}_ws{tag}.tlcart"))
    mla_decode.mla_decode(batch, 128, pages, kv_len // 64).save(
        os.path.join(mla, f"mla_bench_b{batch}_s{kv_len}{tag}.tlcart"))
