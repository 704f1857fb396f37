"""Session 33's GPU checks of compiled-only changes (no GPU needed to build):

- d047932: T.Parallel loops between a global tensor and a float32 fragment moving the
  fragment's runs as vectors (test_compile.py's round trip, fp16 and fp32, 1000 rows:
  the last block's rows past the end skipped), and test_atomics.py's tile atomic adds
  from a fragment (now wholly vector reductions on sm_90a).

    python bench/results/2026-12-06/session33/build_checks.py OUT_DIR
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))

from checks import save_checked  # noqa: E402
from test_atomics import _splitk_tiles  # noqa: E402
from test_compile import parallel_fragment_round_trip  # noqa: E402

import tlc  # noqa: E402


def main(out):
    os.makedirs(out, exist_ok=True)
    for arch in ("sm_90a", "sm_80"):
        for dtype in ("float16", "float32"):
            prim = parallel_fragment_round_trip(64, 256, dtype)
            save_checked(tlc.compile(prim, target=arch).artifact,
                         {"symbols": {"rows": 1000},
                          "expect": {"B": f"(A.float() * 2 + 1).to(torch.{dtype})"},
                          "atol": 0, "rtol": 0, "seed": 3},
                         os.path.join(out, f"fragment_round_trip_{dtype}_{arch}.tlcart"))
        # C starts at 1, D at 0 (readwrite tensors are random otherwise: given here)
        save_checked(tlc.compile(_splitk_tiles(), target=arch).artifact,
                     {"inputs": {"C": "ones", "D": "zeros"},
                      "expect": {"C": "1 + 6 * A",
                                 "D": "torch.stack([torch.cat([torch.full((4, 64), 3.0, "
                                      "device='cuda'), torch.zeros(60, 64, device='cuda')]), "
                                      "6 * A])"},
                      "atol": 1e-4, "rtol": 1e-5, "seed": 4},
                     os.path.join(out, f"tile_atomic_add_{arch}.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
