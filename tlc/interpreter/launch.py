"""A decoded tile program and one run of it on host arrays.

`Program` decodes a func.func once; `Program.run(args)` binds the arguments
(numpy arrays, torch tensors, Python scalars) to its parameters with the
checks the GPU runtime makes, allocates its T.alloc_global scratch tensors
(NaN-filled: their contents are undefined), runs each tile.kernel's grid of
blocks one after another, the kernels in program order, and writes results
back to the caller's tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import ir
from . import (async_copies, control, printf, scalar_ops, tile_ops,  # noqa: F401  (op handlers)
               vector_ops, warp_groups)
from ..runtime.errors import ArgumentError
from .arguments import bind_arguments, scratch_buffer
from .buffers import Buffer
from .errors import InterpreterError
from .numerics import ElementType
from .program import Compiler, State, func_ops, run_steps, source_name
from .tile_ops import memref_space


@dataclass(frozen=True)
class Param:
    """A kernel parameter as the interpreter binds it."""

    name: str
    kind: str  # "tensor" or "scalar"
    etype: ElementType
    dtype: str  # the user's dtype name ("float16", "uint8", ...)
    shape: tuple = ()  # ints, or symbol names ("M") / None for dynamic sizes
    scratch: bool = False  # a T.alloc_global tensor, allocated for each run
    view_of: str = ""  # a T.Tensor(shape, dtype, X.data) view: X's name
    # T.StridedTensor: per dim an int stride or a symbol name (elements); () row-major.
    strides: tuple = ()


class Program:
    """One func.func of a tile-IR module, decoded and ready to run."""

    def __init__(self, module, name: str | None = None):
        funcs = func_ops(module)
        if name is None:
            if len(funcs) != 1:
                raise InterpreterError(f"the module has {len(funcs)} functions "
                                       f"({', '.join(funcs) or 'none'}): name one with kernel=")
            name = next(iter(funcs))
        if name not in funcs:
            raise InterpreterError(f"no function named '{name}' in the module "
                                   f"(functions: {', '.join(funcs)})")
        self.name = name
        fn = funcs[name]
        compiler = Compiler(source_name(module))
        entry = fn.regions[0].blocks[0]
        params = _params(compiler, fn, entry)
        # The T.alloc_global tensors follow the parameters; run allocates them.
        self.params = [p for p in params if not p.scratch]
        self.scratch = [p for p in params if p.scratch]
        if params[len(self.params):] != self.scratch:
            raise InterpreterError(f"'{name}': its scratch tensors (tile.scratch) must follow "
                                   "its parameters")
        self.arg_slots = [compiler.slot(a) for a in entry.arguments]
        self.steps = compiler.steps(entry)
        self.frame_size = compiler.frame_size

    def run(self, args, blocks=None) -> list[str]:
        """Runs the program on `args` (every parameter, in order); tensors the
        program writes are updated in place. Returns the names of those tensors."""
        bound = bind_arguments(self.name, self.params, args)
        scratch = [view_buffer(p, self.params, bound) if p.view_of else
                   scratch_buffer(p, bound.symbols) for p in self.scratch]
        state = State(self.frame_size, blocks)
        for slot, value in zip(self.arg_slots, bound.values + scratch, strict=True):
            state.env[slot] = value
        with np.errstate(all="ignore"):  # inf, NaN and wrap-around are results, as on the GPU
            run_steps(self.steps, state)
        for p, buf in zip(self.scratch, scratch):
            if p.view_of and buf.stored:  # written through its view
                base = next(v for q, v in zip(self.params, bound.values) if q.name == p.view_of)
                base.stored = True
        bound.write_back()
        return [p.name for p, v in zip(self.params, bound.values)
                if p.kind == "tensor" and v.stored]


def view_buffer(p, params, bound):
    """A view's buffer: its tensor's storage with the view's shape and
    element type (the same memory, so writes through it reach the tensor)."""
    shape = tuple(bound.symbols[d][0] if isinstance(d, str) else d for d in p.shape)
    base_param = next((q for q in params if q.name == p.view_of and q.kind == "tensor"), None)
    if base_param is None:
        raise InterpreterError(f"view '{p.name}' is of '{p.view_of}', which is no tensor "
                               "parameter")
    base = bound.values[params.index(base_param)]
    n = int(np.prod(shape)) * max(p.etype.bits, 8)
    m = base.data.size * max(base.etype.bits, 8)
    if n != m:
        raise ArgumentError(f"view '{p.name}' {shape} {p.etype.describe()} has {n // 8} "
                            f"bytes, but argument '{p.view_of}' {base.data.shape} "
                            f"{base.etype.describe()} has {m // 8}; a view has as many bytes "
                            "as its tensor")
    data = base.data.reshape(-1)
    if p.etype.dtype != base.etype.dtype:
        if not (p.etype.holds_bytes and base.etype.holds_bytes):
            raise InterpreterError(
                f"view '{p.name}': the interpreter cannot view {base.etype.describe()} "
                f"values as {p.etype.describe()} (it holds one of them in a wider numpy "
                "type); the compiled kernel can")
        data = data.view(p.etype.dtype)
    data = data.reshape(shape)
    if not np.shares_memory(data, base.data):
        raise ArgumentError(f"argument '{p.view_of}' must be contiguous (view '{p.name}' is "
                            "of its memory)")
    return Buffer(p.name, "global", p.etype, data)


def _strides(t, d, name: str) -> tuple:
    """A T.StridedTensor parameter's strides (ints and symbol names), else ()."""
    if not isinstance(t.layout, ir.StridedLayoutAttr):
        return ()
    names = [ir.StringAttr(x).value for x in ir.ArrayAttr(d["tile.strides"])] \
        if d is not None and "tile.strides" in d else [""] * t.rank
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    return tuple(s if s != dynamic else (names[k] or f"{name}_stride{k}")
                 for k, s in enumerate(ir.StridedLayoutAttr(t.layout).strides))


def _params(compiler, fn, entry) -> list[Param]:
    attrs = fn.arg_attrs if "arg_attrs" in fn.attributes else None
    params = []
    for i, arg in enumerate(entry.arguments):
        d = ir.DictAttr(attrs[i]) if attrs is not None else None
        name = ir.StringAttr(d["tile.name"]).value if d is not None and "tile.name" in d \
            else f"arg{i}"
        user_dtype = ir.StringAttr(d["tile.dtype"]).value if d is not None and \
            "tile.dtype" in d else None
        t = arg.type
        if isinstance(t, ir.MemRefType):
            if memref_space(t) != "global":
                raise InterpreterError(f"parameter '{name}' is not a global tensor ({t})")
            etype = compiler.etype(fn, t.element_type)
            dims = [ir.StringAttr(x).value for x in ir.ArrayAttr(d["tile.dims"])] \
                if d is not None and "tile.dims" in d else [""] * t.rank
            shape = tuple(n if n != ir.ShapedType.get_dynamic_size() else (dims[k] or None)
                          for k, n in enumerate(t.shape))
            view_of = ir.StringAttr(d["tile.view_of"]).value \
                if d is not None and "tile.view_of" in d else ""
            params.append(Param(name, "tensor", etype, user_dtype or etype.describe(), shape,
                                d is not None and "tile.scratch" in d, view_of,
                                _strides(t, d, name)))
        else:
            etype = compiler.etype(fn, t)
            params.append(Param(name, "scalar", etype, user_dtype or etype.describe()))
    return params
