"""T.cumsum / T.cummax: inclusive scans of shared buffers and fragments.

The source is first copied to a new shared buffer; a T.Parallel over the
other dimensions then runs each line's scan as a sequential loop (one
thread per line; lines a loop of fewer iterations than threads gives to
several threads compute and store the same values), reading that copy and
writing the destination (through another shared buffer when the
destination is a fragment). The compiler's barriers order the copies and
the scan. 16-bit floats are accumulated in float32.
"""

from __future__ import annotations

import ast

from .. import ir
from ..dialects import arith, memref, scf, tile
from ..language import tile_ops
from . import dtypes
from .intrinsic_args import bind_args as _args
from .values import BufferRef, Scalar

_UNSUPPORTED = {"annotations": "TileLang's codegen hints"}
_DTYPES = ("float32", "float16", "bfloat16", "int32", "int64")


def _whole(gen, node, what) -> BufferRef:
    from .intrinsics import _buffer

    buf = _buffer(gen, node, what)
    if buf.place not in ("shared", "fragment"):
        raise gen.error(node, f"{what} must be a shared buffer or a fragment; '{buf.name}' is "
                              f"in {buf.place} memory")
    return buf


def copy_whole(a: BufferRef, b: BufferRef) -> None:
    """tile.copy of the whole of `a` into the whole of `b` (same shape)."""
    index = ir.IndexType.get()
    zeros = [arith.constant(index, 0) for _ in a.shape]
    tile.copy(a.value, zeros, list(a.shape), b.value, zeros, list(b.shape))


def _shared_like(buf: BufferRef) -> BufferRef:
    space = ir.Attribute.parse("#gpu.address_space<workgroup>")
    t = ir.MemRefType.get(list(buf.shape), ir.MemRefType(buf.value.type).element_type,
                          memory_space=space)
    return BufferRef(buf.name + "_scan", tile.alloc_shared(t), list(buf.shape), buf.dtype,
                     "shared")


def _scan(gen, node, op: str) -> None:
    what = f"T.cum{op}"
    gen.require_kernel(node, what)
    if gen.parallel_depth:
        raise gen.error(node, f"{what} cannot be inside T.Parallel")
    a = _args(gen, node, getattr(tile_ops, f"cum{op}"), _UNSUPPORTED)
    src = _whole(gen, a["src"], f"{what}'s source")
    dst = src if _is_none(a["dst"]) else _whole(gen, a["dst"], f"{what}'s destination")
    if src.static_shape() is None or list(dst.shape) != list(src.shape) or \
            dst.dtype != src.dtype:
        raise gen.error(node, f"{what}: the destination must have the source's shape and "
                              f"dtype ({'x'.join(map(str, src.shape))} {src.dtype}), got "
                              f"{'x'.join(map(str, dst.shape))} {dst.dtype}")
    if src.dtype not in _DTYPES:
        raise gen.error(a["src"], f"{what} takes {', '.join(_DTYPES)} buffers; '{src.name}' is "
                                  f"{src.dtype}")
    dim = gen.eval_int(a["dim"], "dim")
    if not -src.rank <= dim < src.rank:
        raise gen.error(a["dim"], f"dim {dim} is out of range for the {src.rank}-d "
                                  f"'{src.name}'")
    dim %= src.rank
    reverse = gen.eval_static(a["reverse"])
    if not isinstance(reverse, bool):
        raise gen.error(a["reverse"], f"{what}: reverse must be True or False, got {reverse!r}")

    source = _shared_like(src)  # the lines are read from here, never written
    copy_whole(src, source)
    out = dst if dst.place == "shared" else _shared_like(dst)
    others = [d for k, d in enumerate(src.shape) if k != dim] or [1]
    n = src.shape[dim]
    index = ir.IndexType.get()
    wide = "float32" if src.dtype in ("float16", "bfloat16") else src.dtype
    wide_t = dtypes.storage_type(wide)
    loop = tile.ParallelOp(others)
    body = loop.body.blocks.append(*([index] * len(others)))
    with ir.InsertionPoint(body):
        ivs = list(body.arguments) if src.rank > 1 else []
        if dtypes.is_float(wide):
            start = arith.constant(wide_t, 0.0 if op == "sum" else float("-inf"))
        else:
            bits = ir.IntegerType(wide_t).width
            start = arith.constant(wide_t, 0 if op == "sum" else -(1 << (bits - 1)))
        c0, c1, cn = (arith.constant(index, v) for v in (0, 1, n))
        scan = scf.ForOp(c0, cn, c1, [start])
        with ir.InsertionPoint(scan.body):
            j = scan.induction_variable
            if reverse:
                j = arith.subi(arith.constant(index, n - 1), j)
            at = ivs[:dim] + [j] + ivs[dim:]
            v = gen.to_value(Scalar(memref.load(source.value, at), src.dtype), wide, node)
            acc = scan.inner_iter_args[0]
            if op == "sum":
                acc = arith.addf(acc, v) if dtypes.is_float(wide) else arith.addi(acc, v)
            else:
                acc = arith.maximumf(acc, v) if dtypes.is_float(wide) else arith.maxsi(acc, v)
            memref.store(gen.to_value(Scalar(acc, wide), src.dtype, node), out.value, at)
            scf.YieldOp([acc])
    if out is not dst:
        copy_whole(out, dst)


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def call_cumsum(gen, node):
    _scan(gen, node, "sum")


def call_cummax(gen, node):
    _scan(gen, node, "max")
