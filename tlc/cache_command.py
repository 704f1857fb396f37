"""`tlc cache --info` / `tlc cache --clear`: the disk cache of compiled kernels
and autotuning winners (TLC_CACHE_DIR, or ~/.cache/tlc).

Exit status 0, 1 when the limit in TLC_CACHE_MAX_BYTES is malformed or the
cache cannot be cleared, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import cache_files
from .cache import cache_dir
from .errors import CompilationError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tlc cache", description=(
        "Show or clear the disk cache of compiled kernels and autotuning winners."))
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--info", action="store_true",
                      help="print where the cache is, how many entries it holds and their size")
    what.add_argument("--clear", action="store_true",
                      help="remove every entry (kernels and autotuning winners)")
    return p


def _info(folder: str) -> None:
    kernels = cache_files.kernel_entries(folder)
    tuned = cache_files.autotune_entries(folder)
    limit = cache_files.max_bytes()
    size = sum(e.size for e in kernels)
    tuned_size = sum(e.size for e in tuned)
    exists = "" if os.path.isdir(folder) else " (does not exist yet)"
    print(f"cache folder: {folder}{exists}")
    print(f"kernels: {len(kernels)} entries, {cache_files.human(size)}")
    print(f"autotuning winners: {len(tuned)} entries, {cache_files.human(tuned_size)}")
    print(f"total: {len(kernels) + len(tuned)} entries, "
          f"{cache_files.human(size + tuned_size)}")
    print(f"size limit ({cache_files.MAX_BYTES_ENV}): "
          + (cache_files.human(limit) if limit is not None else "none"))


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    folder = cache_dir()
    try:
        if args.info:
            _info(folder)
            return 0
        count, freed = cache_files.clear(folder)
    except CompilationError as e:
        print(f"tlc cache: error: {e}", file=sys.stderr)
        return 1
    left = cache_files.kernel_entries(folder) + cache_files.autotune_entries(folder)
    print(f"removed {count} files ({cache_files.human(freed)}) from {folder}")
    if left:
        print(f"tlc cache: error: {len(left)} entries could not be removed "
              f"(e.g. {left[0].path})", file=sys.stderr)
        return 1
    return 0
