"""Compile GEMMs with and without stream-K for shapes whose tiles do not fill
the last wave (no GPU needed).

    python bench/build_gemm_streamk.py OUT_DIR

examples/gemm.py's program unchanged (fp16, NN and NT), each block config
built twice: as the compiler makes it (stream-K where the persistent loop
allows: `sk`) and with `tlc.disable_stream_k` (the data-parallel persistent
kernel of before: `dp`). Sizes: small cubes (1024, 2048: 32-128 tiles of
128 x 256 for 132 SMs), the decode shapes (M = 64 / 128, N = K = 8192),
K-heavy shapes (512 x 512 x 16384: 16 tiles of 128 x 128), a remainder
after full waves (4096^3: 512 tiles = 3 waves + 116; 8192^3) and sizes no
block divides (300 x 512 x 20000: M and K not multiples of the tile either). Writes OUT_DIR/streamk_{nn,nt}/bench_<config>-<sk|dp>_<size>.tlcart
for bench/gemm_gpu.py, which checks every output (NaN-poisoned) against torch
before timing it beside cuBLAS and Triton.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import gemm  # noqa: E402
import tlc  # noqa: E402

# (block_M, block_N, block_K, threads, stages, panel)
WIDE = (128, 256, 64, 256, 3, 8)
SQUARE = (128, 128, 64, 128, 4, 8)
NARROW = (64, 128, 64, 128, 8, 0)
TALL = (128, 64, 64, 256, 8, 0)
SIZES = {
    (1024, 1024, 1024): [WIDE, SQUARE],
    (2048, 2048, 2048): [WIDE, SQUARE],
    (64, 8192, 8192): [NARROW],
    (128, 8192, 8192): [TALL, SQUARE],
    (512, 512, 16384): [SQUARE],
    (256, 1024, 32768): [SQUARE],
    (4096, 4096, 4096): [WIDE],
    (8192, 8192, 8192): [WIDE],
    (1000, 3000, 4096): [WIDE],
    (777, 1000, 520): [SQUARE],
    (1000, 1000, 8000): [SQUARE],
    (300, 512, 20000): [SQUARE, WIDE],
}


def main(out: str) -> None:
    written = 0
    for layout, trans_b in (("nn", False), ("nt", True)):
        folder = os.path.join(out, f"streamk_{layout}")
        os.makedirs(folder, exist_ok=True)
        for (m, n, k), configs in SIZES.items():
            if trans_b and (m, n, k) not in ((1024, 1024, 1024), (64, 8192, 8192),
                                             (512, 512, 16384)):
                continue
            for bm, bn, bk, threads, stages, panel in configs:
                for mode, off in (("sk", False), ("dp", True)):
                    matmul = tlc.jit(out_idx=[-1], target="sm_90a",
                                     pass_configs={"tlc.disable_stream_k": off})(
                                         gemm.matmul.factory)
                    kernel = matmul(m, n, k, bm, bn, bk, threads, stages, trans_B=trans_b,
                                    panel=panel)
                    name = f"bench_{bm}x{bn}x{bk}s{stages}-{mode}_{m}x{n}x{k}"
                    kernel.save(os.path.join(folder, name + ".tlcart"))
                    written += 1
    print("wrote", written, "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
