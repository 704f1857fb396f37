"""Scalar math inside a kernel: T.exp, exp2, log, log2, sqrt, rsqrt, sigmoid, abs, max,
min, if_then_else, infinity, cast, ceildiv, floordiv.

Each folds Python numbers at compile time and computes on run-time values in
the kernel. T.ceildiv and T.floordiv also work on plain ints in ordinary
Python, as in TileLang.
"""

from __future__ import annotations

from ..host import cdiv
from .intrinsic import intrinsic, outside_prim_func


@intrinsic
def exp(x):
    """e ** x of a float value.

    Args:
        x: a float scalar (or a Python number, folded at compile time).

    Example: `p[i, j] = T.exp(s[i, j] - m[i])`
    """
    raise outside_prim_func("exp")


@intrinsic
def exp2(x):
    """2 ** x of a float value.

    Args:
        x: a float scalar (or a Python number).

    Example: `p[i, j] = T.exp2(s[i, j] * scale - m[i])`
    """
    raise outside_prim_func("exp2")


@intrinsic
def log(x):
    """The natural logarithm of a float value.

    Args:
        x: a float scalar (or a Python number).

    Example: `y[i] = T.log(x[i])`
    """
    raise outside_prim_func("log")


@intrinsic
def log2(x):
    """The base-2 logarithm of a float value.

    Args:
        x: a float scalar (or a Python number).

    Example: `y[i] = T.log2(x[i])`
    """
    raise outside_prim_func("log2")


@intrinsic
def sqrt(x):
    """The square root of a float value.

    Args:
        x: a float scalar (or a Python number).

    Example: `y[i] = T.sqrt(x[i])`
    """
    raise outside_prim_func("sqrt")


@intrinsic
def rsqrt(x):
    """1 / sqrt(x) of a float value.

    Args:
        x: a float scalar (or a Python number).

    Example: `y[i, j] = x[i, j] * T.rsqrt(var[i] + 1e-5)`
    """
    raise outside_prim_func("rsqrt")


@intrinsic
def sigmoid(x):
    """1 / (1 + e ** -x) of a float value.

    Args:
        x: a float scalar (or a Python number, folded at compile time).

    Example: `y[i, j] = x[i, j] * T.sigmoid(x[i, j])`
    """
    raise outside_prim_func("sigmoid")


@intrinsic
def abs(x):  # noqa: A001
    """The absolute value of an integer or float value.

    Args:
        x: a scalar (or a Python number).

    Example: `y[i] = T.abs(x[i])`
    """
    raise outside_prim_func("abs")


@intrinsic
def max(a, b, *more):  # noqa: A001
    """The largest of two or more values (integers, floats or indices).

    Args:
        a, b, *more: the values; mixed dtypes are promoted.

    Example: `m[i] = T.max(m[i], s[i, j])`
    """
    raise outside_prim_func("max")


@intrinsic
def min(a, b, *more):  # noqa: A001
    """The smallest of two or more values (integers, floats or indices).

    Args:
        a, b, *more: the values; mixed dtypes are promoted.

    Example: `hi = T.min(n, (bx + 1) * 64)`
    """
    raise outside_prim_func("min")


@intrinsic
def clamp(dst, min_val, max_val):
    """`dst` limited to [min_val, max_val]: T.max(T.min(dst, max_val), min_val)
    (TileLang's parameter names).

    Args:
        dst: the value (integer, float or index).
        min_val: the smallest result.
        max_val: the largest result.

    Example: `y[i] = T.clamp(x[i], -1.0, 1.0)`
    """
    raise outside_prim_func("clamp")


@intrinsic
def if_then_else(cond, t, f):
    """`t` where `cond` holds, else `f` (a select; both are evaluated).

    Args:
        cond: a bool value (a Python bool picks at compile time).
        t: the value when cond is true.
        f: the value when cond is false.

    Example: `y[i] = T.if_then_else(x[i] > 0, x[i], 0.0)`
    """
    raise outside_prim_func("if_then_else")


@intrinsic
def infinity(dtype: str):
    """Positive infinity of a float dtype (negate it for -inf).

    Args:
        dtype: a float dtype ("float32", T.float16, ...).

    Example: `T.fill(m_f, -T.infinity("float32"))`
    """
    raise outside_prim_func("infinity")


@intrinsic
def Cast(dtype: str, value):  # noqa: N802 (TileLang's name)
    """`value` converted to `dtype`: T.cast with the arguments as TVM orders them.

    Args:
        dtype: the target dtype.
        value: a scalar, index or Python number.

    Example: `out[i] = T.Cast("float16", acc[i])`
    """
    raise outside_prim_func("Cast")


