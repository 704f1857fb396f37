import os, sys
sys.path.insert(0, "examples")
import gemm, tlc
out, tag = sys.argv[1], sys.argv[2]
SIZES = {
    (1024, 1024, 1024): [(128, 128, 64, 128, 4, 8), (128, 128, 64, 256, 4, 8), (64, 128, 64, 128, 6, 8)],
    (2048, 2048, 2048): [(128, 128, 64, 128, 4, 8), (128, 256, 64, 256, 3, 8)],
    (4096, 4096, 4096): [(128, 256, 64, 256, 3, 8)],
    (777, 1000, 520): [(128, 128, 64, 128, 4, 8)],
    (1000, 3000, 4096): [(128, 256, 64, 256, 3, 8)],
    (1000, 1000, 8000): [(128, 128, 64, 128, 4, 8)],
    (256, 1024, 32768): [(128, 128, 64, 128, 4, 8)],
}
os.makedirs(out, exist_ok=True)
for (m, n, k), cfgs in SIZES.items():
    for bm, bn, bk, th, st, p in cfgs:
        kern = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)(m, n, k, bm, bn, bk, th, st, panel=p)
        kern.save(os.path.join(out, f"bench_{bm}x{bn}x{bk}s{st}t{th}-{tag}_{m}x{n}x{k}.tlcart"))
