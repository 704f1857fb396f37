"""Session 30's second MLA run (no GPU needed): examples/mla_decode.py as divided by
tile-divide-warpgroup-roles, and with its `stagger` option (`_stagger`: warpgroup 1's half
of P V waits for warpgroup 0's next scores, to run during its softmax), each with its checks.
The option is not in the tree (measured 40% slower): apply stagger_experiment.patch to build.

    python bench/results/2026-12-05/session30/build2.py OUT_DIR
"""

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))

os.environ["TLC_CACHE_DIR"] = tempfile.mkdtemp()  # variants of one program: no cache hits

import build_mla  # noqa: E402
import mla_decode  # noqa: E402

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402
from tlc.compiler import pipeline  # noqa: E402

BENCH = [(132, 8192, 1), (132, 32768, 1), (64, 8192, 1), (132, 1024, 1), (8, 8192, 8)]
CHECKS = [(3, 2, 1), (8, 130, 1), (4, 64, 3), (8, 130, 16)]  # (batch, max pages, split)
BASE = pipeline.OPTIMIZE_PIPELINE


def build_all(out, suffix):
    build = tlc.jit(out_idx=[4], cache=False, pass_configs={"tl.enable_fast_math": True})(
        mla_decode.mla_decode.factory)
    pages = T.dynamic("pages")
    for batch, kv_len, split in BENCH:
        build(batch, build_mla.HEADS, pages, kv_len // build_mla.PAGE, num_split=split).save(
            os.path.join(out, f"mla_bench_b{batch}_s{kv_len}"
                              f"{f'_split{split}' if split > 1 else ''}{suffix}.tlcart"))
    for batch, max_pages, split in CHECKS:
        build(batch, build_mla.HEADS, pages, max_pages, num_split=split).save(
            os.path.join(out, f"mla_check_b{batch}_p{max_pages}_split{split}{suffix}.tlcart"))


def main(out):
    os.makedirs(out, exist_ok=True)
    build_all(out, "")
    pipeline.OPTIMIZE_PIPELINE = BASE.replace(
        "tile-divide-warpgroup-roles,", "tile-divide-warpgroup-roles{stagger=true},")
    assert pipeline.OPTIMIZE_PIPELINE != BASE
    build_all(out, "_stagger")


if __name__ == "__main__":
    main(sys.argv[1])
