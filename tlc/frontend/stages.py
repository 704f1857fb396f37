"""Stages of a shared buffer named by the program: `A_s[k % 2, :, :]` (a
leading index, whole slices after it) as a T.gemm operand or a T.copy side is
one stage of a multi-buffered allocation, a tile.stage view, as TileLang's
hand-pipelined programs write it."""

from __future__ import annotations

import ast

from .. import ir
from ..dialects import tile
from . import variables
from .buffer_views import viewed
from .values import BufferRef, index_value


def _whole(item) -> bool:
    return isinstance(item, ast.Slice) and item.lower is None and item.upper is None \
        and item.step is None


def stage_of(gen, node) -> BufferRef | None:
    """The stage `buf[i, :, ...]` of a shared buffer names (i a compile-time or
    run-time index), as a buffer of the remaining dimensions; None for any
    other expression. The allocation's layout then says its leading
    dimension holds stages (#tile.shared<stages = S>)."""
    if not isinstance(node, ast.Subscript) or variables.named(gen, node.value) is not None:
        return None
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(items) < 2 or isinstance(items[0], ast.Slice) or not all(map(_whole, items[1:])):
        return None
    buf = gen.eval(node.value)
    if not isinstance(buf, BufferRef) or buf.place != "shared" or buf.rank != len(items):
        return None
    return stage_view(gen, node, buf, items[0])


def stage_view(gen, node, buf: BufferRef, index_node) -> BufferRef | None:
    """Stage `index_node` of the shared buffer `buf` (its leading dimension),
    as a buffer of the remaining dimensions (see stage_of); None where `buf`
    is not an allocation."""
    stages = buf.shape[0]
    i = gen.check_index(gen.eval(index_node), index_node, "a stage index")
    if isinstance(i, int) and not 0 <= i < stages:
        raise gen.error(index_node, f"stage {i} is out of range: '{buf.name}' has {stages}")
    return stage_buffer(gen, node, buf, i)


def stage_buffer(gen, node, buf: BufferRef, i) -> BufferRef | None:
    """Stage `i` (an index, checked) of the shared buffer `buf`: a tile.stage
    of its allocation, which is laid out in stages from then on."""
    stages = buf.shape[0]
    alloc = buf.value.owner
    if alloc.name != "tile.alloc_shared":
        return None
    if viewed(buf):
        raise gen.error(node, f"'{buf.name}' is viewed with T.reshape / T.view, and a viewed "
                              "buffer is not multi-buffered: its stages cannot also be named "
                              "as buffers")
    want = ir.Attribute.parse(f"#tile.shared<stages = {stages}>")
    if "layout" in alloc.attributes and alloc.attributes["layout"] != want:
        raise gen.error(node, f"'{buf.name}' has a layout of its own "
                              f"({alloc.attributes['layout']}); one of its stages cannot be "
                              "named as a buffer")
    alloc.attributes["layout"] = want
    space = ir.Attribute.parse("#gpu.address_space<workgroup>")
    t = ir.MemRefType.get(list(buf.shape[1:]), ir.MemRefType(buf.value.type).element_type,
                          memory_space=space)
    view = tile.stage(t, buf.value, index_value(i))
    return BufferRef(buf.name, view, list(buf.shape[1:]), buf.dtype, "shared")
