import os, sys
sys.path.insert(0, "/work/main/examples"); sys.path.insert(0, "/work/main/bench")
import gemm, tlc
out, tag = sys.argv[1], sys.argv[2]
SIZES = {
    (256, 1024, 32768): [(128, 128, 64, 128, 4, 8)],
    (512, 512, 16384): [(128, 128, 64, 128, 4, 8)],
    (1000, 1000, 8000): [(128, 128, 64, 128, 4, 8)],
    (1024, 1024, 4096): [(128, 128, 64, 128, 4, 8)],
}
os.makedirs(out, exist_ok=True)
for (m, n, k), cfgs in SIZES.items():
    for bm, bn, bk, th, st, p in cfgs:
        for mode, off in ((tag, False), ("dp", True)):
            if mode == "dp" and tag != "sk": continue
            kern = tlc.jit(out_idx=[-1], target="sm_90a", pass_configs={"tlc.disable_stream_k": off})(gemm.matmul.factory)(m, n, k, bm, bn, bk, th, st, panel=p)
            kern.save(os.path.join(out, f"bench_{bm}x{bn}x{bk}s{st}t{th}-{mode}_{m}x{n}x{k}.tlcart"))
