"""`tlc.disable_cache()` / `enable_cache()` / `is_cache_enabled()` (TileLang's
names): switch the disk caches (compiled kernels, autotuning winners) off and
on for this process. Kernels already compiled in this process are still
reused from memory."""

from __future__ import annotations

_ENABLED = True


def disable_cache() -> None:
    """Stops reading and writing the disk caches in this process."""
    global _ENABLED
    _ENABLED = False


def enable_cache() -> None:
    """Reads and writes the disk caches again."""
    global _ENABLED
    _ENABLED = True


def is_cache_enabled() -> bool:
    return _ENABLED
