"""Host-side integer helpers TileLang programs call outside kernels."""

from __future__ import annotations


def cdiv(a: int, b: int) -> int:
    """The ceiling of a / b for integers (`tilelang.cdiv`): cdiv(1000, 128) == 8.

    Inside a @T.prim_func, T.ceildiv is the intrinsic; outside one, it is this."""
    for name, v in (("a", a), ("b", b)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"cdiv takes integers, got {name}={v!r}")
    if b == 0:
        raise ZeroDivisionError("cdiv by zero")
    return -(-a // b)
