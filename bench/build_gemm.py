"""Compile the GEMM correctness matrix to artifacts (no GPU needed).

    python bench/build_gemm.py OUT_DIR

dtypes {float16, bfloat16} x layouts {NN, NT (B stored N x K), TN (A stored
K x M)} x sizes {1000, 1024, 4096} x blocks {64x64x32/128 threads,
128x128x32/128, 128x256x64/256}; each artifact carries a "check" entry for
test/gpu/run_artifacts.py comparing with torch in fp32.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import gemm  # noqa: E402
from checks import save_checked  # noqa: E402

BLOCKS = [(64, 64, 32, 128), (128, 128, 32, 128), (128, 256, 64, 256)]
LAYOUTS = {"NN": (False, False), "NT": (False, True), "TN": (True, False)}
SIZES = [1000, 1024, 4096]


def expect(trans_a: bool, trans_b: bool) -> str:
    a = "A.float().T" if trans_a else "A.float()"
    b = "B.float().T" if trans_b else "B.float()"
    return f"({a} @ {b}).to(C.dtype)"


def main(out: str, quick: bool = False) -> None:
    os.makedirs(out, exist_ok=True)
    for dtype in ("float16", "bfloat16"):
        for lname, (ta, tb) in LAYOUTS.items():
            for bm, bn, bk, threads in BLOCKS:
                for size in SIZES:
                    # Rasterized on the 128x128 blocks, so the remap is checked too.
                    k = gemm.matmul(size, size, size, bm, bn, bk, threads, 2, dtype,
                                    "float32", ta, tb, panel=4 if bm == bn == 128 else 0)
                    tol = 5e-2 if dtype == "float16" else 2e-1
                    check = {"expect": {"C": expect(ta, tb)}, "atol": tol * 4,
                             "rtol": 2e-2, "seed": size}
                    stem = f"gemm_{dtype}_{lname}_{bm}x{bn}x{bk}_{size}"
                    save_checked(k.artifact, check, os.path.join(out, stem + ".tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
