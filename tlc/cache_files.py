"""The disk cache as a whole: what it holds, clearing it, and its size limit.

The cache folder (tlc.cache.cache_dir) holds the compiled kernels, one
KEY.json per key, and the autotuner's winners under autotune/KEY.json. Only
files named like tlc's entries are counted or removed, so a TLC_CACHE_DIR
pointed at a folder holding other files loses none of them.

TLC_CACHE_MAX_BYTES bounds the kernels' entries: after a store, the least
recently used entries (a hit refreshes an entry's time) are removed until the
rest fits; the entry just written is never removed. Another process deleting
the same files at the same time is not an error.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

from .errors import CompilationError

MAX_BYTES_ENV = "TLC_CACHE_MAX_BYTES"
ENTRY_NAME = re.compile(r"f?[0-9a-f]{64}\.json")
AUTOTUNE_NAME = re.compile(r"[0-9a-f]{64}\.json")
# Leftovers of a process killed while writing or compiling: removed by --clear
# once older than this (a younger one may belong to a process still running).
LEFTOVER_AGE_SECONDS = 600
_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


@dataclass
class Entry:
    path: str
    size: int
    mtime: float


def max_bytes() -> int | None:
    """TLC_CACHE_MAX_BYTES as bytes (an integer, optionally with K, M, G or T:
    powers of 1024), or None when unset. A malformed value is a CompilationError."""
    text = os.environ.get(MAX_BYTES_ENV, "").strip()
    if not text:
        return None
    m = re.fullmatch(r"(\d+)\s*([KMGT]?)(?:i?B)?", text, re.IGNORECASE)
    if not m:
        raise CompilationError(f"{MAX_BYTES_ENV}={text!r} is not a size: give bytes, e.g. "
                               "500000000, 512M or 2G")
    return int(m.group(1)) * _SUFFIXES[m.group(2).upper()]


def _scan(folder: str, pattern: re.Pattern) -> list[Entry]:
    """The regular files in `folder` whose names match; files that vanish while
    they are listed are skipped."""
    found = []
    try:
        with os.scandir(folder) as it:
            for d in it:
                if not pattern.fullmatch(d.name):
                    continue
                try:
                    st = d.stat(follow_symlinks=False)
                except OSError:
                    continue
                if d.is_file(follow_symlinks=False):
                    found.append(Entry(d.path, st.st_size, st.st_mtime))
    except OSError:
        pass
    return found


def kernel_entries(folder: str) -> list[Entry]:
    return _scan(folder, ENTRY_NAME)


def autotune_entries(folder: str) -> list[Entry]:
    return _scan(os.path.join(folder, "autotune"), AUTOTUNE_NAME)


def _leftovers(folder: str) -> list[Entry]:
    """Temporary files and lock files left by killed processes (old ones only)."""
    old = time.time() - LEFTOVER_AGE_SECONDS
    files = _scan(folder, re.compile(r"\.tlc-.*\.tmp|f?[0-9a-f]{64}\.lock(\.break)?"))
    files += _scan(os.path.join(folder, "autotune"), re.compile(r"\.tmp-.*\.json"))
    return [e for e in files if e.mtime < old]


def _remove(path: str) -> bool:
    """Removes a file; False when it was already gone or cannot be removed."""
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def clear(folder: str) -> tuple[int, int]:
    """Removes every entry (kernels and autotuning winners) and old leftovers;
    returns (files removed, bytes freed)."""
    count = freed = 0
    for e in kernel_entries(folder) + autotune_entries(folder) + _leftovers(folder):
        if _remove(e.path):
            count += 1
            freed += e.size
    return count, freed


def evict(folder: str, limit: int, keep: str) -> None:
    """Removes the least recently used kernel entries until the others fit in
    `limit` bytes; the entry at path `keep` stays even when alone it does not."""
    entries = kernel_entries(folder)
    total = sum(e.size for e in entries)
    if total <= limit:
        return
    keep = os.path.abspath(keep)
    for e in sorted(entries, key=lambda e: e.mtime):
        if total <= limit:
            break
        if os.path.abspath(e.path) == keep:
            continue
        _remove(e.path)  # gone already (another process evicted it): freed all the same
        total -= e.size


def human(n: int) -> str:
    """A byte count for people: 1.5 MiB."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"
