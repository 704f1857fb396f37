"""Session 30's third MLA run (no GPU needed): examples/mla_decode.py as divided by
tile-divide-warpgroup-roles, and with warpgroup 0's column ops of the loop (the output's
rescale) moved after it publishes P (`_pubfirst`, an experiment switched on by
TLC_EXPERIMENT_PUBLISH_FIRST in a build with publish_first_experiment.patch applied), each
with its checks.

    python bench/results/2026-12-05/session30/build3.py OUT_DIR
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import build2  # noqa: E402  (its bench shapes, checks and cache-less builds)


def main(out):
    os.makedirs(out, exist_ok=True)
    os.environ.pop("TLC_EXPERIMENT_PUBLISH_FIRST", None)
    build2.build_all(out, "")
    os.environ["TLC_EXPERIMENT_PUBLISH_FIRST"] = "1"
    build2.build_all(out, "_pubfirst")


if __name__ == "__main__":
    main(sys.argv[1])
