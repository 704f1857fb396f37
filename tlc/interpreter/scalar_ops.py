"""arith and math ops, elementwise on numpy values.

A value is a Python int (index), a numpy scalar, or, inside a tile.parallel
body, a numpy array broadcast over the loop's iteration space; the same
function serves all three. Results of bfloat16 and float8 type are rounded
to their type (numerics.ElementType.make).
"""

from __future__ import annotations

import numpy as np

from .. import ir
from .numerics import convert, float_to_int
from .program import handles

_CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
         "ule", "une", "uno", "true"]


def _unsigned(x, t):
    """x's bits as an unsigned integer (for the *ui ops)."""
    if t.kind == "x":
        return x  # indices are non-negative where unsigned ops apply
    return np.asarray(x).astype(t.dtype).view(t.unsigned) if np.ndim(x) else \
        np.asarray(x).astype(t.dtype).view(t.unsigned)[()]


def _trunc_div(a, b):
    q = a // b
    return q + ((a % b != 0) & ((a < 0) != (b < 0)))


def _ceil_div(a, b):
    return -(-a // b)


def _check_divisor(site, st, b):
    zero = np.equal(b, 0)
    if st.mask is not None:
        zero = zero & st.mask
    if np.any(zero):
        raise site.error("integer division by zero", st.block)


def _int_binary(fn, unsigned=False, divide=False):
    def handler(c, op):
        a, b, out = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.result)
        t = c.etype(op, op.result.type)
        site = c.site(op)

        def step(st):
            env = st.env
            x, y = env[a], env[b]
            if divide:
                _check_divisor(site, st, y)
                if np.ndim(y):
                    y = np.where(np.equal(y, 0), 1, y)  # inactive lanes only
            if unsigned:
                x, y = _unsigned(x, t), _unsigned(y, t)
            env[out] = t.make(fn(x, y))

        return step

    return handler


def _float_binary(fn):
    def handler(c, op):
        a, b, out = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.result)
        t = c.etype(op, op.result.type)
        rnd = t.round

        if rnd is None:
            def step(st):
                env = st.env
                env[out] = fn(env[a], env[b])
        else:
            def step(st):
                env = st.env
                env[out] = rnd(fn(env[a], env[b]))
        return step

    return handler


def _unary(fn):
    def handler(c, op):
        a, out = c.slot(op.operands[0]), c.slot(op.result)
        t = c.etype(op, op.result.type)

        def step(st):
            st.env[out] = t.make(fn(st.env[a]))

        return step

    return handler


_FLOAT_BINARY = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
    "arith.divf": np.divide, "arith.remf": np.fmod, "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum, "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
    "math.powf": np.power, "math.atan2": np.arctan2, "math.copysign": np.copysign,
}
for _name, _fn in _FLOAT_BINARY.items():
    handles(_name)(_float_binary(_fn))

_INT_BINARY = {
    "arith.addi": (lambda a, b: a + b, False, False),
    "arith.subi": (lambda a, b: a - b, False, False),
    "arith.muli": (lambda a, b: a * b, False, False),
    "arith.divsi": (_trunc_div, False, True),
    "arith.remsi": (lambda a, b: a - b * _trunc_div(a, b), False, True),
    "arith.floordivsi": (lambda a, b: a // b, False, True),
    "arith.ceildivsi": (_ceil_div, False, True),
    "arith.divui": (lambda a, b: a // b, True, True),
    "arith.remui": (lambda a, b: a % b, True, True),
    "arith.ceildivui": (_ceil_div, True, True),
    "arith.andi": (lambda a, b: a & b, False, False),
    "arith.ori": (lambda a, b: a | b, False, False),
    "arith.xori": (lambda a, b: a ^ b, False, False),
    "arith.shli": (lambda a, b: a << b, False, False),
    "arith.shrsi": (lambda a, b: a >> b, False, False),
    "arith.shrui": (lambda a, b: a >> b, True, False),
    "arith.maxsi": (np.maximum, False, False),
    "arith.minsi": (np.minimum, False, False),
    "arith.maxui": (np.maximum, True, False),
    "arith.minui": (np.minimum, True, False),
}
for _name, (_fn, _uns, _div) in _INT_BINARY.items():
    handles(_name)(_int_binary(_fn, _uns, _div))


def _rsqrt(x):
    return 1 / np.sqrt(x)


_UNARY = {
    "arith.negf": np.negative, "math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log,
    "math.log2": np.log2, "math.log10": np.log10, "math.log1p": np.log1p,
    "math.expm1": np.expm1, "math.sqrt": np.sqrt, "math.rsqrt": _rsqrt, "math.absf": np.abs,
    "math.absi": np.abs, "math.tanh": np.tanh, "math.sin": np.sin, "math.cos": np.cos,
    "math.tan": np.tan, "math.atan": np.arctan, "math.floor": np.floor, "math.ceil": np.ceil,
    "math.trunc": np.trunc, "math.roundeven": np.rint,
    "math.round": lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x),
}
for _name, _fn in _UNARY.items():
    handles(_name)(_unary(_fn))


@handles("math.fma")
def _fma(c, op):
    a, b, d, out = (c.slot(v) for v in (*op.operands, op.result))
    t = c.etype(op, op.result.type)

    def step(st):
        env = st.env
        wide = np.float64 if t.bits <= 32 else np.longdouble  # one rounding, as fma
        env[out] = t.make(np.asarray(env[a], wide) * env[b] + env[d])

    return step


@handles("arith.constant")
def _constant(c, op):
    out = c.slot(op.result)
    attr = op.attributes["value"]
    t = c.etype(op, op.result.type)
    if isinstance(attr, ir.FloatAttr):
        value = t.make(attr.value)
    elif isinstance(attr, ir.BoolAttr):
        value = np.bool_(attr.value)
    elif isinstance(attr, ir.IntegerAttr):
        value = t.make(attr.value) if t.kind != "b" else np.bool_(attr.value)
    else:
        raise c.site(op).error(f"the interpreter does not support the constant {attr}")

    def step(st):
        st.env[out] = value

    return step


@handles("arith.cmpi")
def _cmpi(c, op):
    a, b, out = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.result)
    pred = _CMPI[ir.IntegerAttr(op.attributes["predicate"]).value]
    t = c.etype(op, op.operands[0].type)
    fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
          "gt": np.greater, "ge": np.greater_equal}[pred[-2:] if pred not in ("eq", "ne")
                                                    else pred]
    unsigned = pred[0] == "u"

    def step(st):
        env = st.env
        x, y = env[a], env[b]
        if unsigned:
            x, y = _unsigned(x, t), _unsigned(y, t)
        env[out] = fn(x, y)

    return step


