"""Host arguments -> interpreter values: numpy arrays, torch tensors, scalars.

Checks mirror the GPU runtime's (tlc.runtime.args): dtype, rank, static
sizes, one value per size symbol. numpy has no bfloat16 or float8: for
those parameters pass float32 arrays (their values are rounded to the type
on the way in; what the program stores comes back rounded) or torch tensors
of that dtype. Torch tensors on the CPU with a numpy dtype are used in place;
others (another device, bfloat16) are copied in and written back.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..dtypes import BY_NAME, TABLE
from ..runtime.args import check_sized
from ..runtime.errors import ArgumentError
from .buffers import Buffer

# From the one dtype table (tlc.dtypes): numpy's type where it has one; the
# others (bfloat16, fp8) are held as float32, rounded to the type.
_NUMPY = {d.name: np.dtype(d.numpy).type for d in TABLE if d.numpy}
_ROUNDED = tuple(d.name for d in TABLE if d.is_float and not d.numpy)


class Bound:
    """Bound argument values and how to return results to the caller's tensors."""

    def __init__(self):
        self.values: list = []
        self.symbols: dict = {}  # size symbol -> (value, where it was set)
        self._write_backs: list = []  # (buffer, function of its data)

    def write_back(self) -> None:
        for buf, back in self._write_backs:
            if buf.stored:
                back(buf.data)


def is_torch_tensor(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "data_ptr")


def bind_arguments(kernel: str, params, args) -> Bound:
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        raise ArgumentError(f"{kernel} takes {len(params)} arguments ({names}), "
                            f"got {len(args)}")
    bound = Bound()
    symbols = bound.symbols
    sized: list = []  # sizes declared as expressions (`(seq_len * 32)`), checked below
    for i, (p, arg) in enumerate(zip(params, args)):
        where = f"argument '{p.name}' (param {i + 1} of {kernel})"
        if p.kind == "scalar":
            bound.values.append(_scalar(p, arg, where))
            continue
        array, back = _host_array(p, arg, where)
        _check_shape(p, array.shape, where, symbols, sized)
        if p.strides:
            _check_strides(p, array, where, symbols)
        storage = array
        if p.dtype in _ROUNDED:
            storage = p.etype.round(array)
            back = back or _copy_into(array)
        elif BY_NAME[p.dtype].kind == "u":  # held in the signless type's numpy twin
            storage = array.view(f"int{BY_NAME[p.dtype].bits}")
        buf = Buffer(p.name, "global", p.etype, storage)
        bound.values.append(buf)
        if back is not None:
            bound._write_backs.append((buf, back))
    # The launcher's rules (tlc.runtime.args): checked against, or solved for,
    # the symbols the plain sizes bound.
    values = {name: v for name, (v, _) in symbols.items()}
    origins = {name: origin for name, (_, origin) in symbols.items()}
    check_sized(sized, values, origins)
    for name, v in values.items():
        symbols.setdefault(name, (v, origins[name]))
    return bound


def _copy_into(array):
    def back(data):
        array[...] = data

    return back


def _host_array(p, arg, where):
    """(numpy array, write-back function or None when the array is the caller's own)."""
    if is_torch_tensor(arg):
        return _from_torch(p, arg, where)
    if not isinstance(arg, np.ndarray):
        raise ArgumentError(f"{where}: expected a numpy array or a torch tensor, got "
                            f"{type(arg).__name__}")
    want = np.float32 if p.dtype in _ROUNDED else _NUMPY[p.dtype]
    if arg.dtype != want:
        extra = " (numpy has no bfloat16/float8: pass float32 values)" \
            if p.dtype in _ROUNDED else ""
        raise ArgumentError(f"{where}: expected dtype {p.dtype}{extra}, got {arg.dtype}")
    if not arg.flags.writeable:
        def refuse(_data):
            raise ArgumentError(f"{where}: is read-only, but the program wrote it")

        return arg.copy(), refuse
    return arg, None


def _from_torch(p, t, where):
    import torch

    name = str(t.dtype).removeprefix("torch.")
    torch_name = {"float8_e4m3fn": "float8_e4m3", "float8_e5m2": "float8_e5m2"}.get(name, name)
    if torch_name != p.dtype:
        raise ArgumentError(f"{where}: expected dtype {p.dtype}, got {name}")
    t = t.detach()
    if t.device.type == "cpu" and p.dtype not in _ROUNDED:
        return t.numpy(), None  # shares memory: written in place
    host = (t.float() if p.dtype in _ROUNDED else t).cpu().numpy().copy()

    def back(data):
        t.copy_(torch.from_numpy(np.ascontiguousarray(data)).to(t.dtype))

    return host, back


