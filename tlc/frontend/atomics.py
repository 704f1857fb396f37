"""T.atomic_add, T.atomic_max, T.atomic_min: atomic read-modify-writes of
global tensors and shared buffers (a histogram in shared memory: the
compiler's barriers order the atomics before later reads of the buffer).

Two forms, as in TileLang:
- an element, `T.atomic_add(C[i, j], v)`: in T.Parallel one per iteration,
  outside it one per thread of the block; `return_prev=True` makes the call
  an expression, the value the element held before;
- a tile, `T.atomic_add(dQ[b, k0:k0 + 64, :], dq)` or `T.atomic_add(C[i0, j0],
  acc)` (an origin, the extent the source's): every element of a fragment or
  shared source added into the region (a T.Parallel of element atomics, which
  layout inference places like any loop over the source), or one value
  added to every element of the region.

`memory_order` ("relaxed", the default, "consume", "acquire", "release",
"acq_rel", "seq_cst"): the atomics themselves are relaxed (PTX `atom` with no
ordering); a release order puts a GPU-scope fence (`membar.gl`) before them,
an acquire order one after them, so the thread's earlier writes are visible
before the atomic, and its later reads see what the atomic's value was
ordered after. A tile's elements share one fence on each side.
"""

from __future__ import annotations

import ast
import math

from .. import ir
from ..dialects import arith, memref, tile
from ..language import memory
from . import dtypes
from .intrinsic_args import bind_args as _args, static_bool
from .values import BufferRef, Scalar, index_value

_UNSUPPORTED = {"annotations": "TileLang's codegen hints"}
_TMA_DTYPES = ("float32", "float16", "bfloat16", "int32")  # TMA's .add reductions
# On the tile.copy of T.atomic_add(..., use_tma=True): an add, never a store
# (C++: kTmaReduceAddAttr; tile-select-tma-stores makes it a TMA reduction).
TMA_REDUCE_ADD = "tile.tma_reduce_add"
_ORDERS = ("relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst")
_RELEASE = ("release", "acq_rel", "seq_cst")
_ACQUIRE = ("consume", "acquire", "acq_rel", "seq_cst")
_DTYPES = {
    "add": ("float32", "float16", "bfloat16", "int32", "int64", "uint32", "uint64"),
    "max": ("float32", "int32", "int64", "uint32", "uint64"),
    "min": ("float32", "int32", "int64", "uint32", "uint64"),
    "load": ("float32", "int32", "int64", "uint32", "uint64"),  # T.atomic_load / T.atomic_store
}


def _kind(op: str, dt: str):
    k = arith.AtomicRMWKind
    if op == "add":
        return k.addf if dtypes.is_float(dt) else k.addi
    if dtypes.is_float(dt):
        return k.maximumf if op == "max" else k.minimumf
    if dt.startswith("uint"):
        return k.maxu if op == "max" else k.minu
    return k.maxs if op == "max" else k.mins


def _fence() -> None:
    ir.Operation.create("nvvm.memory.barrier",
                        attributes={"scope": ir.Attribute.parse("#nvvm.mem_scope<gpu>")})


_SLICED = object()  # the value of a sliced operand: a region, not a value


def _has_slices(node) -> bool:
    if not isinstance(node, ast.Subscript):
        return False
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(isinstance(i, ast.Slice) for i in items)


def _is_element(gen, node, value) -> bool:
    """`C[i, j]` with an index in every dimension and a scalar value."""
    return (value is not _SLICED and not isinstance(value, BufferRef)
            and isinstance(node, ast.Subscript) and not _has_slices(node))


def _atomic(gen, node, op: str, fn):
    what = f"T.atomic_{op}"
    gen.require_kernel(node, what)
    a = _args(gen, node, fn, _UNSUPPORTED)
    order = _order(gen, a, what, _ORDERS)
    prev = gen.eval_static(a["return_prev"])
    if not isinstance(prev, bool):
        raise gen.error(a["return_prev"], f"{what}: return_prev must be True or False, "
                                          f"got {prev!r}")
    target = a["dst"]
    # A sliced value (`s[0:4]`) is a tile: it has no value of its own.
    value = _SLICED if _has_slices(a["value"]) else gen.eval(a["value"])
    if "use_tma" in a.given and static_bool(gen, a["use_tma"], "use_tma"):
        if order != "relaxed" or prev:
            raise gen.error(node, f"{what} with use_tma=True is a relaxed tile add (TMA "
                                  "reductions have no memory order and return nothing)")
        return _tma_add(gen, node, target, a["value"], what)
    if order in _RELEASE:
        _fence()
    if _is_element(gen, target, value):
        result = _element(gen, target, value, a["value"], op, what)
        if not prev:
            result = None
    else:
        if prev:
            raise gen.error(a["return_prev"], f"{what}: return_prev takes an element "
                                              "(C[i, j]), not a tile")
        result = _tile(gen, node, target, value, a["value"], op, what)
    if order in _ACQUIRE:
        _fence()
    return result