@handles("arith.cmpf")
def _cmpf(c, op):
    a, b, out = c.slot(op.operands[0]), c.slot(op.operands[1]), c.slot(op.result)
    pred = _CMPF[ir.IntegerAttr(op.attributes["predicate"]).value]

    def compare(x, y):
        if pred in ("false", "true"):
            return np.full(np.broadcast_shapes(np.shape(x), np.shape(y)), pred == "true")
        unordered = np.isnan(x) | np.isnan(y)
        if pred == "ord":
            return ~unordered
        if pred == "uno":
            return unordered
        base = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
                "le": np.less_equal, "ne": np.not_equal}[pred[1:]]
        r = base(x, y)
        return (r & ~unordered) if pred[0] == "o" else (r | unordered)

    def step(st):
        env = st.env
        env[out] = compare(env[a], env[b])

    return step


@handles("arith.select")
def _select(c, op):
    cond, a, b, out = (c.slot(v) for v in (*op.operands, op.result))
    t = c.etype(op, op.result.type)

    def step(st):
        env = st.env
        p = env[cond]
        if np.ndim(p) == 0:
            env[out] = env[a] if p else env[b]
        else:
            env[out] = t.make(np.where(p, env[a], env[b]))

    return step


def _cast(kind: str):
    def handler(c, op):
        a, out = c.slot(op.operands[0]), c.slot(op.result)
        src = c.etype(op, op.operands[0].type)
        dst = c.etype(op, op.result.type)

        if kind == "float":  # extf, truncf, sitofp, fptosi, index_cast, extsi, trunci
            def fn(x):
                return convert(x, src, dst)
        elif kind == "uitofp":
            def fn(x):
                return dst.make(np.asarray(_unsigned(x, src)).astype(np.float64))
        elif kind == "fptoui":
            def fn(x):
                return float_to_int(x, dst, unsigned=True)
        elif kind == "extui":
            def fn(x):
                if src.kind == "b":
                    return dst.make(np.asarray(x).astype(np.int64))
                return dst.make(np.asarray(_unsigned(x, src)).astype(np.int64))
        elif kind == "bitcast":
            if src.round or dst.round:
                raise c.site(op).error(f"the interpreter cannot bitcast {src.describe()} to "
                                       f"{dst.describe()}")

            def fn(x):
                arr = np.asarray(x, dtype=src.dtype)
                r = arr.view(dst.dtype)
                return r if r.ndim else r[()]
        else:
            raise AssertionError(kind)

        def step(st):
            st.env[out] = fn(st.env[a])

        return step

    return handler


for _name in ("arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi", "arith.extsi",
              "arith.trunci", "arith.index_cast"):
    handles(_name)(_cast("float"))
handles("arith.uitofp")(_cast("uitofp"))
handles("arith.fptoui")(_cast("fptoui"))
handles("arith.extui", "arith.index_castui")(_cast("extui"))
handles("arith.bitcast")(_cast("bitcast"))
