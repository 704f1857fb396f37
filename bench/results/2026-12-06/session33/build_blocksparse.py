"""Session 33's block-sparse GEMM builds (no GPU needed): examples/families/blocksparse_gemm.py's
two kernels at 4096^3 (128 x 128 x 64 blocks, 256 threads), saved as artifacts for
blocksparse_gpu.py. `masked` reads the boolean mask under an `if` in T.Pipelined (TileLang's
form), `lists` walks per-tile lists of the K slices.

    python bench/results/2026-12-06/session33/build_blocksparse.py OUT_DIR TAG

TAG names the compiler build (the masked kernel's copies were synchronous before this
session's tile-pipeline-loops change: `before`, and pipelined after it: `after`).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples", "families"))

import blocksparse_gemm as ex  # noqa: E402

import tlc  # noqa: E402

SIZE = 4096


def main(out, tag):
    os.makedirs(out, exist_ok=True)
    for arch in ("sm_90a", "sm_80"):
        forms = [("masked", ex.blocksparse_gemm_masked, 3)]
        if tag == "after":
            forms.append(("lists", ex.blocksparse_gemm, 4))
        for form, factory, stages in forms:
            kernel = tlc.jit(factory.factory, target=arch, cache=False)(
                SIZE, SIZE, SIZE, 128, 128, 64, stages, 256)
            kernel.save(os.path.join(out, f"bs_{form}_{tag}_{arch}.tlcart"))
            print("built", form, tag, arch)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
