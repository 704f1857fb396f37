"""Build the artifacts gpu_run3.sh times (no GPU needed):

    python bench/results/2026-12-05/session28/build_g9.py .gpu/g9

examples/gemm.py unchanged: fp16 and bf16, NN and NT, 4096^3 and 8192^3 on
128x256x64 and 256x128x64 blocks (3 stages, panel 8), into
OUT/{nn,nt}_{float16,bfloat16}; and fp16 NN K-heavy shapes (256 x 1024 x 32768,
512 x 512 x 16384) on 128x128 (4 stages), 128x256 and 256x128 blocks into
OUT/kheavy (256x128 blocks on 256 x 1024 x 32768: a single row of 8 tiles,
stream-K since this session, before it data-parallel on 8 SMs).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples"))

import gemm  # noqa: E402
import tlc  # noqa: E402


def main(out: str) -> None:
    matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    for layout, trans_b in (("nn", False), ("nt", True)):
        for dtype in ("float16", "bfloat16"):
            folder = os.path.join(out, f"{layout}_{dtype}")
            os.makedirs(folder, exist_ok=True)
            for size in (4096, 8192):
                for bm, bn in ((128, 256), (256, 128)):
                    kern = matmul(size, size, size, bm, bn, 64, 256, 3, dtype, trans_B=trans_b,
                                  panel=8)
                    kern.save(os.path.join(folder, f"bench_{bm}x{bn}x64s3p8_{size}.tlcart"))
    folder = os.path.join(out, "kheavy")
    os.makedirs(folder, exist_ok=True)
    for m, n, k in ((256, 1024, 32768), (512, 512, 16384)):
        for bm, bn, threads, stages in ((128, 128, 128, 4), (128, 256, 256, 3), (256, 128, 256, 3)):
            kern = matmul(m, n, k, bm, bn, 64, threads, stages, "float16", panel=8)
            kern.save(os.path.join(folder, f"bench_{bm}x{bn}x64s{stages}p8_{m}x{n}x{k}.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
