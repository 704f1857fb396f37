"""Compiled kernels as PyTorch custom operators (torch.library).

    add = kernel.torch_op("mylib::vadd")  # the op; the same object as torch.ops.mylib.vadd
    c = add(a, b)                         # eager, torch.compile(fullgraph=True), CUDA graphs

`register` defines one operator per kernel through torch.library:

- its schema comes from the artifact's parameters: each input (every
  parameter not named by `out_idx`, in order) is a `Tensor`, or an `int`,
  `float` or `bool` for a scalar; a tensor the kernel writes (artifact access
  "write" or "readwrite", which the compiler derives from the kernel's
  stores) is declared mutated, `Tensor(a!)`; the `out_idx` tensors are
  allocated by the op, uninitialised as JITKernel's are, and returned
  (`-> Tensor`, `-> (Tensor, Tensor)`, or `-> ()` when there are none);
- its real implementation allocates the outputs on the inputs' device and
  launches through tlc.runtime on torch's current stream of that device (so
  `torch.cuda.stream(...)` and CUDA-graph capture take it);
- its fake implementation (FakeTensor and meta tensors, what torch.compile
  traces with) checks the inputs' dtypes, ranks, static sizes, shared
  symbols and devices and returns outputs of the right shapes, dtypes and
  device. A symbolic size (`T.dynamic`) of an output is the size of the
  input dimension (or integer scalar) of that name, a SymInt under dynamic
  shapes.

The op has no autograd formula: use it inside a `torch.autograd.Function`,
or give it one with `torch.library.register_autograd("mylib::vadd", ...)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .runtime.args import Param, describe
from .runtime.dtypes import DTYPES
from .runtime.errors import ArgumentError

# Namespaces torch keeps for itself.
RESERVED_NAMESPACES = ("aten", "at", "prim", "prims", "torch", "pytorch")

# The devices the fake implementation accepts tensors on (meta: tracing).
DEVICE_TYPES = ("cuda", "meta")

# "mylib::name" -> (torch.library.Library, the JITKernel): the libraries must
# stay alive, or torch removes their operators.
_registered: dict[str, tuple] = {}

_QUALNAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class OpSpec:
    """How a kernel's parameters become an operator's arguments and results."""

    kernel: str  # the kernel's name, for messages
    params: tuple[Param, ...]  # all of them, in launch order
    inputs: tuple[Param, ...]  # the op's arguments, in order
    outputs: tuple[Param, ...]  # the out_idx tensors, allocated and returned
    is_out: tuple[bool, ...]  # per parameter
    # Per output, per dim: an int, or where its size comes from: ("dim", input
    # position, dim) or ("scalar", input position).
    output_dims: tuple[tuple, ...]

    @property
    def mutated(self) -> tuple[str, ...]:
        """The input tensors the kernel writes."""
        return tuple(p.name for p in self.inputs if p.kind == "tensor" and p.access != "read")

    def schema(self) -> str:
        """The operator's schema without its name: `(Tensor A, ...) -> Tensor`."""
        args, alias = [], 0
        for p in self.inputs:
            if p.kind == "tensor" and p.access != "read":
                args.append(f"Tensor({_alias_set(alias)}!) {p.name}")
                alias += 1
            else:
                args.append(f"{_schema_type(p)} {p.name}")
        results = ", ".join("Tensor" for _ in self.outputs)
        returns = results if len(self.outputs) == 1 else f"({results})"
        return f"({', '.join(args)}) -> {returns}"


