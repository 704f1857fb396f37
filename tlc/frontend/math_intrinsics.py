"""The math intrinsics: T.exp, exp2, log, log2, sqrt, rsqrt, sin, cos, ceil, floor, sigmoid,
abs, max, min, if_then_else, infinity, cast (and T.float16(x)-style casts), ceildiv, floordiv,
floormod, shift_left, shift_right.

Each folds Python numbers at compile time and builds arith/math ops on run-time
values.
"""

from __future__ import annotations

import ast
import math as pymath

from ..dialects import arith, math
from ..language import scalar_math
from ..language.types import dtype as DType
from . import dtypes
from .intrinsic_args import bind_args as _args
from .intrinsic_args import parse_dtype as _dtype
from .values import Affine, Scalar, index_value

def _float_unary(gen, node, name: str, py, mlir_op):
    a = _args(gen, node, getattr(scalar_math, name))
    x = gen.eval(a["x"])
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return py(x)
    if not (isinstance(x, Scalar) and dtypes.is_float(x.dtype)):
        raise gen.error(node, f"T.{name} needs a float value, got {gen.describe(x)}")
    return Scalar(mlir_op(x.value), x.dtype)


def call_exp(gen, node):
    return _float_unary(gen, node, "exp", pymath.exp, math.exp)


def call_exp2(gen, node):
    return _float_unary(gen, node, "exp2", lambda v: 2.0 ** v, math.exp2)


def call_log(gen, node):
    return _float_unary(gen, node, "log", pymath.log, math.log)


def call_log2(gen, node):
    return _float_unary(gen, node, "log2", pymath.log2, math.log2)


def call_sqrt(gen, node):
    return _float_unary(gen, node, "sqrt", pymath.sqrt, math.sqrt)


def call_rsqrt(gen, node):
    return _float_unary(gen, node, "rsqrt", lambda v: 1 / pymath.sqrt(v), math.rsqrt)


def call_sin(gen, node):
    return _float_unary(gen, node, "sin", pymath.sin, math.sin)


def call_cos(gen, node):
    return _float_unary(gen, node, "cos", pymath.cos, math.cos)


def call_ceil(gen, node):
    return _float_unary(gen, node, "ceil", lambda v: float(pymath.ceil(v)), math.ceil)


def call_floor(gen, node):
    return _float_unary(gen, node, "floor", lambda v: float(pymath.floor(v)), math.floor)


def call_sigmoid(gen, node):
    a = _args(gen, node, scalar_math.sigmoid)
    x = gen.eval(a["x"])
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return 1.0 / (1.0 + pymath.exp(-x))
    if not (isinstance(x, Scalar) and dtypes.is_float(x.dtype)):
        raise gen.error(node, f"T.sigmoid needs a float value, got {gen.describe(x)}")
    one = arith.constant(x.value.type, 1.0)
    return Scalar(arith.divf(one, arith.addf(one, math.exp(arith.negf(x.value)))), x.dtype)


def call_abs(gen, node):
    a = _args(gen, node, scalar_math.abs)
    x = gen.eval(a["x"])
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return abs(x)
    if not isinstance(x, Scalar):
        raise gen.error(node, f"T.abs needs a number, got {gen.describe(x)}")
    return Scalar((math.absf if dtypes.is_float(x.dtype) else math.absi)(x.value), x.dtype)


def _minmax(gen, node, name: str):
    if len(node.args) < 2 or node.keywords:
        raise gen.error(node, f"T.{name} takes two or more values")
    values = [gen.eval(v) for v in node.args]
    result = values[0]
    for v in values[1:]:
        result = _minmax2(gen, node, name, result, v)
    return result


def _minmax2(gen, node, name, a, b):
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
        return (max if name == "max" else min)(a, b)
    if all(isinstance(v, (int, Affine)) and not isinstance(v, bool) for v in (a, b)):
        op = arith.maxsi if name == "max" else arith.minsi
        return Affine.leaf(op(index_value(a), index_value(b)))
    dt = gen.result_dtype(a, b, node)
    if dtypes.is_fp8(dt):  # compared in float32 (exact), the result one of the two
        wide = _minmax2(gen, node, name, Scalar(gen.to_value(a, "float32", node), "float32"),
                        Scalar(gen.to_value(b, "float32", node), "float32"))
        return Scalar(gen.to_value(wide, dt, node), dt)
    va, vb = gen.to_value(a, dt, node), gen.to_value(b, dt, node)
    if dtypes.is_float(dt):
        op = arith.maximumf if name == "max" else arith.minimumf
    elif dtypes.is_unsigned(dt):
        op = arith.maxui if name == "max" else arith.minui
    else:
        op = arith.maxsi if name == "max" else arith.minsi
    return Scalar(op(va, vb), dt)


def call_max(gen, node):
    return _minmax(gen, node, "max")


def call_min(gen, node):
    return _minmax(gen, node, "min")


def call_clamp(gen, node):
    a = _args(gen, node, scalar_math.clamp)
    value, lo, hi = (gen.eval(a[k]) for k in ("dst", "min_val", "max_val"))
    return _minmax2(gen, node, "max", _minmax2(gen, node, "min", value, hi), lo)


def call_if_then_else(gen, node):
    a = _args(gen, node, scalar_math.if_then_else)
    cond = gen.eval(a["cond"])
    then, other = gen.eval(a["t"]), gen.eval(a["f"])
    if not isinstance(cond, Scalar):
        return then if cond else other
    return gen.select(cond, then, other, node)


