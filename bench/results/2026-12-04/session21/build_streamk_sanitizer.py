import os, sys
sys.path.insert(0, "/work/main/examples"); sys.path.insert(0, "/work/main/bench")
import gemm, tlc
from checks import save_checked
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
SQUARE = (128, 128, 64, 128, 4, 8)
for (m, n, k), trans_b in (((256, 256, 8192), False), ((1024, 1152, 8192), False), ((300, 512, 20000), True)):
    bm, bn, bk, th, st, p = SQUARE
    kern = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)(m, n, k, bm, bn, bk, th, st, panel=p, trans_B=trans_b)
    expect = f"(A.float() @ B.float(){'.T' if trans_b else ''}).to(C.dtype)"
    save_checked(kern.artifact, {"expect": {"C": expect}, "atol": 0.25, "rtol": 2e-2},
                 os.path.join(out, f"sk_{m}x{n}x{k}_{'nt' if trans_b else 'nn'}.tlcart"))
