"""`T.Tensor(shape, dtype, X.data)`: another shape for a tensor parameter's
memory, as TileLang writes `kernel_flat = T.Tensor((KH * KW * C, F), dtype,
kernel.data)`.

T.reshape and T.view of a tensor parameter (tlc.frontend.buffer_views) are
such views too. A view may reinterpret the bytes as another dtype (as many
bytes in all).

A view becomes an argument of the program's func.func after its parameters,
like a T.alloc_global tensor (`tile.scratch`), marked `tile.view_of` with the
parameter's name: the kernels address it as any tensor parameter (copies,
TMA, element accesses), and the launcher passes the parameter's memory with
the view's shape (tensor parameters are row-major and contiguous, so every
shape of as many bytes is a valid view); the caller never passes it. The
byte sizes must agree: checked here when both shapes are static, at the call
otherwise.

`T.make_tensor(ptr, shape, dtype)` is a tensor at an address the kernel reads
at run time (a pointer table's entry): a tile.make_tensor in the program,
addressed like a parameter, never through TMA.
"""

from __future__ import annotations

import math

from .. import ir
from . import dtypes
from .global_scratch import _add_argument, _argument_names, _free_name, _shape
from .intrinsic_args import bind_args, parse_dtype
from .values import Affine, BufferRef, Scalar

VIEW_ATTR = "tile.view_of"


class DataRef:
    """`X.data` of a tensor parameter: its memory, to view with T.Tensor."""

    def __init__(self, buffer: BufferRef):
        self.buffer = buffer

    def __repr__(self) -> str:
        return f"{self.buffer.name}.data"


def data_of(gen, buffer: BufferRef, node) -> DataRef:
    """`buffer.data`: only a tensor parameter's memory can be viewed."""
    params = _argument_names(gen.func)
    if buffer.place != "global" or not params.get(buffer.name, False):
        what = "a T.alloc_global tensor" if buffer.name in params else f"a {buffer.place} buffer"
        raise gen.error(node, f"'{buffer.name}.data': only a tensor parameter's memory can be "
                              f"viewed with T.Tensor(shape, dtype, X.data); '{buffer.name}' "
                              f"is {what}")
    return DataRef(buffer)


def call_tensor_view(gen, node) -> BufferRef:
    """`V = T.Tensor(shape, dtype, X.data)` in the prim_func's body."""
    args = list(node.args)
    kw = {k.arg: k.value for k in node.keywords}
    names = ["shape", "dtype", "data"]
    for k in kw:
        if k not in names:
            raise gen.error(node, f"T.Tensor(shape, dtype, data) got an unexpected argument "
                                  f"'{k}' (strides, offsets and other buffer fields: not "
                                  "supported)")
    if len(args) > 3:
        raise gen.error(node, f"T.Tensor(shape, dtype, data) takes 3 arguments, got {len(args)}")
    given = dict(zip(names, args)) | kw
    if "shape" not in given or "data" not in given:
        raise gen.error(node, "a view is T.Tensor(shape, dtype, X.data)")
    data = gen.eval(given["data"])
    if not isinstance(data, DataRef):
        raise gen.error(given["data"], "T.Tensor's third argument is a tensor parameter's "
                                       f"memory, `X.data`; got {gen.describe(data)}")
    base = data.buffer
    dt = str(parse_dtype(gen, given["dtype"])) if "dtype" in given else base.dtype
    return tensor_view(gen, node, base, given["shape"], None, dt, "a view")


def tensor_view(gen, node, src: BufferRef, shape_node, shape, dt: str,
                what: str) -> BufferRef:
    """A view of tensor parameter `src`'s memory (or of the memory `src`, a
    view, is of) with sizes `shape` (None: read from `shape_node`) and dtype
    `dt`: as many bytes as `src`, checked here when both shapes are static,
    at the call otherwise."""
    params = _argument_names(gen.func)
    base = src.name if params.get(src.name, False) else _view_base(gen.func, src.name)
    if base is None:
        raise gen.error(node, f"{what} of '{src.name}': only a tensor parameter's memory (or "
                              "a view of it) can be viewed; it is a T.alloc_global tensor")
    shape, dims = _shape(gen, shape_node, f"{what}'s", value=shape)
    static = src.static_shape()
    if static is not None and all(isinstance(d, int) for d in shape):
        n = math.prod(shape) * dtypes.itemsize(dt)
        m = math.prod(static) * dtypes.itemsize(src.dtype)
        if n != m:
            raise gen.error(node, f"{what} of '{src.name}' {tuple(static)} {src.dtype} "
                                  f"({m} bytes) as {tuple(shape)} {dt} ({n} bytes): a view "
                                  "has as many bytes as its tensor")
    name = _free_name(gen, node, gen.assigned_name(node) or f"{src.name}_view{gen.scratch}",
                      "T.Tensor view", "global tensor or view", "view")
    value = _add_argument(gen, node, name, dims, dt, {VIEW_ATTR: ir.StringAttr.get(base)})
    gen.scratch += 1
    return BufferRef(name, value, shape, dt, "global")


def _view_base(func, name: str) -> str | None:
    """The parameter whose memory the func's argument `name` views, if a view."""
    for attrs in func.arg_attrs:
        d = ir.DictAttr(attrs)
        if ir.StringAttr(d["tile.name"]).value == name and VIEW_ATTR in d:
            return ir.StringAttr(d[VIEW_ATTR]).value
    return None




def call_make_tensor(gen, node) -> BufferRef:
    """`A = T.make_tensor(ptr, shape, dtype)`: a tile.make_tensor at the address
    `ptr` (a T.ptr / int64 value read at run time)."""
    from ..dialects import tile
    from ..language import memory

    a = bind_args(gen, node, memory.make_tensor)
    if "strides" in a.given and gen.eval(a["strides"]) is not None:
        raise gen.error(a["strides"], "T.make_tensor's strides: tlc makes row-major, contiguous "
                                      "tensors only (leave strides out)")
    address = gen.eval(a["ptr"])
    if not isinstance(address, Scalar) or address.dtype not in ("int64", "uint64"):
        raise gen.error(a["ptr"], "T.make_tensor's ptr is an address read at run time (a T.ptr "
                                  "table entry or parameter, 64-bit), got "
                                  f"{gen.describe(address)}")
    dt = str(parse_dtype(gen, a["dtype"])) if "dtype" in a.given else "float32"
    value = gen.eval(a["shape"])
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    if not items:
        raise gen.error(a["shape"], "T.make_tensor's shape needs at least one size")
    shape, dims, sizes = [], [], []
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            if item <= 0:
                raise gen.error(a["shape"], f"T.make_tensor's sizes must be positive, got {item}")
            shape.append(item)
            dims.append(item)
            continue
        size = gen.index(item, a["shape"], "T.make_tensor's size")
        shape.append(Affine.leaf(size))
        dims.append(ir.ShapedType.get_dynamic_size())
        sizes.append(size)
    t = ir.MemRefType.get(dims, dtypes.storage_type(dt))
    name = gen.assigned_name(node) or "tensor"
    loc = ir.Location.name(name, childLoc=ir.Location.current)
    result = tile.make_tensor(t, address.value, sizes, loc=loc)
    return BufferRef(name, result, shape, dt, "global")