def _tma_add(gen, node, target, value_node, what):
    """T.atomic_add(C[region], tile, use_tma=True): a tile.copy of the whole
    shared tile to the region, marked for tile-select-tma-stores to make a
    TMA reduction of it (or report why it cannot)."""
    from .intrinsics import mark_copies

    if gen.parallel_depth:
        raise gen.error(node, f"{what} with use_tma=True adds a whole shared tile, issued "
                              "once for the block: not inside T.Parallel")

    def base(n):  # the buffer a region names
        return gen.eval(n.value if isinstance(n, ast.Subscript) else n)

    src = base(value_node)
    if not isinstance(src, BufferRef) or src.place != "shared":
        got = (f"'{src.name}' in {src.place} memory" if isinstance(src, BufferRef)
               else gen.describe(src))
        raise gen.error(value_node, f"{what} with use_tma=True adds a shared tile (TMA reads "
                                    f"shared memory), got {got}")
    dst = base(target)
    if not isinstance(dst, BufferRef) or dst.place != "global":
        raise gen.error(target, f"{what} with use_tma=True adds into a global tensor")
    if dst.dtype not in _TMA_DTYPES or dst.dtype != src.dtype:
        raise gen.error(node, f"{what} with use_tma=True adds a tile of the tensor's dtype, one "
                              f"of {', '.join(_TMA_DTYPES)} (TMA converts nothing); got "
                              f"'{src.name}' {src.dtype} into '{dst.name}' {dst.dtype}")
    mark_copies(gen, node, value_node, target, TMA_REDUCE_ADD,
                f"{what} with use_tma=True adds tiles of a tensor in its declared layout (a "
                "T.Layout places elements apart)")
    return None


def _destination(gen, target_node, buf, what):
    if buf.place not in ("global", "shared"):
        verb = "adds into" if what.endswith("add") else "works on"
        raise gen.error(target_node, f"{what} {verb} global tensors and shared buffers; "
                                     f"'{buf.name}' is in {buf.place} memory")


def _check_dtype(gen, node, buf, op, what):
    if buf.dtype not in _DTYPES[op]:
        raise gen.error(node, f"{what} takes {', '.join(_DTYPES[op])} tensors; "
                              f"'{buf.name}' is {buf.dtype}")


def _element(gen, target, value, value_node, op, what):
    buf, indices = gen.subscript(target)
    _destination(gen, target, buf, what)
    _check_dtype(gen, target, buf, op, what)
    v = gen.to_value(value, buf.dtype, value_node)
    old = memref.atomic_rmw(_kind(op, buf.dtype), v, buf.value, [index_value(i) for i in indices])
    return Scalar(old, buf.dtype)


