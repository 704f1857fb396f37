"""Compile the reduction checks to artifacts (no GPU needed).

    python bench/build_reduce.py OUT_DIR

Row softmax (reductions across lanes and warps, row vectors in T.Parallel)
and the row max of A @ B (a reduction over the tensor-core accumulator).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import softmax  # noqa: E402
from checks import save_checked  # noqa: E402


def save(kernel, check, path):
    save_checked(kernel.artifact, check, path)


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for m, n, bm in [(1000, 1024, 8), (4096, 4096, 2), (333, 256, 16)]:
        save(softmax.softmax(m, n, bm), {"expect": {"Y": "torch.softmax(X, dim=1)"},
                                         "atol": 1e-6, "rtol": 1e-5, "seed": m},
             os.path.join(out, f"softmax_{m}x{n}.tlcart"))
    save(softmax.rowmax_of_product(1000, 1000, 520),
         # Columns past N = 1000 are zeros in the padded tile (A @ 0): pad with
         # zeros too, then take each 64-column block's max.
         {"expect": {"Out": "torch.nn.functional.pad(A.float() @ B.float(), (0, 24))"
                            ".reshape(1000, 16, 64).amax(dim=2).T"},
          "atol": 1e-2, "rtol": 1e-3, "seed": 5},
         os.path.join(out, "rowmax_of_product.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
