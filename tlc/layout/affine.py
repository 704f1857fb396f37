"""Evaluates an MLIR affine map (the `map` of a #tile.layout) on integer arrays.

The map is parsed by MLIR's own parser (tlc.ir) and its result expressions
are walked: constants, dimensions, `+`, `*`, `floordiv`, `ceildiv` and `mod`
(with MLIR's semantics: `floordiv` rounds toward negative infinity, `mod` of a
positive divisor is never negative). Symbols are not allowed: a layout is a
function of (thread, register) alone.
"""

from __future__ import annotations

import numpy as np

from .errors import LayoutError


def parse_map(text: str):
    """`(d0, d1) -> (...)` (or `affine_map<...>`) as an ir.AffineMap."""
    from .. import ir

    body = text.strip()
    if not body.startswith("affine_map<"):
        body = f"affine_map<{body}>"
    with ir.Context():
        try:
            attr = ir.Attribute.parse(body)
        except ir.MLIRError as e:
            raise LayoutError(f"not an affine map: {text!r} ({e})") from None
        if not isinstance(attr, ir.AffineMapAttr):
            raise LayoutError(f"not an affine map: {text!r}")
        return attr.value


def evaluate(text: str, *dims) -> list[np.ndarray]:
    """The results of the affine map `text` at dimension values `dims` (ints or
    integer arrays, broadcast together): one int64 array per result."""
    from .. import ir

    amap = parse_map(text)
    if amap.n_symbols:
        raise LayoutError(f"the affine map {text!r} has symbols; a layout's map has none")
    if amap.n_dims != len(dims):
        raise LayoutError(f"the affine map {text!r} takes {amap.n_dims} dimensions, "
                          f"got {len(dims)} values")
    values = [np.asarray(d, dtype=np.int64) for d in dims]
    with amap.context:
        return [np.broadcast_to(_eval(ir, e, values), np.broadcast(*values).shape).copy()
                for e in amap.results]


def _eval(ir, expr, dims):
    if isinstance(expr, ir.AffineConstantExpr):
        return np.int64(expr.value)
    if isinstance(expr, ir.AffineDimExpr):
        return dims[expr.position]
    for cls, apply in _BINARY:
        if isinstance(expr, getattr(ir, cls)):
            return apply(_eval(ir, expr.lhs, dims), _eval(ir, expr.rhs, dims))
    raise LayoutError(f"unsupported affine expression {expr}")


def _ceildiv(a, b):
    return -np.floor_divide(-a, b)


_BINARY = (
    ("AffineAddExpr", np.add),
    ("AffineMulExpr", np.multiply),
    ("AffineFloorDivExpr", np.floor_divide),
    ("AffineCeilDivExpr", _ceildiv),
    ("AffineModExpr", np.mod),
)
