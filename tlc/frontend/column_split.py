"""Shared buffers the program names only by column slices.

TileLang's DeepSeek sparse MLA keeps the query's two parts in one buffer,
`Q_shared = T.alloc_shared([H, D + D_tail], dtype)`, fills them with
`T.copy(Q[..., :D], Q_shared[:, :D])` and `T.copy(Q[..., D:], Q_shared[:, D:])`,
and multiplies each with its own gemm, `T.gemm(Q_shared[:, :D], KV_shared, S)`.

When every use of a shared buffer in its function is such a column slice
(all rows, compile-time bounds; of a buffer of 3 or more dimensions also
`KV_s[stage, :, :D]`, the columns of one stage), the buffer itself as
T.copy's (or T.tma_copy's) source or destination, an element access
(`KV_s[stage, r, c]`, TileLang's per-thread producers' copies), or another
name for it (`O_shared = Q_shared`), and any two slices are the same
columns or disjoint ones, the buffer is allocated as one buffer per slice
(and per gap between slices when a whole copy or an element access may
touch every column): each slice is then a whole buffer to every op (a gemm
operand with a layout of its own, a copy's destination), a whole copy is
one copy per slice, an element access reaches the piece holding its column
(chosen by comparisons where the column is a run-time value), and no byte
is shared between two of them, so the program means the same. A buffer
used any other way (a slice overlapping another, a bound known only at run
time, the buffer passed whole to another op) is allocated as written, and
a slice of it given to an op that takes whole buffers is an error saying
why.
"""

from __future__ import annotations

import ast

from .intrinsic_args import called_name, known_int
from .values import BufferRef


class ColumnPieces:
    """A shared buffer allocated as one buffer per column slice the program
    names: {(start, stop): BufferRef}."""

    def __init__(self, name: str, shape, dtype: str, pieces: dict):
        self.name = name
        self.shape = list(shape)
        self.dtype = dtype
        self.pieces = pieces

    def __repr__(self) -> str:
        ranges = ", ".join(f"[:, {lo}:{hi}]" for lo, hi in sorted(self.pieces))
        return f"the shared buffer '{self.name}' (named by its column slices {ranges})"


def _parents(gen, scope: ast.AST) -> dict:
    """Each node of `scope`'s AST -> its parent (kept per scope while the
    program is built; the scope itself is kept with it, so its id stays its)."""
    cache = gen.__dict__.setdefault("_column_split_parents", {})
    if id(scope) not in cache:
        parents = {child: node for node in ast.walk(scope)
                   for child in ast.iter_child_nodes(node)}
        cache[id(scope)] = (scope, parents)
    return cache[id(scope)][1]


def _whole(item) -> bool:
    return isinstance(item, ast.Slice) and item.lower is None and item.upper is None \
        and item.step is None


def _bound(gen, node, default: int):
    """A slice bound's compile-time value (`default` when absent), else None."""
    return default if node is None else known_int(gen, node)


def column_ranges(gen, name: str, shape) -> list[tuple[int, int]] | None:
    """The column slices `(start, stop)` of the 2-d shared buffer `name`, about
    to be allocated by the statement being built, when its function names it
    by those only (see the module's description); else None."""
    if len(shape) < 2:
        return None
    stmt = gen.statement
    scope = gen.macros[-1].node if gen.macros else gen.prim.node
    parents = _parents(gen, scope)
    ranges, whole = set(), False
    names, assigns = [name], {stmt}  # the buffer's names: aliases `O_s = Q_s` too
    for current in names:
        for node in ast.walk(scope):
            if not isinstance(node, ast.Name) or node.id != current:
                continue
            if isinstance(node.ctx, ast.Store):
                if parents.get(node) not in assigns:
                    return None  # assigned elsewhere too
                continue
            parent = parents.get(node)
            if isinstance(parent, ast.Assign) and parent.value is node and \
                    len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                if parent.targets[0].id not in names:  # an alias: its uses are the buffer's
                    names.append(parent.targets[0].id)
                    assigns.add(parent)
                continue
            if _copied_whole(parent, node) or _element(parent, node, shape):
                whole = True  # every column may be read or written: the gaps are pieces
                continue
            if (col := _column_slice(gen, parent, node, shape)) is None:
                return None
            ranges.add(col)
    if not ranges or ranges == {(0, shape[-1])}:
        return None
    ordered = sorted(ranges)
    if any(a[1] > b[0] for a, b in zip(ordered, ordered[1:])):
        return None  # overlapping slices share bytes
    if whole:  # a whole copy takes every column: the gaps become pieces too
        edges = sorted({0, shape[-1], *(e for r in ordered for e in r)})
        ordered = list(zip(edges, edges[1:]))
    return ordered


def _copied_whole(parent, node) -> bool:
    """Whether `node` is T.copy's (or T.tma_copy's) source or destination itself."""
    return called_name(parent) in ("copy", "tma_copy") and (node in parent.args[:2] or any(
        k.arg in ("src", "dst") and k.value is node for k in parent.keywords))


def _element(sub, node, shape) -> bool:
    """Whether `sub` is an element access `node[i, ..., c]` (one index a
    dimension, no slice)."""
    if not isinstance(sub, ast.Subscript) or sub.value is not node:
        return False
    items = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    return len(items) == len(shape) and not any(isinstance(i, ast.Slice) for i in items)