def _check_shape(p, shape, where, symbols, sized) -> None:
    if len(shape) != len(p.shape):
        expected = "[" + ", ".join(str(d) for d in p.shape) + "]"
        raise ArgumentError(f"{where}: expected a rank-{len(p.shape)} tensor of shape "
                            f"{expected}, got shape {tuple(shape)}")
    for dim, (want, got) in enumerate(zip(p.shape, shape)):
        if isinstance(want, int):
            if got != want:
                raise ArgumentError(f"{where}: dim {dim} must be {want}, got {got} "
                                    f"(shape {tuple(shape)})")
        elif want is not None and not want.isidentifier():
            sized.append((where, dim, got, want, tuple(shape)))
        elif want is not None:
            if want in symbols and symbols[want][0] != got:
                value, origin = symbols[want]
                raise ArgumentError(f"{where}: dim {dim} is symbol {want} = {got}, but "
                                    f"{origin} set {want} = {value}")
            symbols.setdefault(want, (got, f"argument '{p.name}' dim {dim}"))


def _check_strides(p, array, where, symbols) -> None:
    """A T.StridedTensor argument's strides, as the launcher checks them."""
    strides = tuple(s // array.itemsize for s in array.strides)
    for dim, (want, got) in enumerate(zip(p.strides, strides)):
        if isinstance(want, int):
            if got != want and array.shape[dim] != 1 and array.size:
                raise ArgumentError(f"{where}: dim {dim}'s stride must be {want}, got {got} "
                                    f"(strides {strides}, in elements)")
        elif want in symbols and symbols[want][0] != got:
            value, origin = symbols[want]
            raise ArgumentError(f"{where}: dim {dim}'s stride is symbol {want} = {got}, but "
                                f"{origin} set {want} = {value}")
        else:
            symbols.setdefault(want, (got, f"argument '{p.name}' dim {dim}'s stride"))


def _scalar(p, arg, where):
    if is_torch_tensor(arg) or isinstance(arg, np.ndarray):
        if np.ndim(arg) != 0:
            raise ArgumentError(f"{where}: expected a {p.dtype} scalar, got an array")
        arg = arg.item()
    if isinstance(arg, np.generic):
        arg = arg.item()
    if p.etype.kind == "b":
        if not isinstance(arg, (bool, np.bool_)):
            raise ArgumentError(f"{where}: expected a bool, got {type(arg).__name__}")
        return np.bool_(arg)
    if p.etype.is_float:
        if isinstance(arg, bool) or not isinstance(arg, numbers.Real):
            raise ArgumentError(f"{where}: expected a {p.dtype} number, got "
                                f"{type(arg).__name__}")
        return p.etype.make(float(arg))
    if isinstance(arg, bool) or not isinstance(arg, numbers.Integral):
        raise ArgumentError(f"{where}: expected a {p.dtype} integer, got {type(arg).__name__}")
    info = np.iinfo(_NUMPY[p.dtype] if BY_NAME[p.dtype].kind == "u" else p.etype.dtype)
    if not info.min <= arg <= info.max:
        raise ArgumentError(f"{where}: {arg} does not fit in {p.dtype}")
    return p.etype.make(int(arg))


def scratch_buffer(p, symbols: dict) -> Buffer:
    """A T.alloc_global tensor for one run, sized from the arguments' size
    symbols: its contents are undefined on the GPU, so floats start as NaN
    and integers as their type's largest value, which shows a read of an
    element no kernel wrote."""
    shape = tuple(symbols[d][0] if isinstance(d, str) else d for d in p.shape)
    storage = p.etype.dtype  # bfloat16 and fp8 live in float32 arrays
    if storage.kind == "f":
        data = np.full(shape, np.nan, dtype=storage)
    elif storage.kind == "b":
        data = np.ones(shape, dtype=storage)
    else:
        data = np.full(shape, np.iinfo(storage).max, dtype=storage)
    return Buffer(p.name, "global", p.etype, data)
