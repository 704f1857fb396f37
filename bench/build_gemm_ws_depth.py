"""Compile the pending-wgmma-depth comparison of the warp-specialized GEMM (no GPU needed).

    python bench/build_gemm_ws_depth.py OUT_DIR

fp16 128x256x64 with panel-8 rasterization at 4096 and 8192, NN and NT, for
bench/gemm_gpu.py: 3 and 4 stages with wg_wait (the wgmma groups left
pending) 0, 1 and 2, and the same 4-stage kernel with
tl.disable_warp_specialized (the cp.async pipeline, async wgmma) beside them.
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import gemm, tlc
out = sys.argv[1]
matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
for layout, tb in (("nn", False), ("nt", True)):
    d = os.path.join(out, layout); os.makedirs(d, exist_ok=True)
    for size in (4096, 8192):
        for stages, wait in ((3, 0), (3, 1), (4, 0), (4, 1), (4, 2)):
            matmul(size, size, size, 128, 256, 64, 256, stages, trans_B=tb, panel=8,
                   wg_wait=wait).save(os.path.join(d, f"bench_128x256x64s{stages}w{wait}p8_{size}.tlcart"))
off = tlc.jit(out_idx=[-1], target="sm_90a", pass_configs={"tl.disable_warp_specialized": True})(gemm.matmul.factory)
for layout, tb in (("nn", False), ("nt", True)):
    d = os.path.join(out, layout)
    for size in (4096, 8192):
        off(size, size, size, 128, 256, 64, 256, 4, trans_B=tb, panel=8).save(
            os.path.join(d, f"bench_128x256x64s4p8.no_ws_{size}.tlcart"))
print("wrote", sum(len(f) for _, _, f in os.walk(out)), "artifacts under", out)
