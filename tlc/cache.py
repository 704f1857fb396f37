"""The disk cache of compiled kernels: one JSON file per key (see cache_key.py).

An entry that cannot be read as it should (missing, damaged, too deeply
nested, a FIFO, a symbolic link or anything but a regular file, written by another tlc) is a
miss: the kernel is compiled again and the entry replaced. Writing never
fails a compilation and never leaves a temporary file behind. A hit marks
the entry used (its mtime); TLC_CACHE_MAX_BYTES bounds the folder (see
cache_files.py).
"""

from __future__ import annotations

import json
import os

from . import __version__, cache_files
from .output import open_regular, replace_atomically, umask

MAX_ENTRY_BYTES = 256 << 20  # a bigger "entry" is not one of ours


def cache_dir() -> str:
    """TLC_CACHE_DIR, or ~/.cache/tlc."""
    return os.environ.get("TLC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tlc")


def entry_path(key: str) -> str:
    return os.path.join(cache_dir(), key + ".json")


def load(key: str) -> tuple[dict, dict] | None:
    """(artifact, stages) stored under `key`, or None on any miss."""
    try:
        with open_regular(entry_path(key), "cache entry", follow_symlinks=False) as f:
            data = f.read(MAX_ENTRY_BYTES + 1)
            _touch(f.fileno())
        if len(data) > MAX_ENTRY_BYTES:
            return None
        entry = json.loads(data.decode("utf-8"))
        if not isinstance(entry, dict) or entry.get("tlc") != __version__:
            return None
        artifact, stages = entry["artifact"], entry["stages"]
        if not isinstance(artifact, dict) or not isinstance(stages, dict):
            return None
        return artifact, stages
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None  # recompile and replace


def store(key: str, artifact: dict, stages: dict) -> None:
    """Stores an entry atomically; a read-only or full disk only costs recompilation."""
    folder = cache_dir()
    limit = cache_files.max_bytes()  # a malformed TLC_CACHE_MAX_BYTES is said, not ignored
    try:
        text = json.dumps({"tlc": __version__, "artifact": artifact, "stages": stages})
        os.makedirs(folder, exist_ok=True)
        replace_atomically(entry_path(key), text.encode("utf-8"), mode=0o666 & ~umask())
    except (OSError, ValueError, TypeError, RecursionError):
        return
    if limit is not None:
        cache_files.evict(folder, limit, keep=entry_path(key))


def _touch(fd: int) -> None:
    """Marks an entry used now (least-recently-used eviction reads its mtime)."""
    try:
        os.utime(fd)
    except OSError:
        pass  # a read-only cache: still a hit
