"""Session 32's MLA builds (no GPU needed): examples/mla_decode_ws.py as written (`_ws`)
and with `multicast=True` (`_wsmc`: each sequence's two head blocks a cluster, each page
loaded once by TMA multicast into both), beside examples/mla_decode.py as the compiler
divides it (`_base`), with the checks of session 30's second run (splits 1 to 16,
shuffled pages, lengths 1 to 8320) and the bench shapes that decide.

    python bench/results/2026-12-05/session32/build_mla.py OUT_DIR [pieces]

With `pieces` (piece_barriers_experiment.patch applied): `_ws`, `_wspc` (a full / empty
pair of barriers per piece of a stage), `_wsmc` and `_wsmcpc` (both), at batch 132 and
64, context 8192.
"""

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

os.environ["TLC_CACHE_DIR"] = tempfile.mkdtemp()  # variants of one program: no cache hits

import build_mla  # noqa: E402
import mla_decode  # noqa: E402
import mla_decode_ws  # noqa: E402

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402

BENCH = [(132, 8192, 1), (132, 32768, 1), (64, 8192, 1)]
CHECKS = [(3, 2, 1), (8, 130, 1), (4, 64, 3), (8, 130, 16)]  # (batch, max pages, split)


def main(out, pieces=False):
    os.makedirs(out, exist_ok=True)
    jit = tlc.jit(out_idx=[4], cache=False, pass_configs={"tl.enable_fast_math": True})
    ws = jit(mla_decode_ws.mla_decode_ws.factory)
    variants = [("_base", jit(mla_decode.mla_decode.factory), {}), ("_ws", ws, {}),
                ("_wsmc", ws, {"multicast": True})]
    bench = BENCH
    if pieces:
        variants = [("_ws", ws, {}), ("_wspc", ws, {"piece_barriers": True}),
                    ("_wsmc", ws, {"multicast": True}),
                    ("_wsmcpc", ws, {"multicast": True, "piece_barriers": True})]
        bench = [(132, 8192, 1), (64, 8192, 1)]
    pages = T.dynamic("pages")
    for suffix, build, options in variants:
        for batch, kv_len, split in bench:
            build(batch, build_mla.HEADS, pages, kv_len // build_mla.PAGE, num_split=split,
                  **options).save(os.path.join(out, f"mla_bench_b{batch}_s{kv_len}{suffix}.tlcart"))
        for batch, max_pages, split in CHECKS:
            build(batch, build_mla.HEADS, pages, max_pages, num_split=split, **options).save(
                os.path.join(out, f"mla_check_b{batch}_p{max_pages}_split{split}{suffix}.tlcart"))
        print("built", suffix)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] == ["pieces"])
