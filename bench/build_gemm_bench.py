"""Compile the GEMM benchmark kernels (no GPU needed).

    python bench/build_gemm_bench.py OUT_DIR

fp16 C = A @ B, M = N = K in {1024, 2048, 4096, 8192}, for each block config
below; bench/gemm_gpu.py times them against cuBLAS and Triton.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import gemm  # noqa: E402

# (block_M, block_N, block_K, threads, num_stages, rasterization panel)
CONFIGS = [(128, 128, 32, 128, 3, 0), (128, 128, 64, 128, 3, 0), (256, 128, 32, 256, 4, 0),
           (256, 128, 64, 256, 3, 0), (128, 256, 64, 256, 3, 0), (128, 256, 64, 256, 4, 0)]
SIZES = [int(s) for s in os.environ.get("TLC_BENCH_SIZES", "1024,2048,4096,8192").split(",")]


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for bm, bn, bk, threads, stages, panel in CONFIGS:
        for size in SIZES:
            k = gemm.matmul(size, size, size, bm, bn, bk, threads, stages, panel=panel)
            name = f"{bm}x{bn}x{bk}s{stages}" + (f"p{panel}" if panel else "")
            k.save(os.path.join(out, f"bench_{name}_{size}.tlcart"))
    print("wrote", len(CONFIGS) * len(SIZES), "artifacts to", out)


if __name__ == "__main__":
    main(sys.argv[1])