def call_infinity(gen, node):
    a = _args(gen, node, scalar_math.infinity)
    dt = _dtype(gen, a["dtype"])
    if not dt.is_float:
        raise gen.error(node, f"T.infinity needs a float dtype, got {dt}")
    return Scalar(arith.constant(dtypes.mlir_type(dt), float("inf")), str(dt))


def cast_to(gen, x, dt, node):
    dt = str(DType(dt))
    if isinstance(x, (int, float)):
        if isinstance(x, float) and not dtypes.is_float(dt) and dt != "bool":
            x = int(x)  # an explicit cast truncates, as C does
        return Scalar(gen.to_value(x, dt, node), dt)
    if isinstance(x, Affine):
        x = Scalar(x.materialize(), "index")
    if not isinstance(x, Scalar):
        raise gen.error(node, f"cannot cast {gen.describe(x)}")
    return Scalar(gen.convert(x, dt), dt)


def call_Cast(gen, node):  # noqa: N802 (TileLang's T.Cast)
    a = _args(gen, node, scalar_math.Cast)
    return cast_to(gen, gen.eval(a["value"]), _dtype(gen, a["dtype"]), node)


def call_cast(gen, node):
    a = _args(gen, node, scalar_math.cast, {"rbits": "stochastic rounding"})
    if gen.eval_static(a["round"]) not in ("", "rn"):
        raise gen.error(a["round"], f"T.cast: round={gen.eval_static(a['round'])!r} is not "
                                    "supported by tlc (it rounds to nearest even, \"rn\")")
    if gen.eval_static(a["sat"]) is not True:
        raise gen.error(a["sat"], "T.cast: sat=False is not supported by tlc (its fp8 "
                                  "conversions saturate)")
    dt = _dtype(gen, a["dtype"])
    return cast_to(gen, gen.eval(a["value"]), dt, node)


def call_reinterpret(gen, node):
    a = _args(gen, node, scalar_math.reinterpret, {"span": "TVM's source spans"})
    return _reinterpret(gen, node, a["value"], a["dtype"], "T.reinterpret")


def call_tirx_reinterpret(gen, node):
    """tlc.tirx.reinterpret(dtype, value): TVM's order."""
    from .. import tirx

    a = _args(gen, node, tirx.reinterpret)
    return _reinterpret(gen, node, a["value"], a["dtype"], "tirx.reinterpret")


def call_tirx_const(gen, node):
    """tlc.tirx.const(value, dtype): a constant of that dtype."""
    from .. import tirx

    a = _args(gen, node, tirx.const)
    value = gen.eval(a["value"])
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise gen.error(a["value"], f"tirx.const takes a Python number, got "
                                    f"{gen.describe(value)}")
    return cast_to(gen, value, _dtype(gen, a["dtype"]), node)


def _reinterpret(gen, node, value_node, dtype_node, what: str):
    dt = str(DType(_dtype(gen, dtype_node)))
    x = gen.eval(value_node)
    if not isinstance(x, Scalar) or x.dtype == "index":
        raise gen.error(value_node, f"{what} takes a run-time scalar of a dtype, got "
                                    f"{gen.describe(x)} (cast it to a dtype first)")
    bits = DType(x.dtype).bits
    if bits != DType(dt).bits:
        raise gen.error(node, f"{what} of a {x.dtype} ({bits} bits) as {dt} "
                              f"({DType(dt).bits} bits): the widths must match")
    storage = dtypes.storage_type(dt)
    value = x.value if x.value.type == storage else arith.bitcast(storage, x.value)
    return Scalar(value, dt)


def _floormod(x, y):
    """x - y * floordiv(x, y) on index values: the remainder with y's sign."""
    return arith.subi(x, arith.muli(arith.floordivsi(x, y), y))


# T.ceildiv, T.floordiv, T.floormod, T.align_up: (folded on Python ints, built on index
# values).
_INTEGER_DIVISIONS = {
    "ceildiv": (lambda x, y: -(-x // y), arith.ceildivsi),
    "floordiv": (lambda x, y: x // y, arith.floordivsi),
    "floormod": (lambda x, y: x % y, _floormod),
    "align_up": (lambda x, y: -(-x // y) * y, lambda x, y: arith.muli(arith.ceildivsi(x, y), y)),
}


def _divide(gen, node, name: str):
    a = _args(gen, node, getattr(scalar_math, name))
    x, y = gen.eval(a["a"]), gen.eval(a["b"])
    what = f"T.{name}"
    if isinstance(y, int) and not isinstance(y, bool) and y == 0:
        raise gen.error(a["b"], f"{what} by zero")
    fold, build = _INTEGER_DIVISIONS[name]
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (x, y)):
        return fold(x, y)
    if any(isinstance(v, Scalar) and not dtypes.is_int(v.dtype) for v in (x, y)):
        raise gen.error(node, f"{what} takes integers (indices, integer scalars)")
    vx = gen.index(x, a["a"], f"{what}'s first argument")
    vy = gen.index(y, a["b"], f"{what}'s second argument")
    return Affine.leaf(build(vx, vy))


def call_ceildiv(gen, node):
    return _divide(gen, node, "ceildiv")


def call_floordiv(gen, node):
    return _divide(gen, node, "floordiv")


def call_floormod(gen, node):
    return _divide(gen, node, "floormod")


def call_align_up(gen, node):
    return _divide(gen, node, "align_up")


def _shift(gen, node, name: str, op):
    a = _args(gen, node, getattr(scalar_math, name))
    return gen.binop(op(), gen.eval(a["a"]), gen.eval(a["b"]), node)


def call_shift_left(gen, node):
    return _shift(gen, node, "shift_left", ast.LShift)


def call_shift_right(gen, node):
    return _shift(gen, node, "shift_right", ast.RShift)
