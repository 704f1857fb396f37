"""Compile int8 GEMM benchmarks (bench/build_gemm_extras.py's gemm_int8: A M x K, B N x K,
int32 out; wgmma m64nNk32 .s32.s8.s8 on sm_90a) for bench/gemm_int8_gpu.py (no GPU needed).

    python bench/build_gemm_int8.py OUT_DIR

Writes OUT_DIR/bench_<BM>x<BN>x<BK>t<threads>s<stages>_<size>.tlcart at 4096 and 8192.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tlc  # noqa: E402
from build_gemm_extras import gemm_int8  # noqa: E402

CONFIGS = [(128, 128, 128, 256, 3), (128, 256, 128, 256, 3), (128, 128, 128, 128, 4),
           (128, 256, 64, 256, 4)]


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for size in (4096, 8192):
        for bm, bn, bk, threads, stages in CONFIGS:
            prim = gemm_int8(size, size, size, block_M=bm, block_N=bn, block_K=bk,
                             threads=threads, stages=stages)
            path = os.path.join(out, f"bench_{bm}x{bn}x{bk}t{threads}s{stages}_{size}.tlcart")
            tlc.compile(prim, target="sm_90a").save(path)
            print("wrote", os.path.basename(path), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
