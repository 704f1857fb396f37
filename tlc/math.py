"""TileLang's host-side integer helpers (`tilelang.math`): next_power_of_2 and cdiv, for
sizes computed in ordinary Python before a kernel is built."""

from __future__ import annotations

from .host import cdiv

__all__ = ["cdiv", "next_power_of_2"]


def next_power_of_2(x: int) -> int:
    """The smallest power of two at least `x` (1 for x <= 1): next_power_of_2(96) == 128."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"next_power_of_2 takes an integer, got {x!r}")
    return 1 if x <= 1 else 1 << (x - 1).bit_length()