def _column_slice(gen, sub, node, shape):
    """(start, stop) of `sub`, the subscript `node[:, a:b]` (of an N-d buffer,
    `node[:, ..., :, a:b]`, or `node[k, :, ..., a:b]`: columns of one stage),
    else None."""
    if not isinstance(sub, ast.Subscript) or sub.value is not node \
            or not isinstance(sub.slice, ast.Tuple) or len(sub.slice.elts) != len(shape):
        return None
    *lead, cols = sub.slice.elts
    # `[:, ..., a:b]`, or `[k, :, ..., a:b]` of a buffer of 3 or more dimensions
    # (its first one stages; of a 2-d buffer, `[i, a:b]` is part of a row)
    stage = not isinstance(lead[0], ast.Slice) and len(shape) >= 3
    if not all(map(_whole, lead[1:])) or not (stage or _whole(lead[0])):
        return None
    if not isinstance(cols, ast.Slice) or cols.step is not None:
        return None
    lo, hi = _bound(gen, cols.lower, 0), _bound(gen, cols.upper, shape[-1])
    if lo is None or hi is None or not 0 <= lo < hi <= shape[-1]:
        return None
    return lo, hi


def piece_of(gen, node: ast.Subscript, pieces: ColumnPieces) -> BufferRef:
    """The buffer holding the column slice `node` of `pieces` (one stage of
    it for `[k, :, ..., a:b]`)."""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    cols = items[-1] if len(items) == len(pieces.shape) else None
    if cols is not None and isinstance(cols, ast.Slice) and cols.step is None and \
            all(map(_whole, items[1:-1])):
        key = (_bound(gen, cols.lower, 0), _bound(gen, cols.upper, pieces.shape[-1]))
        if key in pieces.pieces:
            piece = pieces.pieces[key]
            if _whole(items[0]):
                return piece
            if not isinstance(items[0], ast.Slice) and len(pieces.shape) >= 3:
                from .stages import stage_view

                return stage_view(gen, node, piece, items[0])
    raise gen.error(node, f"this is not one of the column slices {pieces!r} was split "
                          "into when it was allocated")


def element_indices(gen, node: ast.Subscript, pieces: ColumnPieces) -> list:
    """The indices of the element `node` (`buf[i, ..., c]`) of a buffer split
    by its column slices, checked; an error for anything but one index a
    dimension."""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(items) != len(pieces.shape) or any(isinstance(i, ast.Slice) for i in items):
        raise gen.error(node, f"{pieces!r} is read or written an element at a time with one "
                              f"index per dimension ({len(pieces.shape)})")
    return [gen.check_index(gen.eval(i), i, "an index") for i in items]


def route(gen, node: ast.Subscript, pieces: ColumnPieces, build, result_type=None,
          indices=None):
    """`build(piece, indices)` for the element `node` (`buf[i, ..., c]`) of a
    buffer split by its column slices, in the piece holding column c at c's
    place in it: chosen here for a compile-time c, else by comparisons of c
    at run time. `result_type`: the type of the value `build` returns (a
    load), else None (a store); `indices`: the element's indices where
    already evaluated."""
    from ..dialects import arith, scf
    from .. import ir
    from .values import Affine, Scalar, index_value

    if indices is None:
        indices = element_indices(gen, node, pieces)
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    ordered = sorted(pieces.pieces.items())
    col = indices[-1]
    if isinstance(col, int):
        for (lo, hi), piece in ordered:
            if lo <= col < hi:
                return build(piece, [*indices[:-1], col - lo])
        raise gen.error(items[-1], f"column {col} is outside {pieces!r}")
    c = index_value(col)

    def chain(k):
        (lo, hi), piece = ordered[k]
        at = [*indices[:-1], Affine.leaf(c) - lo]
        if k == len(ordered) - 1:
            return build(piece, at)
        below = arith.cmpi(arith.CmpIPredicate.ult, c, arith.constant(ir.IndexType.get(), hi))
        branch = scf.IfOp(below, [result_type] if result_type else [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            v = build(piece, at)
            scf.YieldOp([v.value] if result_type else [])
        with ir.InsertionPoint(branch.else_block):
            v = chain(k + 1)
            scf.YieldOp([v.value if isinstance(v, Scalar) else v] if result_type else [])
        return Scalar(branch.results[0], v.dtype) if result_type else None

    return chain(0)


def check_whole_operand(gen, node, what: str) -> None:
    """An op taking whole buffers (a gemm operand) given a slice of a buffer that
    is not split by its slices: an error saying when such slices are taken."""
    if not isinstance(node, ast.Subscript):
        return
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not any(isinstance(i, ast.Slice) for i in items):
        return
    base = gen.eval(node.value)
    if isinstance(base, BufferRef) and base.place == "shared" and \
            not whole_slices(gen, node, base):
        raise gen.error(node, f"{what} is a slice of the shared buffer '{base.name}': tlc takes "
                              "slices of a buffer as operands when every use of it in the "
                              "function is a column slice (all rows, compile-time bounds, any "
                              "two the same columns or disjoint), each then its own buffer; "
                              f"'{base.name}' is used otherwise (an element access, an "
                              "overlapping or run-time slice, or the whole buffer)")


def whole_slices(gen, node: ast.Subscript, buf: BufferRef) -> bool:
    """Whether `node` slices every dimension of `buf` whole (`A_s[:M, :K]`,
    `A_s[0:M, :]`, TileLang's alias of a buffer), with compile-time bounds."""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(items) != buf.rank or buf.static_shape() is None:
        return False
    for item, size in zip(items, buf.shape):
        if not isinstance(item, ast.Slice) or item.step is not None:
            return False
        lo = 0 if item.lower is None else known_int(gen, item.lower)
        hi = size if item.upper is None else known_int(gen, item.upper)
        if lo != 0 or hi != size:
            return False
    return True