def _alias_set(i: int) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[i % 26] + (str(i // 26) if i >= 26 else "")


def _schema_type(p: Param) -> str:
    if p.kind == "tensor":
        return "Tensor"
    kind = DTYPES[p.dtype].kind
    return {"f": "float", "i": "int", "u": "int", "b": "bool"}[kind]


def op_spec(kernel) -> OpSpec:
    """The operator a JITKernel makes; ValueError when it cannot make one."""
    params = tuple(kernel.kernel.params)
    name = kernel.name
    is_out = tuple(i in kernel.out_idx for i in range(len(params)))
    inputs = tuple(p for p, o in zip(params, is_out) if not o)
    outputs = tuple(p for p, o in zip(params, is_out) if o)
    if not any(p.kind == "tensor" for p in params):
        raise ValueError(f"kernel '{name}' has no tensor parameter: a torch operator is "
                         "dispatched by the device of its tensors")
    if not any(p.kind == "tensor" for p in inputs):
        raise ValueError(f"kernel '{name}': every tensor parameter is an output (out_idx "
                         f"{list(kernel.out_idx)}); the operator needs an input tensor to "
                         "know the device")
    for p in params:
        if p.kind == "scalar" and DTYPES[p.dtype].kind == "f" and DTYPES[p.dtype].itemsize == 1:
            raise ValueError(f"kernel '{name}': scalar '{p.name}' is {p.dtype}; a torch "
                             "operator passes float scalars, declare it float32")
    for p in outputs:
        if p.access == "read":
            raise ValueError(f"kernel '{name}': out_idx names '{p.name}', which the kernel "
                             "only reads; an output the operator allocates must be written")
    sources: dict[str, tuple] = {}
    for i, p in enumerate(inputs):
        for d, size in enumerate(p.shape):
            if isinstance(size, str):
                sources.setdefault(size, ("dim", i, d))
    for i, p in enumerate(inputs):
        if p.kind == "scalar" and DTYPES[p.dtype].kind in "iu":
            sources.setdefault(p.name, ("scalar", i))
    output_dims = []
    for p in outputs:
        dims = []
        for size in p.shape:
            if isinstance(size, str) and size not in sources:
                raise ValueError(
                    f"kernel '{name}': output '{p.name}' has size {size}, which no input "
                    "tensor's shape or integer scalar gives; the operator cannot allocate it")
            dims.append(sources[size] if isinstance(size, str) else size)
        output_dims.append(tuple(dims))
    return OpSpec(name, params, inputs, outputs, is_out, tuple(output_dims))


def parse_name(qualname) -> tuple[str, str]:
    """("mylib", "name") of "mylib::name"; ValueError naming what is wrong."""
    if not isinstance(qualname, str):
        raise ValueError(f"a torch operator name is a string 'namespace::name', got "
                         f"{type(qualname).__name__}")
    if "::" not in qualname:
        raise ValueError(f"torch operator name '{qualname}' has no namespace: write "
                         f"'mylib::{qualname}'")
    m = _QUALNAME.fullmatch(qualname)
    if m is None:
        raise ValueError(f"torch operator name '{qualname}' must be 'namespace::name', both "
                         "Python identifiers (no overload name)")
    if m.group(1) in RESERVED_NAMESPACES:
        raise ValueError(f"torch operator name '{qualname}': the namespace '{m.group(1)}' "
                         "is torch's own; choose another")
    return m.group(1), m.group(2)


def register(kernel, qualname: str):
    """Registers a JITKernel as the torch operator `qualname` ("mylib::name");
    returns it (torch.ops.mylib.name). See the module's docstring."""
    namespace, opname = parse_name(qualname)
    try:
        import torch
    except ImportError:
        raise RuntimeError(f"{kernel.name}: torch_op registers a torch.library operator, "
                           "and torch is not installed") from None
    if qualname in _registered:
        raise ValueError(f"torch operator '{qualname}' is already registered (by tlc kernel "
                         f"'{_registered[qualname][1].name}'); choose another name")
    if hasattr(getattr(torch.ops, namespace), opname):
        raise ValueError(f"torch operator '{qualname}' already exists; choose another name")
    spec = op_spec(kernel)
    lib = torch.library.Library(namespace, "FRAGMENT")
    tags = tuple(t for t in (getattr(torch.Tag, "needs_contiguous_strides", None),) if t)
    try:
        lib.define(opname + spec.schema(), tags=tags)
    except RuntimeError as e:  # (the library, holding nothing, goes with this frame)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"kernel '{kernel.name}': torch rejected the schema "
                         f"'{qualname}{spec.schema()}': {first}") from None
    launch = _launcher(spec, kernel.kernel, torch)
    lib.impl(opname, launch, "CUDA")
    lib.impl(opname, launch, "CPU")  # refused by the runtime, naming the argument
    torch.library.register_fake(qualname, _fake(spec, torch), lib=lib)
    _registered[qualname] = (lib, kernel)
    return getattr(getattr(torch.ops, namespace), opname)


# ---- The two implementations --------------------------------------------------


def _launcher(spec: OpSpec, runtime_kernel, torch):
    """The real implementation: allocate the outputs, launch, return them."""
    from .runtime.dtypes import torch_dtype

    dtypes = [torch_dtype(p.dtype) for p in spec.outputs]
    first_tensor = next(i for i, p in enumerate(spec.inputs) if p.kind == "tensor")
    empty = torch.empty
    n_out = len(spec.outputs)

    def launch(*inputs):
        device = inputs[first_tensor].device
        try:
            shapes = [_sizes(dims, inputs) for dims in spec.output_dims]
        except (IndexError, AttributeError):  # a wrong rank: the runtime's message
            from .runtime.args import check_args

            check_args(spec.kernel, spec.inputs, inputs)
            raise
        outputs = [empty(s, dtype=d, device=device) for s, d in zip(shapes, dtypes)]
        if n_out:
            args, it, outs = [], iter(inputs), iter(outputs)
            for o in spec.is_out:
                args.append(next(outs) if o else next(it))
        else:
            args = inputs
        runtime_kernel(*args)
        if n_out == 1:
            return outputs[0]
        return tuple(outputs) if n_out else None

    launch.__name__ = f"{spec.kernel}_launch"
    return launch


def _sizes(dims: tuple, inputs: tuple) -> list:
    sizes = []
    for d in dims:
        if isinstance(d, int):
            sizes.append(d)
        elif d[0] == "dim":
            sizes.append(inputs[d[1]].shape[d[2]])
        else:
            sizes.append(inputs[d[1]])
    return sizes


def _fake(spec: OpSpec, torch):
    """The fake implementation: the checks the runtime makes that need no
    data, then empty outputs of the right shapes."""
    from .runtime.dtypes import torch_dtype

    dtypes = {p.name: torch_dtype(p.dtype) for p in spec.params if p.kind == "tensor"}

    def show(size) -> str:
        """A size for a message: a symbolic one with the value it has now."""
        hint = getattr(getattr(size, "node", None), "hint", None)
        return str(size) if hint is None else f"{hint}"

    def require(ok, message: str) -> None:
        if isinstance(ok, bool):
            if not ok:
                raise ArgumentError(message)
        else:  # symbolic: a guard, or an assertion checked at run time
            torch._check(ok, lambda: message)

    def fake(*inputs):
        symbols: dict[str, tuple] = {}  # symbol -> (size, where it was set)
        device = None
        for p, arg in zip(spec.inputs, inputs, strict=True):
            if p.kind == "scalar":
                continue
            where = describe(spec.kernel, p)
            if arg.dtype != dtypes[p.name]:
                raise ArgumentError(f"{where}: expected dtype {p.dtype}, got "
                                    f"{str(arg.dtype).removeprefix('torch.')}")
            if arg.device.type not in DEVICE_TYPES:
                raise ArgumentError(f"{where}: is a tensor on {arg.device}; a CUDA tensor "
                                    "is required")
            if device is None:
                device = (arg.device, p.name)
            elif arg.device != device[0]:
                raise ArgumentError(f"{where}: is on {arg.device} but argument "
                                    f"'{device[1]}' is on {device[0]}; all tensors must be "
                                    "on one device")
            if arg.dim() != len(p.shape):
                expected = "[" + ", ".join(str(d) for d in p.shape) + "]"
                raise ArgumentError(f"{where}: expected a rank-{len(p.shape)} tensor of shape "
                                    f"{expected}, got rank {arg.dim()}")
            for d, (want, got) in enumerate(zip(p.shape, arg.shape)):
                if isinstance(want, int):
                    require(got == want, f"{where}: dim {d} must be {want}, got {show(got)}")
                elif want in symbols:
                    size, origin = symbols[want]
                    require(got == size, f"{where}: dim {d} is symbol {want} = {show(got)}, "
                                         f"but {origin} set {want} = {show(size)}")
                else:
                    symbols[want] = (got, f"argument '{p.name}' dim {d}")
        for p, arg in zip(spec.inputs, inputs):  # an integer scalar may name a size
            if p.kind == "scalar" and p.name in symbols and DTYPES[p.dtype].kind in "iu":
                size, origin = symbols[p.name]
                require(arg == size, f"{spec.kernel}: scalar '{p.name}' = {show(arg)}, but "
                                     f"{origin} set {p.name} = {show(size)}")
        outputs = [torch.empty(_sizes(dims, inputs), dtype=dtypes[p.name], device=device[0])
                   for p, dims in zip(spec.outputs, spec.output_dims)]
        if len(outputs) == 1:
            return outputs[0]
        return tuple(outputs) if outputs else None

    fake.__name__ = f"{spec.kernel}_fake"
    return fake