def _tile(gen, node, target, value, value_node, op, what):
    from .intrinsics import _region

    if gen.parallel_depth:
        raise gen.error(node, f"{what} of a tile cannot be inside T.Parallel (give an "
                              "element, C[i, j], there)")
    dst, dst_off, dst_sizes = _region(gen, target)
    _destination(gen, target, dst, what)
    _check_dtype(gen, target, dst, op, what)
    if value is _SLICED or isinstance(value, BufferRef):
        src, src_off, src_sizes = _region(gen, value_node)
        if src.place not in ("fragment", "shared", "local"):
            raise gen.error(value_node, f"{what} adds a fragment, shared or local tile; "
                                        f"'{src.name}' is in {src.place} memory")
        if src_off is None:
            if src.static_shape() is None:
                raise gen.error(value_node, f"'{src.name}' has dynamic sizes")
            src_off, src_sizes = [0] * src.rank, list(src.shape)
        if src_sizes is None:
            raise gen.error(value_node, f"{what}: give the source tile as a whole buffer or "
                                        "with slices")
    else:
        src = None
        src_sizes = None
    if dst_off is None:
        if dst.static_shape() is None:
            raise gen.error(target, f"'{dst.name}' has dynamic sizes: give the region with an "
                                    "origin or slices")
        dst_off, dst_sizes = [0] * dst.rank, list(dst.shape)
    if dst_sizes is None:  # an origin: the source's extent, aligned at the trailing dims
        if src_sizes is None:
            raise gen.error(target, f"{what} of a value into a region needs the region's "
                                    "extent: give slices (C[i:i + 64, :]) or an element")
        tile_shape = [d for d in src_sizes if d != 1] or [1]
        if len(tile_shape) > dst.rank:
            raise gen.error(node, f"a {len(tile_shape)}-d tile does not fit in '{dst.name}'")
        dst_sizes = [1] * (dst.rank - len(tile_shape)) + tile_shape
    shape = [d for d in dst_sizes if d != 1] or [1]
    if src_sizes is not None and ([d for d in src_sizes if d != 1] or [1]) != shape:
        raise gen.error(node, f"{what} shapes differ: source "
                              f"{'x'.join(map(str, src_sizes))} vs destination "
                              f"{'x'.join(map(str, dst_sizes))}")

    if src is not None and src.place == "fragment" and (
            any(not (isinstance(o, int) and o == 0) for o in src_off) or
            list(src_sizes) != list(src.shape)):
        raise gen.error(value_node, f"{what} adds a whole fragment ('{src.name}'), not a part "
                                    "of one")

    from .intrinsics import placed_indices, region_bases, region_elements

    def bases(offsets):
        return region_bases(offsets, [gen.index(o, node, f"a {what} offset") for o in offsets])

    dst_bases = bases(dst_off)
    src_bases = bases(src_off) if src is not None else None
    loop = tile.ParallelOp(shape)
    index = ir.IndexType.get()
    body = loop.body.blocks.append(*([index] * len(shape)))
    with ir.InsertionPoint(body):
        if src is not None:
            at_src = region_elements(body.arguments, src_bases, src_sizes)
            loaded = memref.load(src.value, [index_value(i) for i in at_src])
            v = gen.to_value(Scalar(loaded, src.dtype), dst.dtype, value_node)
        else:
            v = gen.to_value(value, dst.dtype, value_node)
        at = region_elements(body.arguments, dst_bases, dst_sizes)
        if dst.place == "global":  # elements a T.Layout places: each at its place
            at = placed_indices(gen, dst, at, value_node)
        at = [index_value(i) for i in at]
        memref.atomic_rmw(_kind(op, dst.dtype), v, dst.value, at)
    return None


# The IR of T.atomic_addx2 / x4: one memref.atomic_rmw per element, the
# group's in a row, each marked with the group's width and its place in it;
# in T.Parallel, tile-to-GPU lowering makes the group one vector reduction
# where the target has them (sm_90) and the whole group lies inside the
# tensor, aligned to its bytes (ParallelToGPU's lowerVectorAtomic); else, and
# outside T.Parallel, each element is its own atomic add.
VECTOR_ATTR = "tile.vector_atomic"
LANE_ATTR = "tile.vector_lane"


def _vector_operand(gen, node, width, what, role):
    """(buffer, indices of the first element) of `B[i, j]` or `B[i, j:j + width]`."""
    if not isinstance(node, ast.Subscript):
        raise gen.error(node, f"{what}: the {role} is an element (B[i, j]) or a slice of "
                              f"{width} (B[i, j:j + {width}]), got {ast.unparse(node)}")
    if not _has_slices(node):
        return gen.subscript(node)
    from .intrinsics import _region

    buf, offsets, sizes = _region(gen, node)
    if offsets is None or sizes is None or list(sizes[:-1]) != [1] * (len(sizes) - 1) or \
            sizes[-1] != width:
        raise gen.error(node, f"{what}: a sliced {role} is {width} elements of the last "
                              f"dimension (B[i, j:j + {width}]), got "
                              f"{'x'.join(map(str, sizes or []))}")
    return buf, offsets


def _vector_add(gen, node, width: int, fn):
    what = f"T.atomic_addx{width}"
    gen.require_kernel(node, what)
    a = _args(gen, node, fn)
    prev = gen.eval_static(a["return_prev"])
    if prev is not None and prev is not False:
        raise gen.error(a["return_prev"], f"{what}: return_prev is not supported by tlc (the "
                                          "vector reductions return nothing)")
    dst, dst_idx = _vector_operand(gen, a["dst"], width, what, "destination")
    if dst.place != "global":
        raise gen.error(a["dst"], f"{what} adds into global tensors; '{dst.name}' is in "
                                  f"{dst.place} memory")
    if dst.dtype not in ("float16", "bfloat16", "float32"):
        raise gen.error(a["dst"], f"{what} takes float16, bfloat16 and float32 tensors; "
                                  f"'{dst.name}' is {dst.dtype}")
    src, src_idx = _vector_operand(gen, a["value"], width, what, "value")
    for buf, operand in ((dst, a["dst"]), (src, a["value"])):
        if buf in gen.index_maps:  # its element j + 1 need not follow element j
            raise gen.error(operand, f"{what} adds {width} adjacent elements; '{buf.name}' has "
                                     "a T.Layout that places them apart: use T.atomic_add on "
                                     "each element")
    if src.place == "fragment":
        raise gen.error(a["value"], f"{what} reads its {width} values from a shared, local or "
                                    f"global buffer; '{src.name}' is a fragment (copy it to "
                                    "shared memory first)")
    if not dst_idx or not src_idx:
        raise gen.error(node, f"{what} needs buffers of at least one dimension")

    def at(indices, k):
        out = [gen.index(i, node, f"a {what} index") for i in indices]
        if k:
            out[-1] = arith.addi(out[-1], arith.constant(ir.IndexType.get(), k))
        return out

    values = [gen.to_value(Scalar(memref.load(src.value, at(src_idx, k)), src.dtype),
                           dst.dtype, a["value"]) for k in range(width)]
    i64 = ir.IntegerType.get_signless(64)
    where = [at(dst_idx, k) for k in range(width)]  # first: the adds come in a row
    for k, v in enumerate(values):
        op = memref.atomic_rmw(arith.AtomicRMWKind.addf, v, dst.value, where[k]).owner
        op.attributes[VECTOR_ATTR] = ir.IntegerAttr.get(i64, width)
        op.attributes[LANE_ATTR] = ir.IntegerAttr.get(i64, k)
    return None


