"""Compile GEMMs for the small and K-heavy shapes of issue 9 in several
block configs (no GPU needed).

    python bench/build_gemm_small.py OUT_DIR

examples/gemm.py's program unchanged (fp16, NN), on sm_90a. 1024^3 has 64
tiles of 128 x 128 for 132 SMs: narrower tiles (128 x 64, 64 x 128, 64 x 64)
fill more of them. K-heavy shapes (M x N much smaller than K) also in
tiles covering more of M (256 x 128). Writes
OUT_DIR/small_nn/bench_<config>_<size>.tlcart for bench/gemm_gpu.py, which
checks every output (NaN-poisoned) against torch before timing it beside
cuBLAS and Triton.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import gemm  # noqa: E402
import tlc  # noqa: E402

# (block_M, block_N, block_K, threads, stages, panel)
SQUARE = (128, 128, 64, 128, 4, 8)
TALL = (128, 64, 64, 128, 6, 8)
WIDE64 = (64, 128, 64, 128, 6, 8)
SMALL = (64, 64, 64, 128, 8, 8)
SQUARE_TWO = (128, 128, 64, 256, 4, 8)
BIG_M = (256, 128, 64, 256, 4, 8)
SIZES = {
    (1024, 1024, 1024): [SQUARE, TALL, WIDE64, SMALL, SQUARE_TWO],
    (2048, 2048, 2048): [SQUARE, TALL, WIDE64],
    (256, 1024, 32768): [SQUARE, BIG_M, TALL],
    (512, 512, 16384): [SQUARE, TALL, SMALL],
}


def main(out: str) -> None:
    folder = os.path.join(out, "small_nn")
    os.makedirs(folder, exist_ok=True)
    written = 0
    for (m, n, k), configs in SIZES.items():
        for bm, bn, bk, threads, stages, panel in configs:
            matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
            kernel = matmul(m, n, k, bm, bn, bk, threads, stages, panel=panel)
            name = f"bench_{bm}x{bn}x{bk}s{stages}t{threads}_{m}x{n}x{k}"
            kernel.save(os.path.join(folder, name + ".tlcart"))
            written += 1
    print("wrote", written, "artifacts under", folder)


if __name__ == "__main__":
    main(sys.argv[1])
