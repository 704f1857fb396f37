"""Binding call arguments to kernel parameters.

Checks every argument against its parameter (nothing is launched when one is
wrong, and the message names the parameter), binds the shape symbols, and
builds the values of the kernel's PTX parameters. The ABI per parameter:

- a tensor of rank r: 3 + 2r 64-bit values, MLIR's expanded memref
  descriptor: allocated pointer, aligned pointer, offset (0), r sizes,
  r strides in elements (the row-major ones);
- a scalar: one value of its dtype;
- then, after all parameters, one 128-byte CUtensorMap per TMA tensor map of
  the kernel (tlc/runtime/tensor_maps.py). bind only checks that TMA can map
  the tensor; the maps are encoded at launch, through the driver.

Tensors come as torch tensors, objects with __cuda_array_interface__, or
objects with __dlpack__; torch is only touched when the caller passes a torch
tensor.
"""

import ctypes
import functools
import numbers
import struct
from dataclasses import dataclass, field

from . import dlpack
from .dtypes import DLPACK, DTYPES, TYPESTR
from .errors import ArgumentError

# The kernels use 16-byte vector loads and stores.
ALIGNMENT = 16


@dataclass(frozen=True)
class Param:
    index: int  # 1-based position, as messages count it
    name: str
    kind: str  # "tensor" or "scalar"
    dtype: str
    shape: tuple[int | str, ...] = ()
    access: str = "read"  # "read", "write" or "readwrite"
    # Per dim an int or a symbol (T.StridedTensor), in elements; () row-major.
    strides: tuple[int | str, ...] = ()


@dataclass
class TensorArg:
    """What the runtime needs to know about a tensor argument."""

    ptr: int
    dtype: str  # a dtype name, or a description of an unsupported one
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None  # in elements; None means row-major
    device: int | None  # None: only the driver can tell (__cuda_array_interface__)
    readonly: bool = False
    is_torch: bool = False
    keepalive: object = None  # e.g. the DLPack capsule


@dataclass
class Bound:
    """A checked call: the kernel parameter values and what the launch needs."""

    values: list = field(default_factory=list)  # ctypes objects, in PTX order
    symbols: dict[str, int] = field(default_factory=dict)
    device: int | None = None  # from torch or DLPack arguments
    probe_ptr: int | None = None  # a pointer whose device only the driver knows
    torch_device: int | None = None  # set when a torch tensor was passed
    keepalive: list = field(default_factory=list)
    # Per TMA tensor map of the kernel, in order: (TensorMap, data pointer, shape).
    maps: list = field(default_factory=list)
    encoded: list = field(default_factory=list)  # their CUtensorMaps, once launched


def describe(kernel: str, p: Param) -> str:
    return f"argument '{p.name}' (param {p.index} of {kernel})"


def bind(kernel: str, params: list[Param], args: tuple, maps=()) -> Bound:
    """Checks a call's arguments and binds them (maps: the kernel's
    tensor_maps.TensorMap, whose tensors are checked for TMA too)."""
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        if len(args) < len(params):
            missing = ", ".join(f"'{p.name}'" for p in params[len(args):])
            detail = f"missing {missing}"
        else:
            detail = f"{len(args) - len(params)} too many after '{params[-1].name}'" \
                if params else "it takes none"
        raise ArgumentError(
            f"{kernel} takes {len(params)} arguments ({names}), got {len(args)}: {detail}")
    bound = Bound()
    scalars: dict[str, int] = {}
    origins: dict[str, str] = {}  # symbol -> where its value was bound
    sized: list = []  # sizes given as expressions, checked once the symbols are bound
    device_origin = ""
    tensors: dict[int, TensorArg] = {}  # by Param.index
    for p, arg in zip(params, args, strict=True):
        where = describe(kernel, p)
        if p.kind == "scalar":
            value = scalar_value(arg, p, where)
            bound.values.append(value)
            if DTYPES[p.dtype].kind in "iu":  # a grid expression may name it
                scalars[p.name] = int(value.value)
            continue
        t = tensor_arg(arg, where)
        _check_tensor(t, p, where, bound.symbols, origins, sized)
        tensors[p.index] = t
        if t.device is not None:
            if bound.device is not None and t.device != bound.device:
                raise ArgumentError(
                    f"{where}: is on cuda:{t.device} but {device_origin} is on "
                    f"cuda:{bound.device}; all tensors must be on one device")
            bound.device, device_origin = t.device, f"argument '{p.name}'"
        elif bound.probe_ptr is None and t.ptr:
            bound.probe_ptr = t.ptr
        if t.is_torch:
            bound.torch_device = t.device
        bound.keepalive.append(t.keepalive)
        bound.values += [ctypes.c_uint64(t.ptr), ctypes.c_uint64(t.ptr), ctypes.c_int64(0)]
        bound.values += [ctypes.c_int64(n) for n in t.shape]
        strides = t.strides if p.strides and t.strides is not None else row_major(t.shape)
        bound.values += [ctypes.c_int64(s) for s in strides]
    for name, value in scalars.items():
        if name in bound.symbols and bound.symbols[name] != value:
            raise ArgumentError(f"{kernel}: scalar '{name}' = {value}, but {origins[name]} "
                                f"set {name} = {bound.symbols[name]}")
        bound.symbols[name] = value
    check_sized(sized, bound.symbols, origins)
    for m in maps:
        t = tensors[m.param.index]
        m.check_arg(t.shape, describe(kernel, m.param))
        bound.maps.append((m, t.ptr, t.shape))
    return bound