@intrinsic
def cast(value, dtype: str, round: str = "", sat: bool = True, rbits=None):  # noqa: A002
    """`value` converted to `dtype` (floats to integers truncate, as in C;
    to fp8 rounding to nearest even and saturating to the largest finite
    value, PTX's cvt.rn.satfinite).

    Args:
        value: a scalar, index or Python number.
        dtype: the target dtype.
        round: TileLang's PTX rounding modifier: "" or "rn" (what tlc does);
            others ("rz", "rs", ...) are not supported by tlc.
        sat: True (saturate, what tlc's fp8 conversions do); False is not
            supported by tlc.
        rbits: the random bits of stochastic rounding; not supported by tlc.

    Example: `out[i] = T.cast(acc[i], "float16")`
    """
    raise outside_prim_func("cast")


@intrinsic
def reinterpret(value, dtype: str, span=None):
    """The bits of `value` read as `dtype`, of the same width (a float16's bits
    as uint16: CUDA's __half_as_ushort).

    Args:
        value: a run-time scalar.
        dtype: the new dtype, as many bits as the value's.
        span: TVM's source span; not used by tlc (None only).

    Example: `bits = T.reinterpret(T.cast(x, T.float16), T.uint16)`
    """
    raise outside_prim_func("reinterpret")


@intrinsic
def ceildiv(a: int, b: int) -> int:
    """The ceiling of a / b for integers: T.ceildiv(1000, 128) == 8.

    In a kernel it takes indices and sizes; in ordinary Python, plain ints
    (it is then tlc.cdiv).

    Args:
        a: the dividend.
        b: the divisor (not zero).

    Example: `with T.Kernel(T.ceildiv(N, 128)) as bx:`
    """
    return cdiv(a, b)


@intrinsic
def floordiv(a: int, b: int) -> int:
    """The floor of a / b for integers: T.floordiv(1000, 128) == 7.

    In a kernel it takes indices and sizes; in ordinary Python, plain ints.

    Args:
        a: the dividend.
        b: the divisor (not zero).

    Example: `row = T.floordiv(tx, 32)`
    """
    cdiv(a, b)  # the same argument checks as T.ceildiv
    return a // b


@intrinsic
def align_up(a: int, b: int) -> int:
    """a rounded up to a multiple of b, for integers: T.align_up(1000, 128) == 1024.

    In a kernel it takes indices and sizes; in ordinary Python, plain ints.

    Args:
        a: the value.
        b: the alignment (not zero).

    Example: `padded = T.align_up(seq_len, 64)`
    """
    return cdiv(a, b) * b


@intrinsic
def any_of(buffer) -> bool:
    """Whether any element of a buffer region is true (non-zero): a boolean every
    thread computes, reading each element (global tensors, shared and local
    buffers; at most 256 elements).

    Args:
        buffer: a buffer or a region of one (`mask[by, bx, k, :]`).

    Example: `if T.any_of(BlockMask[by, bx, k, :]):`
    """
    raise outside_prim_func("any_of")


@intrinsic
def all_of(buffer) -> bool:
    """Whether every element of a buffer region is true (non-zero); as T.any_of.

    Args:
        buffer: a buffer or a region of one.

    Example: `if T.all_of(valid[bx, :]):`
    """
    raise outside_prim_func("all_of")


@intrinsic
def sin(x):
    """The sine of a float value (radians).

    Args:
        x: a float scalar (or a Python number, folded at compile time).

    Example: `y[i] = T.sin(x[i] * theta)`
    """
    raise outside_prim_func("sin")


@intrinsic
def cos(x):
    """The cosine of a float value (radians).

    Args:
        x: a float scalar (or a Python number, folded at compile time).

    Example: `y[i] = T.cos(x[i] * theta)`
    """
    raise outside_prim_func("cos")


@intrinsic
def ceil(x):
    """The smallest integral value not below a float value, as a float.

    Args:
        x: a float scalar (or a Python number, folded at compile time).

    Example: `blocks[i] = T.ceil(n[i] / 64.0)`
    """
    raise outside_prim_func("ceil")


@intrinsic
def floor(x):
    """The largest integral value not above a float value, as a float.

    Args:
        x: a float scalar (or a Python number, folded at compile time).

    Example: `q[i] = T.floor(x[i] * 4.0)`
    """
    raise outside_prim_func("floor")


@intrinsic
def floormod(a: int, b: int) -> int:
    """a - b * floor(a / b) for integers: the remainder with the sign of b (Python's `%`),
    where a kernel's `%` on signed integers keeps the sign of a (C's).

    Args:
        a: the dividend (an index or integer scalar, or a Python int).
        b: the divisor (not zero).

    Example: `slot = T.floormod(k - 1, stages)`
    """
    raise outside_prim_func("floormod")


@intrinsic
def shift_left(a, b):
    """a << b for integers (TileLang's spelling of the operator).

    Args:
        a: an integer scalar, index or Python int.
        b: the shift, likewise.

    Example: `bit = T.shift_left(1, lane)`
    """
    raise outside_prim_func("shift_left")


@intrinsic
def shift_right(a, b):
    """a >> b for integers (arithmetic for signed, logical for unsigned), as the operator.

    Args:
        a: an integer scalar, index or Python int.
        b: the shift, likewise.

    Example: `hi = T.shift_right(word, 16)`
    """
    raise outside_prim_func("shift_right")
