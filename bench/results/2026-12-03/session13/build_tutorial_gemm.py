"""TileLang's tutorial GEMM configs (128 x 128 x 32 on 128 threads) and
neighbours, on wgmma and (the same program, tl.disable_wgmma) on mma.sync."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "examples"))
import tlc, gemm
out = sys.argv[1]
for layout, nt in (("nn", False), ("nt", True)):
    d = os.path.join(out, f"tut_{layout}"); os.makedirs(d, exist_ok=True)
    wg = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    mma = tlc.jit(out_idx=[-1], target="sm_90a", pass_configs={"tl.disable_wgmma": True})(gemm.matmul.factory)
    for size in (4096, 8192):
        for name, f, cfg in [("128x128x32s3t128", wg, (128, 128, 32, 128, 3, 0)),
                             ("128x128x32s3t128mmasync", mma, (128, 128, 32, 128, 3, 0)),
                             ("128x128x32s4p8t128", wg, (128, 128, 32, 128, 4, 8)),
                             ("128x128x64s3p8t128", wg, (128, 128, 64, 128, 3, 8)),
                             ("256x128x32s4p8", wg, (256, 128, 32, 256, 4, 8)),
                             ("128x256x32s4p8", wg, (128, 256, 32, 256, 4, 8)),
                             ("128x256x64s3p8", wg, (128, 256, 64, 256, 3, 8))]:
            bm, bn, bk, th, st, p = cfg
            k = f(size, size, size, bm, bn, bk, th, st, trans_B=nt, panel=p)
            k.save(os.path.join(d, f"bench_{name}_{size}.tlcart"))
print("ok")