def check_args(kernel: str, params, args, maps=()) -> None:
    """Checks arguments against some of a kernel's parameters (e.g. its inputs,
    before its outputs are allocated and before a GPU is looked for), as
    `bind` would, with the TMA checks of those of `maps` on these
    parameters; binds nothing."""
    symbols: dict[str, int] = {}
    origins: dict[str, str] = {}
    sized: list = []
    for p, arg in zip(params, args, strict=True):
        where = describe(kernel, p)
        if p.kind == "scalar":
            scalar_value(arg, p, where)
            continue
        t = tensor_arg(arg, where)
        _check_tensor(t, p, where, symbols, origins, sized)
        for m in maps:
            if m.param == p:
                m.check_arg(t.shape, where)
    check_sized(sized, symbols, origins, partial=True)


@functools.lru_cache(maxsize=256)
def size_expr(source: str):
    """A size's expression (`(seq * 32)`), parsed once, not at every launch."""
    from .grid import GridExpr

    return GridExpr(source)


def check_sized(sized: list, symbols: dict[str, int], origins: dict[str, str],
                 partial: bool = False) -> None:
    """Sizes declared as expressions of symbols (`(seq_len * 32)`) against
    the symbols the other sizes bound; a symbol only such sizes name is taken
    from the first of them where it is the one unknown (seq_len = size // 32,
    which must divide). With `partial` (some arguments not given yet)
    expressions of several unknown symbols are left unchecked."""
    for where, dim, got, source, shape in sized:
        expr = size_expr(source)
        unknown = sorted(expr.symbols - symbols.keys())
        if len(unknown) == 1:
            # Linear in the unknown (products with known sizes and ints): the
            # value that gives this size, if one does.
            name = unknown[0]
            at0, at1 = expr({**symbols, name: 0}), expr({**symbols, name: 1})
            step = at1 - at0
            if step and (got - at0) % step == 0 and (got - at0) // step >= 0 and \
                    expr({**symbols, name: (got - at0) // step}) == got:
                symbols[name] = (got - at0) // step
                origins[name] = f"{where} dim {dim} ({source} = {got})"
                unknown = []
        if unknown:
            if partial and len(unknown) > 1:
                continue  # the arguments still to come may give all but one
            raise ArgumentError(f"{where}: dim {dim} is {source} = {got} (shape {shape}), which "
                                f"gives no whole value of {', '.join(unknown)}")
        want = expr(symbols)
        if got != want:
            known = ", ".join(f"{n} = {symbols[n]} (from {origins.get(n, 'a scalar')})"
                              for n in sorted(expr.symbols))
            raise ArgumentError(f"{where}: dim {dim} must be {source} = {want} with {known}, "
                                f"got {got} (shape {shape})")


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _check_strides(t: TensorArg, p: Param, where: str, symbols: dict[str, int],
                   origins: dict[str, str]) -> None:
    """A T.StridedTensor argument's strides (elements): each int one as
    declared, each symbol bound (or checked against its value)."""
    strides = t.strides if t.strides is not None else row_major(t.shape)
    for dim, (want, got) in enumerate(zip(p.strides, strides, strict=True)):
        if isinstance(want, int):
            if got != want and not (t.shape[dim] == 1 or 0 in t.shape):
                raise ArgumentError(f"{where}: dim {dim}'s stride must be {want}, got {got} "
                                    f"(strides {tuple(strides)}, in elements)")
        else:
            _bind_symbol(symbols, origins, want, got, where, f"dim {dim}'s stride",
                         f"argument '{p.name}' dim {dim}'s stride")


def _bind_symbol(symbols: dict[str, int], origins: dict[str, str], name: str, value: int,
                 where: str, what: str, origin: str) -> None:
    """Binds a size or stride symbol, or checks it against the value bound."""
    if name not in symbols:
        symbols[name], origins[name] = value, origin
    elif value != symbols[name]:
        raise ArgumentError(f"{where}: {what} is symbol {name} = {value}, but "
                            f"{origins[name]} set {name} = {symbols[name]}")


def _check_tensor(t: TensorArg, p: Param, where: str, symbols: dict[str, int],
                  origins: dict[str, str], sized: list) -> None:
    if t.dtype != p.dtype:
        raise ArgumentError(f"{where}: expected dtype {p.dtype}, got {t.dtype}")
    if len(t.shape) != len(p.shape):
        expected = "[" + ", ".join(str(d) for d in p.shape) + "]"
        raise ArgumentError(
            f"{where}: expected a rank-{len(p.shape)} tensor of shape {expected}, "
            f"got rank {len(t.shape)} with shape {tuple(t.shape)}")
    for dim, (want, got) in enumerate(zip(p.shape, t.shape, strict=True)):
        if isinstance(want, int):
            if got != want:
                raise ArgumentError(
                    f"{where}: dim {dim} must be {want}, got {got} (shape {tuple(t.shape)})")
        elif not want.isidentifier():  # `(seq_len * 32)`: once the symbols are known
            sized.append((where, dim, got, want, tuple(t.shape)))
        else:
            _bind_symbol(symbols, origins, want, got, where, f"dim {dim}",
                         f"argument '{p.name}' dim {dim}")
    if p.strides:
        _check_strides(t, p, where, symbols, origins)
    elif t.strides is not None and 0 not in t.shape:
        expected = row_major(t.shape)
        for n, got, want in zip(t.shape, t.strides, expected, strict=True):
            if n != 1 and got != want:  # a size-1 dim's stride never matters
                raise ArgumentError(
                    f"{where}: must be row-major contiguous; shape {tuple(t.shape)} has "
                    f"strides {tuple(t.strides)} (elements), expected {expected}")
    if t.ptr == 0 and 0 not in t.shape:
        raise ArgumentError(f"{where}: data pointer is null (the tensor has "
                            f"{_elements(t.shape)} elements)")
    if t.ptr % ALIGNMENT and 0 not in t.shape:
        raise ArgumentError(
            f"{where}: data pointer {t.ptr:#x} is not {ALIGNMENT}-byte aligned "
            f"(the kernel uses {ALIGNMENT}-byte vector accesses)")
    if t.readonly and p.access != "read":
        raise ArgumentError(f"{where}: is read-only, but the kernel writes it")


def _elements(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


# ---- Tensor arguments -------------------------------------------------------


@dataclass(frozen=True)
class DeviceBuffer:
    """A row-major tensor in device memory the runtime allocated itself (the
    global scratch of a kernel sequence when no torch tensor is at hand)."""

    ptr: int
    dtype: str
    shape: tuple[int, ...]


def is_torch_tensor(obj) -> bool:
    # By module name, so that torch is never imported here.
    return type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "data_ptr")


def tensor_arg(arg, where: str) -> TensorArg:
    if is_torch_tensor(arg):
        return _from_torch(arg, where)
    if isinstance(arg, DeviceBuffer):
        return TensorArg(ptr=arg.ptr, dtype=arg.dtype, shape=arg.shape, strides=None,
                         device=None)
    try:
        cai = arg.__cuda_array_interface__
    except AttributeError:
        cai = None
    if cai is not None:
        return _from_cai(cai, where)
    if hasattr(arg, "__dlpack__"):
        return _from_dlpack(arg, where)
    raise ArgumentError(
        f"{where}: expected a CUDA tensor (a torch tensor, or an object with "
        f"__cuda_array_interface__ or __dlpack__), got {type(arg).__name__}")


def _from_torch(t, where: str) -> TensorArg:
    if t.device.type != "cuda":
        raise ArgumentError(f"{where}: is a tensor on {t.device}; a CUDA tensor is required")
    return TensorArg(ptr=t.data_ptr(), dtype=str(t.dtype).removeprefix("torch."),
                     shape=tuple(t.shape), strides=tuple(t.stride()),
                     device=t.device.index, is_torch=True)


def _from_cai(cai: dict, where: str) -> TensorArg:
    try:
        shape = tuple(int(n) for n in cai["shape"])
        typestr = str(cai["typestr"])
        ptr, readonly = cai["data"]
        byte_strides = cai.get("strides")
    except (KeyError, TypeError, ValueError) as e:
        raise ArgumentError(f"{where}: malformed __cuda_array_interface__ ({e})") from None
    if cai.get("mask") is not None:
        raise ArgumentError(f"{where}: masked arrays are not supported")
    if typestr[:1] in "<|=" and typestr[1:] in TYPESTR:
        dtype = TYPESTR[typestr[1:]]
    else:
        dtype = f"an unsupported type (typestr {typestr!r})"
    strides = None
    if byte_strides is not None:
        itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 1
        if any(s % itemsize for s in byte_strides):
            raise ArgumentError(
                f"{where}: strides {tuple(byte_strides)} (bytes) are not multiples "
                f"of the element size {itemsize}")
        strides = tuple(s // itemsize for s in byte_strides)
    return TensorArg(ptr=int(ptr or 0), dtype=dtype, shape=shape, strides=strides,
                     device=None, readonly=bool(readonly))


_DL_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host (pinned)", 13: "CUDA managed"}


def _from_dlpack(obj, where: str) -> TensorArg:
    def off_device(device_type: int) -> ArgumentError:
        name = _DL_DEVICE_NAMES.get(device_type, "a non-CUDA device")
        return ArgumentError(
            f"{where}: is in {name} memory (DLPack device type {device_type}); "
            f"a CUDA tensor is required")

    if hasattr(obj, "__dlpack_device__"):  # ask first: exporting may copy
        device_type = int(obj.__dlpack_device__()[0])
        if device_type != dlpack.KDL_CUDA:
            raise off_device(device_type)
    capsule = dlpack.export(obj)
    t = dlpack.read_capsule(capsule)
    if t is None:
        raise ArgumentError(f"{where}: __dlpack__ did not return an unconsumed 'dltensor' capsule")
    if t.device.device_type != dlpack.KDL_CUDA:
        raise off_device(t.device.device_type)
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    dtype = DLPACK.get((code, bits)) if lanes == 1 else None
    if dtype is None:
        dtype = f"an unsupported type (DLPack code {code}, {bits} bits, {lanes} lanes)"
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    return TensorArg(ptr=(t.data or 0) + t.byte_offset, dtype=dtype, shape=shape,
                     strides=strides, device=t.device.device_id, keepalive=capsule)


# ---- Scalar arguments -------------------------------------------------------


def scalar_value(v, p: Param, where: str):
    dt = DTYPES[p.dtype]
    if dt.kind == "b":
        if isinstance(v, bool) or type(v).__name__ == "bool_" or (
                isinstance(v, numbers.Integral) and v in (0, 1)):
            return ctypes.c_bool(bool(v))
        raise ArgumentError(f"{where}: expected a bool, got {_show(v)}")
    if dt.kind in "iu":
        if not isinstance(v, numbers.Integral):
            raise ArgumentError(f"{where}: expected an int for a {p.dtype} scalar, got {_show(v)}")
        bits = 8 * dt.itemsize
        if dt.kind == "i":
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        else:
            lo, hi = 0, (1 << bits) - 1
        if not lo <= int(v) <= hi:
            raise ArgumentError(f"{where}: {int(v)} does not fit in {p.dtype}")
        return dt.ctype(int(v))
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ArgumentError(f"{where}: expected a number for a {p.dtype} scalar, got {_show(v)}")
    x = float(v)
    try:
        if p.dtype == "float16":
            return ctypes.c_uint16(struct.unpack("<H", struct.pack("<e", x))[0])
        if p.dtype == "bfloat16":
            return ctypes.c_uint16(_bfloat16_bits(x))
        if dt.itemsize == 1:
            raise ArgumentError(f"{where}: {p.dtype} scalar parameters are not supported; "
                                "declare the scalar float32")
    except OverflowError:
        raise ArgumentError(f"{where}: {x} does not fit in {p.dtype}") from None
    return dt.ctype(x)


def _bfloat16_bits(x: float) -> int:
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        return 0x7FC0  # NaN: rounding could turn it into infinity
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF  # round to nearest even


def _show(v) -> str:
    text = repr(v)
    return f"{type(v).__name__} {text if len(text) < 40 else text[:37] + '...'}"
