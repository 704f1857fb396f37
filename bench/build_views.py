"""Compile the T.reshape / T.view checks (no GPU needed).

    python bench/build_views.py OUT_DIR

The programs of test/python/test_buffer_views.py, for sm_90a and sm_80: a
shared tile written through its flat view and read back whole, a tile
reduced as rows of another width, a scan of a shared row viewed as a 1 x N
matrix, a float16 tile's bytes read as int32 words, float32 accumulators kept
in a float16 tile's bytes, a flat tensor parameter read as a matrix, a
float32 tensor's bits read as int32, a pipelined loop whose copy goes
into a viewed tile, and a gemm operand's swizzled bytes reused as float32
scratch and read back as float16. Each is written as OUT_DIR/<name>_<arch>.tlcart with a
check for test/gpu/run_artifacts.py.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
sys.path.insert(0, HERE)

from checks import save_checked_programs  # noqa: E402
import test_buffer_views as v  # noqa: E402

CHECKS = [
    (v.doubled_flat, {"expect": {"B": "A * 2 + torch.arange(32, device=A.device)"}}),
    (v.row_sums_of_a_view, {"expect": {"S": "A.reshape(16, 32).sum(dim=1)"},
                            "atol": 1e-4, "rtol": 1e-5}),
    (v.prefix_of_one_row, {"expect": {"B": "torch.cumsum(A, 0)"}, "atol": 1e-4, "rtol": 1e-5}),
    (v.words_of_halves, {"expect": {"W": "A.view(torch.int32)"}}),
    (v.accumulate_in_reused_bytes, {
        "expect": {"O": "(0.5 * torch.arange(32, device=A.device)[:, None] + "
                        "torch.arange(32, device=A.device)[None, :]) * 2"}}),
    (v.matrix_of_a_flat_tensor, {"expect": {"B": "A.reshape(32, 32) + 1"}}),
    (v.bits_of_floats, {"expect": {"B": "A.reshape(-1).view(torch.int32) >> 23"}}),
    (v.pipelined_into_a_viewed_buffer, {"expect": {"B": "A.sum(dim=1)"},
                                        "atol": 1e-3, "rtol": 1e-5}),
    (v.scratch_in_an_operand, {
        "expect": {
            "C": "A.float() @ B.float().T",
            "D": "torch.arange(2048, device=A.device).float().reshape(32, 64) + "
                 "(A.float() @ B.float().T)[:32]",
            "E": "torch.cat([torch.arange(2048, device=A.device).float().view(torch.float16)"
                 ".reshape(32, 128), B[32:]])"},
        "atol": 2e-2, "rtol": 1e-3}),
]


def main(out: str) -> None:
    save_checked_programs(CHECKS, out)


if __name__ == "__main__":
    main(sys.argv[1])
