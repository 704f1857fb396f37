"""Compile the MLA decode kernels of the benchmark and its checks (no GPU needed).

    python bench/build_mla.py OUT_DIR

examples/mla_decode.py, fp16, 128 heads, a paged 512 + 64 latent cache
(64-token pages, `T.dynamic` page count): the benchmark shapes (batch 64
and 132, contexts 1024 / 8192 / 32768) as mla_bench_b{B}_s{S}.tlcart, small
batches with and without split-KV (`_split{N}`), and kernels for the checks
(mla_check_b{B}_p{MAX_PAGES}[_split{N}].tlcart, splits 1 to 16), which
bench/mla_gpu.py runs on sequences of mixed lengths; the checks also built
for sm_90 (`_sm90`: mma.sync and the cp.async pipeline, whose prefetch reads
the page table ahead of the iterations, guarded past the end). Each bench
and sm_90a check is also built from examples/mla_decode_ws.py (the
warpgroups' roles written out), named `_ws`, and from
examples/mla_decode_seesaw.py (both warpgroups computing scores), named
`_seesaw`.

    python bench/build_mla.py OUT_DIR [fullcol] [ws] [seesaw]

builds only the programs named (all three by default).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import mla_decode  # noqa: E402
import mla_decode_seesaw  # noqa: E402
import mla_decode_ws  # noqa: E402

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402

HEADS, PAGE = 128, 64
BENCH = [(b, s, 1) for b in (64, 132) for s in (1024, 8192, 32768)] + [
    (8, 8192, 1), (8, 8192, 8), (8, 32768, 1), (8, 32768, 16), (16, 8192, 1), (16, 8192, 4),
    (64, 8192, 2)]  # (batch, context, num_split)
CHECKS = [(4, 64), (3, 2), (8, 130)]  # (batch, max pages)
SPLIT_CHECKS = [(4, 64, 2), (4, 64, 3), (3, 2, 5), (8, 130, 16), (8, 130, 7)]


PROGRAMS = {"fullcol": ("", mla_decode.mla_decode), "ws": ("_ws", mla_decode_ws.mla_decode_ws),
            "seesaw": ("_seesaw", mla_decode_seesaw.mla_decode_seesaw)}


def main(out: str, programs=tuple(PROGRAMS)) -> None:
    os.makedirs(out, exist_ok=True)
    pages = T.dynamic("pages")
    written = 0
    for program in programs:
        suffix, build = PROGRAMS[program]
        for batch, kv_len, split in BENCH:
            build(batch, HEADS, pages, kv_len // PAGE, num_split=split).save(
                os.path.join(out, f"mla_bench_b{batch}_s{kv_len}"
                                  f"{f'_split{split}' if split > 1 else ''}{suffix}.tlcart"))
        for batch, max_pages in CHECKS:
            build(batch, HEADS, pages, max_pages).save(
                os.path.join(out, f"mla_check_b{batch}_p{max_pages}{suffix}.tlcart"))
        for batch, max_pages, split in SPLIT_CHECKS:
            build(batch, HEADS, pages, max_pages, num_split=split).save(
                os.path.join(out, f"mla_check_b{batch}_p{max_pages}_split{split}{suffix}.tlcart"))
        written += len(BENCH) + len(CHECKS) + len(SPLIT_CHECKS)
        if program == "fullcol":  # the sm_90 path: mma.sync and the cp.async pipeline
            sm90 = tlc.jit(out_idx=[4], target="sm_90",
                           pass_configs={"tl.enable_fast_math": True})(build.factory)
            for batch, max_pages in CHECKS:
                sm90(batch, HEADS, pages, max_pages).save(
                    os.path.join(out, f"mla_check_b{batch}_p{max_pages}_sm90.tlcart"))
            written += len(CHECKS)
    print("wrote", written, "artifacts to", out)


if __name__ == "__main__":
    for name in sys.argv[2:]:
        if name not in PROGRAMS:
            sys.exit(f"unknown program {name!r}: one of {', '.join(PROGRAMS)}")
    main(sys.argv[1], tuple(sys.argv[2:]) or tuple(PROGRAMS))
