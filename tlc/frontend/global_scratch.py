"""T.alloc_global: global scratch tensors shared by a prim_func's kernels.

Each one becomes an argument of the program's func.func after its
parameters, marked `tile.scratch` (with `tile.name` and `tile.dims` as a
parameter has): the kernels address it exactly as they address a tensor
parameter, and the launcher (tlc.runtime, tlc.interpreter) allocates it at
every call, sized from the arguments; the caller never passes it.
"""

from __future__ import annotations

from .. import ir
from ..language import memory
from . import dtypes
from .intrinsic_args import bind_args, parse_dtype
from .values import Affine, BufferRef

SCRATCH_ATTR = "tile.scratch"


def call_alloc_global(gen, node, name_node=None) -> BufferRef:
    """`S = T.alloc_global(shape, dtype)` at the prim_func's top level (`name_node`: the
    call the statement assigns, where `node` stands for it)."""
    if gen.in_kernel:
        raise gen.error(node, "T.alloc_global allocates a global tensor for the whole "
                              "prim_func: call it at the prim_func's top level, outside "
                              "`with T.Kernel(...)`, before the kernels that use it")
    a = bind_args(gen, node, memory.alloc_global)
    scope = gen.eval_static(a["scope"])
    if scope != "global":
        raise gen.error(a["scope"], f"T.alloc_global's scope is \"global\", got {scope!r}")
    shape, dims = _shape(gen, a["shape"])
    dt = parse_dtype(gen, a["dtype"])
    name = _free_name(gen, node, gen.assigned_name(name_node or node) or f"global{gen.scratch}",
                      "T.alloc_global", "T.alloc_global tensor", "global tensor")
    value = _add_argument(gen, node, name, dims, str(dt))
    gen.scratch += 1
    return BufferRef(name, value, shape, str(dt), "global")


def _shape(gen, node, what: str = "a T.alloc_global", value=None) -> tuple[list, list[str | int]]:
    """The sizes as the body sees them (ints, the symbols' Affines) and as the
    launch metadata names them (ints, symbol names); `value`: the sizes
    themselves, else read from `node`."""
    value = gen.eval(node) if value is None else value
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    by_identity = {id(v): name for name, v in gen.symbols.items()}
    shape, dims = [], []
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool) and item > 0:
            shape.append(item)
            dims.append(item)
        elif isinstance(item, Affine) and id(item) in by_identity:
            shape.append(item)
            dims.append(by_identity[id(item)])
        else:
            raise gen.error(node, f"{what} size is a positive int or a T.dynamic size "
                                  "of a tensor parameter (the launcher sizes the tensor from "
                                  f"the arguments), got {gen.describe(item)}")
    if not shape:
        raise gen.error(node, f"{what} shape needs at least one size")
    return shape, dims


def _free_name(gen, node, name: str, who: str, other: str, what: str) -> str:
    """`name`, unless an argument of the func has it (an error at `node`)."""
    taken = _argument_names(gen.func)
    if name in taken:
        raise gen.error(node, f"{who}: '{name}' already names a "
                              f"{'parameter' if taken[name] else other} of "
                              f"'{gen.prim.name}'; give each {what} its own name")
    return name


def _argument_names(func) -> dict[str, bool]:
    """The names of the func's arguments -> whether it is a parameter (not scratch)."""
    names = {}
    for attrs in func.arg_attrs:
        d = ir.DictAttr(attrs)
        names[ir.StringAttr(d["tile.name"]).value] = SCRATCH_ATTR not in d
    return names


def _add_argument(gen, node, name: str, dims: list, dtype: str,
                  extra: dict | None = None) -> ir.Value:
    """Appends the scratch argument (with `extra` attributes: a view's) to the
    func being built; returns its value."""
    func = gen.func
    dynamic = ir.ShapedType.get_dynamic_size()
    t = ir.MemRefType.get([d if isinstance(d, int) else dynamic for d in dims],
                          dtypes.storage_type(dtype))
    attrs = {
        "tile.name": ir.StringAttr.get(name),
        "tile.dims": ir.ArrayAttr.get([ir.StringAttr.get("" if isinstance(d, int) else d)
                                       for d in dims]),
        SCRATCH_ATTR: ir.UnitAttr.get(),
        **(extra or {}),
    }
    if dtypes.needs_tag(dtype):
        attrs["tile.dtype"] = ir.StringAttr.get(dtype)
    value = func.regions[0].blocks[0].add_argument(t, gen.loc(node))
    inputs = list(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs + [t], []))
    func.arg_attrs = ir.ArrayAttr.get(list(func.arg_attrs) + [ir.DictAttr.get(attrs)])
    return value