def call_atomic_addx2(gen, node):
    return _vector_add(gen, node, 2, memory.atomic_addx2)


def call_atomic_addx4(gen, node):
    return _vector_add(gen, node, 4, memory.atomic_addx4)


def call_atomic_add(gen, node):
    return _atomic(gen, node, "add", memory.atomic_add)


def call_atomic_max(gen, node):
    return _atomic(gen, node, "max", memory.atomic_max)


def call_atomic_min(gen, node):
    return _atomic(gen, node, "min", memory.atomic_min)


_LOAD_ORDERS = ("relaxed", "consume", "acquire", "seq_cst")
_STORE_ORDERS = ("relaxed", "release", "seq_cst")


def _element_of(gen, node, what):
    """(buffer, indices) of `C[i, j]` or of a one-element buffer `flag`."""
    if isinstance(node, ast.Subscript) and not _has_slices(node):
        buf, indices = gen.subscript(node)
    else:
        buf = gen.eval(node)
        if not isinstance(buf, BufferRef) or buf.static_shape() is None or \
                math.prod(buf.shape) != 1:
            raise gen.error(node, f"{what} takes an element (C[i]) or a one-element buffer, "
                                  f"got {gen.describe(buf)}")
        indices = [0] * buf.rank
    _destination(gen, node, buf, what)
    _check_dtype(gen, node, buf, "load", what)
    return buf, [index_value(i) for i in indices]


def _order(gen, a, what, allowed):
    """The call's memory_order, checked against `allowed` (None: relaxed)."""
    order = gen.eval_static(a["memory_order"])
    order = "relaxed" if order is None else order
    if order not in allowed:
        raise gen.error(a["memory_order"], f"{what}: memory_order must be one of "
                                           f"{', '.join(allowed)}, got {order!r}")
    return order


def call_atomic_load(gen, node):
    """T.atomic_load(src, memory_order="seq_cst"): the element read atomically
    (an RMW that adds nothing: 0, or -0.0 for floats, which leaves every value
    as it is); an acquire order fences after it, seq_cst on both sides."""
    what = "T.atomic_load"
    gen.require_kernel(node, what)
    a = _args(gen, node, memory.atomic_load)
    order = _order(gen, a, what, _LOAD_ORDERS)
    buf, indices = _element_of(gen, a["src"], what)
    if order == "seq_cst":
        _fence()
    zero = gen.to_value(-0.0 if dtypes.is_float(buf.dtype) else 0, buf.dtype, node)
    kind = arith.AtomicRMWKind.addf if dtypes.is_float(buf.dtype) else arith.AtomicRMWKind.addi
    value = memref.atomic_rmw(kind, zero, buf.value, indices)
    if order != "relaxed":
        _fence()
    return Scalar(value, buf.dtype)


def call_atomic_store(gen, node):
    """T.atomic_store(dst, src, memory_order="seq_cst"): an atomic exchange
    whose old value is dropped; a release order fences before it, seq_cst on
    both sides."""
    what = "T.atomic_store"
    gen.require_kernel(node, what)
    a = _args(gen, node, memory.atomic_store)
    order = _order(gen, a, what, _STORE_ORDERS)
    buf, indices = _element_of(gen, a["dst"], what)
    value = gen.to_value(gen.eval(a["src"]), buf.dtype, a["src"])
    if order != "relaxed":
        _fence()
    memref.atomic_rmw(arith.AtomicRMWKind.assign, value, buf.value, indices)
    if order == "seq_cst":
        _fence()
    return None
