"""T.reshape / T.view: another shape (and element type) for a buffer's memory,
no copy: what is written through one name is read through the other.

- A tensor parameter, or a view of one: a `T.Tensor(shape, dtype, X.data)`
  view (tlc.frontend.tensor_views), the launcher passing the parameter's
  memory with the view's shape and dtype.
- A shared buffer: a `tile.view` of its allocation: the allocation's bytes,
  in the row-major order of its elements, addressed row-major with the
  view's shape, wherever the compiler's layout of the allocation (a gemm
  operand's swizzle and column blocks) puts them. A buffer laid out by the
  program (T.annotate_layout, stages named as `A_s[k % 2, :, :]`) cannot be
  viewed, nor a viewed one laid out, and the compiler does not multi-buffer
  it.
- A fragment: a `tile.view` of its allocation with another shape of as many
  elements (the element type stays): the same registers, each holding the
  element at the same row-major position, so the view's layout is the
  allocation's seen through the reshape (`T.reshape(s, (N, Q, H))` of an
  N x (Q*H) accumulator, then reduced over H). Reducers' partials cannot be
  viewed.
- Local buffers: errors.
"""

from __future__ import annotations

import math

from .. import ir
from ..dialects import tile
from ..language import memory
from . import dtypes
from .intrinsic_args import bind_args, parse_dtype, static_shape
from .values import BufferRef


def call_reshape(gen, node) -> BufferRef:
    a = bind_args(gen, node, memory.reshape)
    src = _source(gen, a["src"], "T.reshape")
    return _view(gen, node, src, a["shape"], src.dtype, "T.reshape")


def call_view(gen, node) -> BufferRef:
    a = bind_args(gen, node, memory.view)
    src = _source(gen, a["src"], "T.view")
    none = lambda n: gen.eval_static(n) is None  # noqa: E731
    dt = src.dtype if none(a["dtype"]) else str(parse_dtype(gen, a["dtype"]))
    return _view(gen, node, src, None if none(a["shape"]) else a["shape"], dt, "T.view")


def viewed(buf: BufferRef) -> bool:
    """Whether the program views shared buffer `buf`'s allocation (tile.view)."""
    return any(use.owner.name == "tile.view" for use in buf.value.uses)


def _source(gen, node, what: str) -> BufferRef:
    from .intrinsics import _buffer

    src = _buffer(gen, node, f"{what}'s source")
    if src.place == "local":
        raise gen.error(node, f"{what} of the local buffer '{src.name or 'buffer'}' is not "
                              "supported: views are of tensor parameters, shared buffers and "
                              "fragments")
    if src.reducer is not None:
        raise gen.error(node, f"{what} of the reducer '{src.name or 'buffer'}' is not "
                              "supported: T.finalize_reducer it into a fragment and view that")
    return src


def _view(gen, node, src: BufferRef, shape_node, dt: str, what: str) -> BufferRef:
    if src.place == "global":
        from .tensor_views import tensor_view

        if shape_node is None:
            shape_node = node  # the source's shape, as given
            shape = list(src.shape)
        else:
            shape = None
        return tensor_view(gen, node, src, shape_node, shape, dt, what)
    shape = list(src.shape) if shape_node is None else \
        list(static_shape(gen, shape_node, f"{what} of a {src.place} buffer"))
    if src.place == "fragment":
        return _fragment_view(gen, node, src, shape, dt, what)
    n = math.prod(shape) * dtypes.itemsize(dt)
    m = math.prod(src.shape) * dtypes.itemsize(src.dtype)
    if n != m:
        raise gen.error(node, f"{what}: '{src.name}' {tuple(src.shape)} {src.dtype} is {m} "
                              f"bytes, but {tuple(shape)} {dt} is {n}; a view keeps the "
                              "buffer's size")
    root = src.value
    while root.owner.name == "tile.view":
        root = root.owner.operands[0]
    alloc = root.owner
    if alloc.name != "tile.alloc_shared":
        raise gen.error(node, f"{what}: '{src.name}' is one stage of a multi-buffered shared "
                              "buffer; view the whole buffer")
    if "layout" in alloc.attributes:
        raise gen.error(node, f"{what}: '{src.name}' has a layout "
                              f"({alloc.attributes['layout']}), set by T.annotate_layout or "
                              "by naming its stages; a view addresses the bytes in the "
                              "compiler's layout of the buffer, so a viewed buffer takes no "
                              "layout of the program's")
    return _tile_view(gen, node, src, shape, dt, "shared", "#gpu.address_space<workgroup>")


def _tile_view(gen, node, src: BufferRef, shape, dt: str, place: str, space: str) -> BufferRef:
    """The tile.view of `src` as `shape` x `dt`, named as the program names it."""
    t = ir.MemRefType.get(shape, dtypes.storage_type(dt), memory_space=ir.Attribute.parse(space))
    name = gen.assigned_name(node)
    loc = ir.Location.name(name, childLoc=ir.Location.current) if name else ir.Location.current
    return BufferRef(name or src.name, tile.view(t, src.value, loc=loc), shape, dt, place)



def _fragment_view(gen, node, src: BufferRef, shape, dt: str, what: str) -> BufferRef:
    """A fragment's view: its registers indexed row-major with `shape`."""
    if dt != src.dtype:
        raise gen.error(node, f"{what}: a fragment's view keeps its element type ({src.dtype}); "
                              f"'{src.name}' cannot be viewed as {dt} (its elements sit in "
                              "registers, one element each: cast them with T.copy or "
                              "T.Parallel instead)")
    if math.prod(shape) != math.prod(src.shape):
        raise gen.error(node, f"{what}: '{src.name}' {tuple(src.shape)} has "
                              f"{math.prod(src.shape)} elements, but {tuple(shape)} has "
                              f"{math.prod(shape)}; a view keeps the fragment's elements")
    return _tile_view(gen, node, src, shape, dt, "fragment", "#tile.space<fragment>")
