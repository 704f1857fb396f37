"""Compile the sm_90a wgmma GEMM checks and benchmark kernels (no GPU needed).

    python bench/build_gemm_wgmma.py OUT_DIR

Gemms with K tiles of 64 16-bit elements and one m64 row block per
warpgroup run on sm_90a's wgmma, with B stored N x K (NT, K-major) or K x N
(NN, N-major, kept as 64-column blocks). Writes

- OUT_DIR/checks: checked artifacts wg_{NT,NN}_<dtype>_<config>_<size> (fp16
  and bf16, three block configs, M = N = K in {1000, 4096}) for
  test/gpu/run_artifacts.py;
- OUT_DIR/nt: NT benchmark artifacts bench_<config>.<arch>_<size> for
  `bench/gemm_gpu.py --nt`, each config for sm_90a (wgmma) and sm_90 (the same
  GPU without the 'a' features: ldmatrix + mma.sync);
- OUT_DIR/nn: the same for NN, named bench_<config>.{wg,mma}_<size>, for
  bench/gemm_gpu.py.
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
    for sub in ("checks", "nt", "nn"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for layout, trans_b in (("NT", True), ("NN", False)):
        expect = "(A.float() @ B.float().T)" if trans_b else "(A.float() @ B.float())"
        for dtype in ("float16", "bfloat16"):
            for bm, bn, bk, threads, stages in CHECK_CONFIGS:
                for size in (1000, 4096):
                    k = gemm.matmul(size, size, size, bm, bn, bk, threads, stages, dtype,
                                    "float32", trans_B=trans_b)
                    assert "wgmma.mma_async" in k.get_kernel_source(), (layout, bm, bn, bk)
                    tol = 5e-2 if dtype == "float16" else 2e-1
                    save_checked(k.artifact, {"expect": {"C": expect + ".to(C.dtype)"},
                                              "atol": tol * 4, "rtol": 2e-2, "seed": size},
                                 os.path.join(out, "checks", f"wg_{layout}_{dtype}_{bm}x{bn}x{bk}"
                                              f"s{stages}_{size}.tlcart"))
    for arch, tag in (("sm_90a", "wg"), ("sm_90", "mma")):
        matmul = tlc.jit(out_idx=[-1], target=arch)(gemm.matmul.factory)
        for size in (4096, 8192):
            for bm, bn, bk, threads, stages in BENCH_CONFIGS:
                name = f"bench_{bm}x{bn}x{bk}s{stages}"
                matmul(size, size, size, bm, bn, bk, threads, stages, trans_B=True).save(
                    os.path.join(out, "nt", f"{name}.{arch}_{size}.tlcart"))
                matmul(size, size, size, bm, bn, bk, threads, stages).save(
                    os.path.join(out, "nn", f"{name}.{tag}_{size}.tlcart"))
    print("wrote", sum(len(os.listdir(os.path.join(out, d))) for d in ("checks", "nt", "nn")),
          "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
