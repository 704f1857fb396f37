"""TVM's `tirx` names that TileLang programs use inside tile code (the
dequantizing GEMMs' bit-twiddling helpers): `from tvm import tirx` becomes
`from tlc import tirx`.

    mask = tirx.const((1 << nbit) - 1, T.uint16)       # a typed constant
    x = tirx.reinterpret(T.float16, bits)              # dtype first, as TVM
    y = tirx.Select(cond, a, b)                        # T.if_then_else
    z = tirx.Cast(T.float32, x)                        # T.Cast

`PrimExpr` and `Var` are there for annotations (`val: tirx.PrimExpr`) and
mean nothing else. Other TVM IR construction (tirx.Call, buffers, TVM
passes) is not part of tlc.
"""

from __future__ import annotations

from .language.intrinsic import MARK, outside_prim_func
from .language.scalar_math import Cast, if_then_else as Select, max as Max, min as Min


class PrimExpr:
    """An annotation of a run-time value in TVM's spelling (checks nothing)."""


class Var(PrimExpr):
    """An annotation of a run-time variable in TVM's spelling (checks nothing)."""


def const(value, dtype: str = "int32"):
    """`value` (a Python number) as a run-time constant of `dtype`: arithmetic
    with it takes that dtype (a uint16 mask, a shift count).

    Example: `mask = tirx.const(0xF, T.uint8)`
    """
    raise outside_prim_func("tirx.const")


def reinterpret(dtype: str, value):
    """The bits of `value` read as `dtype` (as many bits): T.reinterpret with
    TVM's argument order, dtype first.

    Example: `tirx.reinterpret(T.float16, bits.astype(T.uint16))`
    """
    raise outside_prim_func("tirx.reinterpret")


setattr(const, MARK, "tirx_const")
setattr(reinterpret, MARK, "tirx_reinterpret")

__all__ = ["Cast", "Max", "Min", "PrimExpr", "Select", "Var", "const", "reinterpret"]
