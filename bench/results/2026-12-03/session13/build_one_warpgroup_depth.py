"""One consumer warpgroup: wgmma depth 1 (wg_wait=1) at 3 stages against the
default depth 0 there, and the mma.sync program."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "examples"))
import tlc, gemm
out = sys.argv[1]
for layout, nt in (("nn", False), ("nt", True)):
    d = os.path.join(out, f"tut2_{layout}"); os.makedirs(d, exist_ok=True)
    wg = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    mma = tlc.jit(out_idx=[-1], target="sm_90a", pass_configs={"tl.disable_wgmma": True})(gemm.matmul.factory)
    for size in (4096, 8192):
        for name, f, cfg, w in [("128x128x32s3t128", wg, (128, 128, 32, 128, 3, 0), None),
                                ("128x128x32s3t128w1", wg, (128, 128, 32, 128, 3, 0), 1),
                                ("128x128x32s3t128mmasync", mma, (128, 128, 32, 128, 3, 0), None),
                                ("128x128x32s3p8t128w1", wg, (128, 128, 32, 128, 3, 8), 1),
                                ("128x128x64s3p8t128w1", wg, (128, 128, 64, 128, 3, 8), 1),
                                ("128x128x64s4p8t128", wg, (128, 128, 64, 128, 4, 8), None),
                                ("128x256x64s3p8", wg, (128, 256, 64, 256, 3, 8), None)]:
            bm, bn, bk, th, st, p = cfg
            k = f(size, size, size, bm, bn, bk, th, st, trans_B=nt, panel=p, wg_wait=w)
            k.save(os.path.join(d, f"bench_{name}_{size}.tlcart"))
print("ok")
