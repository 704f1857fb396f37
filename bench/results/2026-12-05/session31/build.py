"""Session 31's MLA builds (no GPU needed): examples/mla_decode.py as the compiler divides
it, with the checks of session 30's second run and three of its bench shapes, saved with
a suffix.

    python bench/results/2026-12-05/session31/build.py OUT_DIR SUFFIX [NAME=VALUE ...]

NAME=VALUE pairs are set in the environment first (the experiment switches of the build
being measured; see this directory's README).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "session30"))


def main(out, suffix, settings):
    for setting in settings:
        name, value = setting.split("=", 1)
        os.environ[name] = value
    import build2  # noqa: E402  (session 30's checks and cache-less builds)

    # The shapes that decide (the bar's, the long context, the one-wave
    # batch): three variants of a directory fit one device call this way.
    build2.BENCH = [(132, 8192, 1), (132, 32768, 1), (64, 8192, 1)]
    os.makedirs(out, exist_ok=True)
    build2.build_all(out, suffix)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
