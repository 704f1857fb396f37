import os, sys
sys.path.insert(0, "examples")
import gemm, tlc
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
CFGS = [(128, 128, 64, 128, 4), (128, 128, 128, 128, 3), (128, 128, 64, 128, 8), (64, 128, 128, 128, 4),
        (128, 64, 128, 128, 4), (64, 128, 64, 128, 8), (128, 128, 128, 256, 3), (64, 64, 128, 128, 4)]
for bm, bn, bk, th, st in CFGS:
    try:
        k = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)(1024, 1024, 1024, bm, bn, bk, th, st, panel=8)
    except Exception as e:
        print("skip", bm, bn, bk, th, st, str(e)[:150]); continue
    k.save(os.path.join(out, f"bench_{bm}x{bn}x{bk}s{st}t{th}_1024.tlcart"))
