"""Shared buffers the program names only by column slices.

TileLang's DeepSeek sparse MLA keeps the query's two parts in one buffer,
`Q_shared = T.alloc_shared([H, D + D_tail], dtype)`, fills them with
`T.copy(Q[..., :D], Q_shared[:, :D])` and `T.copy(Q[..., D:], Q_shared[:, D:])`,
and multiplies each with its own gemm, `T.gemm(Q_shared[:, :D], KV_shared, S)`.

When every use of a 2-d shared buffer in its function is such a column slice
(all rows, compile-time bounds), the buffer itself as T.copy's (or
T.tma_copy's) source or destination, or another name for it (`O_shared = Q_shared`), and any two
slices are the same columns or disjoint ones, the buffer is allocated as one
buffer per slice (and per gap between slices when a whole copy takes every
column): each slice is then a whole buffer to every op (a gemm operand with
a layout of its own, a copy's destination), a whole copy is one copy per
slice, and no byte is shared between two of them, so the program means the
same. A buffer used any other way (an element access, a slice overlapping
another, a bound known only at run time, the buffer passed whole to another
op) is allocated as written, and a slice of it given to an op that takes
whole buffers is an error saying why.
"""

from __future__ import annotations

import ast

from .intrinsic_args import known_int
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
    if len(shape) != 2:
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
            if _copied_whole(parent, node):
                whole = True
                continue
            if (col := _column_slice(gen, parent, node, shape)) is None:
                return None
            ranges.add(col)
    if not ranges or ranges == {(0, shape[1])}:
        return None
    ordered = sorted(ranges)
    if any(a[1] > b[0] for a, b in zip(ordered, ordered[1:])):
        return None  # overlapping slices share bytes
    if whole:  # a whole copy takes every column: the gaps become pieces too
        edges = sorted({0, shape[1], *(e for r in ordered for e in r)})
        ordered = list(zip(edges, edges[1:]))
    return ordered


def _copied_whole(parent, node) -> bool:
    """Whether `node` is T.copy's (or T.tma_copy's) source or destination itself."""
    if not isinstance(parent, ast.Call):
        return False
    f = parent.func
    called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
    return called in ("copy", "tma_copy") and (node in parent.args[:2] or any(
        k.arg in ("src", "dst") and k.value is node for k in parent.keywords))


def _column_slice(gen, sub, node, shape):
    """(start, stop) of `sub`, the subscript `node[:, a:b]`, else None."""
    if not isinstance(sub, ast.Subscript) or sub.value is not node \
            or not isinstance(sub.slice, ast.Tuple) or len(sub.slice.elts) != 2:
        return None
    rows, cols = sub.slice.elts
    if not _whole(rows) or not isinstance(cols, ast.Slice) or cols.step is not None:
        return None
    lo, hi = _bound(gen, cols.lower, 0), _bound(gen, cols.upper, shape[1])
    if lo is None or hi is None or not 0 <= lo < hi <= shape[1]:
        return None
    return lo, hi


def piece_of(gen, node: ast.Subscript, pieces: ColumnPieces) -> BufferRef:
    """The buffer holding the column slice `node` of `pieces`."""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    cols = items[-1] if len(items) == 2 else None
    if cols is not None and _whole(items[0]) and isinstance(cols, ast.Slice) \
            and cols.step is None:
        key = (_bound(gen, cols.lower, 0), _bound(gen, cols.upper, pieces.shape[1]))
        if key in pieces.pieces:
            return pieces.pieces[key]
    raise gen.error(node, f"this is not one of the column slices {pieces!r} was split "
                          "into when it was allocated")


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
