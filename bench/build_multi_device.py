"""Compile the artifacts of test/gpu/multi_device_check.py (no GPU needed).

    python bench/build_multi_device.py OUT_DIR

vadd (fp32 4096 x 4096), a warp-specialized sm_90a GEMM (fp16 1024^3, TMA
tensor maps), and examples/mla_decode.py with split-KV (4 chunks: two
kernels and global scratch, a paged cache of 64-page tables).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import elementwise  # noqa: E402
import gemm  # noqa: E402
import mla_decode  # noqa: E402

import tlc.language as T  # noqa: E402
from tlc import ir  # noqa: E402


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.load_all_available_dialects()
        elementwise.compile_to(elementwise.build_vadd(), out, "vadd", "sm_90a")
    gemm.matmul(1024, 1024, 1024, 128, 256, 64, 256, 3, "float16", "float32").save(
        os.path.join(out, "gemm_ws.tlcart"))
    mla_decode.mla_decode(4, 128, T.dynamic("pages"), 64, num_split=4).save(
        os.path.join(out, "mla_split4.tlcart"))
    print("wrote 3 artifacts to", out)


if __name__ == "__main__":
    main(sys.argv[1])
