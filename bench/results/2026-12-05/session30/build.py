"""Session 30's MLA artifacts (no GPU needed): examples/mla_decode.py as the compiler now
divides it (tile-divide-warpgroup-roles), the same program with that pass left out of the
pipeline (`_undivided`, the FullCol split of sessions up to 29), and
examples/mla_decode_ws.py (`_ws`, the roles written out), for bench/mla_gpu.py.

    python bench/results/2026-12-05/session30/build.py OUT_DIR

OUT_DIR/mla: the checks (bench/build_mla.py's CHECKS and SPLIT_CHECKS, sm_90a) of the divided
program and the bench shapes of all three; OUT_DIR/san: two small checks of the divided
program for compute-sanitizer.
"""

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))

os.environ["TLC_CACHE_DIR"] = tempfile.mkdtemp()  # the undivided build must not hit the cache

import build_mla  # noqa: E402
import mla_decode  # noqa: E402
import mla_decode_ws  # noqa: E402

import tlc.language as T  # noqa: E402
from tlc.compiler import pipeline  # noqa: E402

BENCH = [(132, 8192, 1), (132, 32768, 1), (64, 8192, 1), (64, 1024, 1), (132, 1024, 1),
         (8, 8192, 8)]


def bench(build, out, suffix):
    pages = T.dynamic("pages")
    for batch, kv_len, split in BENCH:
        build(batch, build_mla.HEADS, pages, kv_len // build_mla.PAGE, num_split=split).save(
            os.path.join(out, f"mla_bench_b{batch}_s{kv_len}"
                              f"{f'_split{split}' if split > 1 else ''}{suffix}.tlcart"))


def main(out):
    mla = os.path.join(out, "mla")
    san = os.path.join(out, "san")
    os.makedirs(mla, exist_ok=True)
    os.makedirs(san, exist_ok=True)
    pages = T.dynamic("pages")
    for batch, max_pages in build_mla.CHECKS:
        mla_decode.mla_decode(batch, build_mla.HEADS, pages, max_pages).save(
            os.path.join(mla, f"mla_check_b{batch}_p{max_pages}.tlcart"))
    for batch, max_pages, split in build_mla.SPLIT_CHECKS:
        mla_decode.mla_decode(batch, build_mla.HEADS, pages, max_pages, num_split=split).save(
            os.path.join(mla, f"mla_check_b{batch}_p{max_pages}_split{split}.tlcart"))
    mla_decode.mla_decode(3, build_mla.HEADS, pages, 2).save(
        os.path.join(san, "mla_check_b3_p2.tlcart"))
    mla_decode.mla_decode(4, build_mla.HEADS, pages, 9, num_split=2).save(
        os.path.join(san, "mla_check_b4_p9_split2.tlcart"))
    bench(mla_decode.mla_decode, mla, "")
    bench(mla_decode_ws.mla_decode_ws, mla, "_ws")
    pipeline.OPTIMIZE_PIPELINE = pipeline.OPTIMIZE_PIPELINE.replace(
        "tile-divide-warpgroup-roles,", "")
    undivided = mla_decode.mla_decode.factory
    import tlc
    bench(tlc.jit(out_idx=[4], cache=False, pass_configs={"tl.enable_fast_math": True})(undivided),
          mla, "_undivided")


if __name__ == "__main__":
    main(sys.argv[1])
