"""TileLang's per-thread copies: T.access_ptr, T.ptx_cp_async,
T.cp_async_barrier_noinc.

A producer written thread by thread (TileLang's MLA-decode and sparse-MLA
kernels) has each thread copy 16-byte pieces of rows from global memory into
a stage of a shared buffer with `cp.async`, then arrive at the stage's
barrier once they have landed (`cp.async.mbarrier.arrive.noinc`). tlc builds
each copy as the thread's own loads and stores of those elements, complete
when the statement ends, and the arrival as the thread's T.barrier_arrive:
the consumers waiting on the barrier then see the data, as on the GPU.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from ..dialects import scf
from .. import ir
from ..language import warp_specialize
from .column_split import ColumnPieces, element_indices, route
from .intrinsic_args import bind_args
from .values import Affine, BufferRef, Scalar, index_value
from . import dtypes

_MODES = {"r": 1, "w": 2, "rw": 3, 1: 1, 2: 2, 3: 3}


@dataclass(eq=False)
class ElementPtr:
    """T.access_ptr's value: an element of a buffer and what may be done there."""

    buf: BufferRef  # or the ColumnPieces of a buffer split by its column slices
    indices: list
    mode: int  # 1 read, 2 write, 3 both
    extent: int | None
    node: ast.AST
    element: ast.Subscript  # the element's subscript

    def __repr__(self) -> str:
        return "a T.access_ptr pointer (in tlc only T.ptx_cp_async's operand)"

    @property
    def place(self) -> str:
        return "shared" if isinstance(self.buf, ColumnPieces) else self.buf.place

    @property
    def dtype(self) -> str:
        return self.buf.dtype

    def store(self, gen, e: int, value, node) -> None:
        at = _at(self.indices, e)
        if isinstance(self.buf, ColumnPieces):
            route(gen, self.element, self.buf,
                  lambda piece, idx: gen.store_element(piece, idx, value, node), indices=at)
        else:
            gen.store_element(self.buf, at, value, node)


def call_access_ptr(gen, node):
    a = bind_args(gen, node, warp_specialize.access_ptr)
    base = a["base"]
    if not isinstance(base, ast.Subscript):
        raise gen.error(base, "T.access_ptr takes an element of a buffer (`A[i, j]`)")
    pieces = gen.eval(base.value) if isinstance(base.value, ast.Name) else None
    if isinstance(pieces, ColumnPieces):  # a buffer split by its column slices
        buf, indices = pieces, element_indices(gen, base, pieces)
    else:
        buf, indices = gen.subscript(base)
    if not isinstance(buf, ColumnPieces) and buf.place not in ("shared", "global"):
        raise gen.error(base, f"T.access_ptr takes an element of a shared buffer or a global "
                              f"tensor, got {gen.describe(buf)}")
    mode = gen.eval_static(a["access_type"])
    if mode not in _MODES:
        raise gen.error(a["access_type"], f"access_type is \"r\", \"w\" or \"rw\" (1, 2, 3), "
                                          f"got {mode!r}")
    for name in ("offset", "ignore_last_ndim"):
        if name in a.given and gen.eval_static(a[name]) != 0:
            raise gen.error(a[name], f"T.access_ptr's {name} is only 0 in tlc")
    extent = None
    if "extent" in a.given and gen.eval_static(a["extent"]) is not None:
        extent = gen.eval_int(a["extent"], "extent")
    elif a["extents"]:
        extent = math.prod(gen.eval_int(e, "an extent") for e in a["extents"])
    return ElementPtr(buf, list(indices), _MODES[mode], extent, node, base)


def _pointer(gen, node, what: str, mode: int, place: str) -> ElementPtr:
    p = gen.eval(node)
    if not isinstance(p, ElementPtr):
        raise gen.error(node, f"T.ptx_cp_async's {what} is a T.access_ptr, got "
                              f"{gen.describe(p)}")
    if p.place != place:
        raise gen.error(node, f"T.ptx_cp_async copies global memory into shared memory: its "
                              f"{what} is {gen.describe(p.buf)}")
    if not p.mode & mode:
        raise gen.error(node, f"T.ptx_cp_async {'writes' if mode == 2 else 'reads'} through "
                              f"its {what}, a T.access_ptr made for "
                              f"{'reading' if p.mode == 1 else 'writing'} only")
    return p


def _at(indices: list, e: int) -> list:
    """`indices` moved `e` elements along the last dimension."""
    last = indices[-1]
    if isinstance(last, Scalar):
        last = Affine.leaf(index_value(last))
    return [*indices[:-1], last + e]


def call_ptx_cp_async(gen, node):
    gen.require_kernel(node, "T.ptx_cp_async")
    a = bind_args(gen, node, warp_specialize.ptx_cp_async)
    dst = _pointer(gen, a["dst_access_ptr"], "destination", 2, "shared")
    src = _pointer(gen, a["src_access_ptr"], "source", 1, "global")
    if dst.dtype != src.dtype:
        raise gen.error(node, f"T.ptx_cp_async copies between buffers of one dtype, got "
                              f"{src.dtype} into {dst.dtype}")
    n = gen.eval_int(a["num_elems"], "num_elems")
    size = dtypes.bits(src.dtype) // 8 * n
    if size not in (4, 8, 16):
        raise gen.error(a["num_elems"], f"T.ptx_cp_async moves 4, 8 or 16 bytes; {n} "
                                        f"{src.dtype} elements are {size}")
    for p, what in ((dst, "destination"), (src, "source")):
        if p.extent is not None and p.extent < n:
            raise gen.error(p.node, f"T.ptx_cp_async copies {n} elements, past the {what} "
                                    f"pointer's extent of {p.extent}")
    pred = None
    if "predicate" in a.given and a["predicate"] is not None:
        pred = gen.to_value(gen.eval(a["predicate"]), "bool", a["predicate"])
    with gen.loc(node):
        if pred is None:
            for e in range(n):
                dst.store(gen, e, gen.load_element(src.buf, _at(src.indices, e)), node)
            return
        branch = scf.IfOp(pred, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            for e in range(n):
                dst.store(gen, e, gen.load_element(src.buf, _at(src.indices, e)), node)
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            for e in range(n):
                dst.store(gen, e, 0, node)
            scf.YieldOp([])


def call_cp_async_barrier_noinc(gen, node):
    from .warp_groups import _arrive

    _arrive(gen, node, warp_specialize.cp_async_barrier_noinc, "T.cp_async_barrier_noinc",
            mbarrier_arg="barrier")
