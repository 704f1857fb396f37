"""Compile the split-K GEMM checks and benchmarks (no GPU needed).

    python bench/build_gemm_splitk.py OUT_DIR

examples/gemm_splitk.py (T.atomic_add of each K slice's partial tile into a
zeroed float32 C) on sm_90a. Writes OUT_DIR/checks (run_artifacts.py; C
starts as zeros) and OUT_DIR/bench (bench_<config>_<MxNxK> for
bench/splitk_gpu.py) for the decode shapes M = 64 and 128, N = K = 8192.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import gemm_splitk  # noqa: E402
from checks import save_checked  # noqa: E402

# (block_M, block_N, block_K, split, threads, stages)
BENCH = {64: [(64, 128, 64, 2, 128, 4), (64, 128, 64, 4, 128, 4), (64, 64, 64, 4, 128, 6)],
         128: [(128, 128, 64, 2, 256, 4), (128, 128, 64, 4, 256, 4), (64, 128, 64, 2, 128, 4),
               (64, 128, 64, 4, 128, 4)]}


def main(out: str) -> None:
    for sub in ("checks", "bench"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for m, n, k, split in ((100, 1000, 1000, 3), (128, 1024, 2048, 4), (64, 8192, 8192, 4)):
        kern = gemm_splitk.matmul_splitk(m, n, k, 64, 128, 64, split)
        save_checked(kern.artifact, {
            "inputs": {"C": "zeros"},
            "expect": {"C": "A.float() @ B.float().T"}, "atol": 0.1, "rtol": 1e-2, "seed": m},
            os.path.join(out, "checks", f"splitk_{m}x{n}x{k}_s{split}.tlcart"))
    for m, configs in BENCH.items():
        for bm, bn, bk, split, threads, stages in configs:
            kern = gemm_splitk.matmul_splitk(m, 8192, 8192, bm, bn, bk, split, threads, stages)
            kern.save(os.path.join(out, "bench", f"bench_{bm}x{bn}x{bk}k{split}s{stages}_"
                                                 f"{m}x8192x8192.tlcart"))
    print("wrote", sum(len(os.listdir(os.path.join(out, d))) for d in ("checks", "bench")),
          "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
