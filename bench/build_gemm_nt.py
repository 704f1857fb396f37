"""Compile the NT GEMM (B stored N x K) checks and benchmark kernels (no GPU needed).

    python bench/build_gemm_nt.py OUT_DIR

NT gemms with K tiles of 64 16-bit elements and one m64 row block per
warpgroup run on sm_90a's wgmma. Writes checked artifacts wg_*.tlcart (fp16
and bf16, three block configs, M = N = K in {1000, 4096}; run them with
test/gpu/run_artifacts.py) and benchmark artifacts bench_<config>.<arch>_<size>
for bench/gemm_nt_gpu.py: each config compiled for sm_90a (wgmma) and for
sm_90 (the same GPU without the 'a' features: ldmatrix + mma.sync).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import gemm  # noqa: E402
import tlc  # noqa: E402
from checks import save_checked  # noqa: E402

CHECK_CONFIGS = [(128, 256, 64, 256, 3), (64, 128, 64, 128, 3), (128, 128, 64, 256, 4)]
BENCH_CONFIGS = [(128, 256, 64, 256, 3), (128, 256, 64, 256, 4), (128, 128, 64, 256, 4)]


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for dtype in ("float16", "bfloat16"):
        for bm, bn, bk, threads, stages in CHECK_CONFIGS:
            for size in (1000, 4096):
                k = gemm.matmul(size, size, size, bm, bn, bk, threads, stages, dtype, "float32",
                                trans_B=True)
                assert "wgmma.mma_async" in k.get_kernel_source(), (bm, bn, bk)
                tol = 5e-2 if dtype == "float16" else 2e-1
                save_checked(k.artifact, {"expect": {"C": "(A.float() @ B.float().T).to(C.dtype)"},
                                          "atol": tol * 4, "rtol": 2e-2, "seed": size},
                             os.path.join(out, f"wg_{dtype}_{bm}x{bn}x{bk}s{stages}_{size}.tlcart"))
    for arch in ("sm_90a", "sm_90"):
        for size in (4096, 8192):
            for bm, bn, bk, threads, stages in BENCH_CONFIGS:
                matmul = tlc.jit(out_idx=[-1], target=arch)(gemm.matmul.factory)
                k = matmul(size, size, size, bm, bn, bk, threads, stages, trans_B=True)
                k.save(os.path.join(out, f"bench_{bm}x{bn}x{bk}s{stages}.{arch}_{size}.tlcart"))
    print("wrote", len(os.listdir(out)), "artifacts to", out)


if __name__ == "__main__":
    main(sys.argv[1])
