"""The launch fast path for torch tensors.

A call whose arguments were all checked once (tlc.runtime.args.bind) leaves a
CallPlan keyed by what those checks read: each tensor's dtype, shape, strides
and device, and the value of each integer scalar that sizes or grid
expressions name. A later call with the same key skips bind: it reads only the
data pointers (checking that they are non-null and aligned) and the other
scalars (encoded as bind does), packs every kernel parameter into one 8-byte
slot and launches with one call into the runtime library, which makes the
tensors' device current for the launch only (so torch's device guard is not
needed). Anything the plan does not cover (other tensor kinds, a null or
misaligned pointer, a scalar of another type or out of range, a new shape)
goes through the full checks again, which also give the errors.

Each Signature reads a call's key with a function made for its parameters
(`probe`), and each plan packs a call with one made for the plan (`pack`):
straight-line Python generated once (as dataclasses generates its methods),
since a loop over the parameters cost more than the launch itself. Both do
only what the old loops did: the same attribute reads, the same checks.

When the extension module tlc.runtime._launch (runtime/tlc_launch.c) is
built, each Kernel also hands its plans to a native Launcher, which does the
probe, the checks of `pack` and the launch in C for a call that matches one
of its recent plans (the same key, read from the same attributes), and
returns None for any other call, which then takes the Python path above
(native_launcher; TLC_NATIVE_LAUNCH=0 turns it off, TLC_LAUNCH_MODULE names
the module's file where it is not beside this one).

A kernel with TMA tensor maps takes their CUtensorMaps after the slots, 128
bytes each. The plan fixes the mapped tensors' shapes, so a map changes only
with the pointers: the plan keeps the maps it encoded by the mapped tensors'
pointers, and a call with pointers seen before encodes nothing.
"""

import ctypes
import functools
import os
import struct
from dataclasses import dataclass, field

from .args import ALIGNMENT, Bound, Param, scalar_value
from .driver import launch_plan
from .dtypes import DTYPES
from .errors import ArgumentError

# Plans per kernel; past this many distinct keys the table is emptied.
MAX_PLANS = 64
# Encoded tensor maps per plan (by the mapped pointers), emptied likewise.
MAX_ENCODED = 16

_torch_tensor_type = None  # torch.Tensor once seen: exact type checks are fast
_raw_stream = None  # torch's current-stream getter, once torch is in use

# The slot of a free scalar of each ctypes type, for the Python types that
# scalar_value passes through unchanged (struct range-checks ints and
# float32's magnitude; a failure sends the call to the full checks).
_SLOT_CODES = {ctypes.c_int8: "b7x", ctypes.c_int16: "h6x", ctypes.c_int32: "i4x",
               ctypes.c_int64: "q", ctypes.c_uint8: "B7x", ctypes.c_uint16: "H6x",
               ctypes.c_uint32: "I4x", ctypes.c_uint64: "Q", ctypes.c_float: "f4x", ctypes.c_double: "d",
               ctypes.c_bool: "?7x"}
_PACK_ERRORS = (struct.error, OverflowError, TypeError, ValueError, ArgumentError)


@dataclass(frozen=True)
class CallPlan:
    rt: object  # the driver.Runtime that loaded fn
    device: int
    fn: int  # the CUfunction in the device's primary context
    grid: tuple[int, int, int]
    dims: bytes  # grid, block and shared memory size for Runtime.launch_on
    # Per parameter, in order: for a tensor the packed slots after its two
    # pointers (offset, sizes, strides) and whether it holds any element;
    # for a scalar its packed slot when the key fixes it, else None.
    fixed: tuple
    where: tuple[str, ...]  # how messages name each parameter
    # Per TMA tensor map: (TensorMap, its tensor's position among the tensor
    # arguments, the tensor's shape).
    maps: tuple = ()
    n_maps: int = 0
    # Mapped pointers -> their CUtensorMaps, concatenated.
    encoded: dict = field(default_factory=dict)
    launches: bool = True  # False: an empty grid, the call is a no-op
    header: bytes = b""  # driver.launch_plan of this plan
    # pack(stream, args, ptrs): the stream and the slots, or None when the
    # full checks must see the call (see _packer).
    pack: object = None
    launch: object = None  # Runtime.launcher()
    # Per parameter, what the native Plan checks and packs (native_specs).
    specs: tuple = ()
    n_slots: int = 0  # 8-byte slots of a call, the tensor maps' included


def note_torch_type(t) -> None:
    global _torch_tensor_type
    if _torch_tensor_type is None and type(t).__module__.split(".")[0] == "torch":
        _torch_tensor_type = type(t)


@dataclass(frozen=True)
class Signature:
    """Where a kernel's parameters are, as call_key reads them."""

    n: int
    tensors: tuple[int, ...]
    fixed_scalars: tuple[int, ...]  # integer scalars named by sizes or the grid
    free_scalars: tuple[int, ...]
    # probe(args): (key, the tensors' data pointers), or None when the call
    # has another argument count or a tensor argument that is not exactly a
    # torch.Tensor. The key may be unhashable (then no plan has it).
    probe: object = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, params: tuple[Param, ...], named: set[str]) -> "Signature":
        kinds = [("t" if p.kind == "tensor" else "f" if p.name in named else "s")
                 for p in params]
        pick = lambda k: tuple(i for i, x in enumerate(kinds) if x == k)  # noqa: E731
        tensors, fixed, free = pick("t"), pick("f"), pick("s")
        return cls(len(params), tensors, fixed, free, _prober(len(params), tensors, fixed, free))


def _prober(n: int, tensors, fixed, free):
    """Signature.probe for these positions, as straight-line code: per
    tensor its dtype, shape, strides and device in the key, and its data
    pointer; per fixed scalar its type and value; per free scalar its type."""
    names = [f"a{i}" for i in range(n)]
    key = [f"a{i}.dtype, a{i}.shape, a{i}.stride(), a{i}.get_device()" for i in tensors]
    key += [f"type(a{i}), a{i}" for i in fixed] + [f"type(a{i})" for i in free]
    lines = ["def probe(args):",
             f"    if len(args) != {n}:",
             "        return None"]
    if n:
        lines.append(f"    {', '.join(names)}, = args")
    if tensors:
        lines += ["    tensor = _plans._torch_tensor_type",
                  "    if " + " or ".join(f"type(a{i}) is not tensor" for i in tensors) + ":",
                  "        return None"]
    ptrs = "".join(f"a{i}.data_ptr(), " for i in tensors)
    lines.append(f"    return ({', '.join(key)}{',' if len(key) == 1 else ''}), ({ptrs})")
    return _compile("\n".join(lines), "probe", {})


_compiled: dict = {}  # generated source -> its code object


def _compile(source: str, name: str, constants: dict):
    """The function `name` that `source` defines, over `constants` (and
    this module as _plans)."""
    code = _compiled.get(source)
    if code is None:
        code = _compiled[source] = compile(source, f"<tlc.runtime.plans {name}>", "exec")
    scope = {"_plans": _this_module(), **constants}
    exec(code, scope)  # noqa: S102 - source built above from ints and names only
    return scope[name]


def _this_module():
    import sys

    return sys.modules[__name__]


def call_key(sig: Signature, args: tuple):
    """The plan key of a call and its tensors' data pointers, or None when a
    tensor argument is not exactly a torch.Tensor (or a scalar is
    unhashable: bind will say what is wrong)."""
    called = sig.probe(args)
    if called is None:
        return None
    try:
        hash(called[0])
    except TypeError:
        return None
    return called


def make_plan(params: tuple[Param, ...], sig: Signature, bound: Bound, rt, fn: int, grid,
              dims: bytes, where, args: tuple, name: bytes, key: tuple) -> CallPlan:
    """The plan of a call that `bound` checked (values in PTX order) with
    `args` (whose free scalars' types the plan's key fixes), whose plan key
    is `key`."""
    fixed, at = [], 0
    for i, p in enumerate(params):
        if p.kind == "tensor":
            rank = len(p.shape)
            tail = b"".join(bytes(v).ljust(8, b"\0") for v in bound.values[at + 2:at + 3 + 2 * rank])
            sizes = [v.value for v in bound.values[at + 3:at + 3 + rank]]
            fixed.append((tail, 0 not in sizes))
            at += 3 + 2 * rank
        else:  # a scalar the key fixes is packed once
            fixed.append(bytes(bound.values[at]).ljust(8, b"\0")
                         if i in sig.fixed_scalars else None)
            at += 1
    maps = tuple((m, sig.tensors.index(m.param.index - 1), shape) for m, _, shape in bound.maps)
    encoded = {}
    if maps:  # what the call that made the plan encoded
        encoded[tuple(ptr for _, ptr, _ in bound.maps)] = b"".join(map(bytes, bound.encoded))
    n_slots = len(bound.values) + 16 * len(maps)
    return CallPlan(rt, bound.device, fn, tuple(grid), dims, tuple(fixed), tuple(where),
                    maps, len(maps), encoded, launches=0 not in grid,
                    header=launch_plan(bound.device, fn, dims, n_slots, len(maps), name),
                    pack=_packer(params, fixed, where, args), launch=rt.launcher(),
                    specs=native_specs(params, sig, key, fixed, where), n_slots=n_slots)


def _packer(params, fixed, where, args):
    """CallPlan.pack for a plan's constant slots `fixed`: one struct.pack of
    the stream, each tensor's pointer twice then its constant slots, each
    scalar's slot. None (the full checks then report it) when a tensor
    holding elements has a null or misaligned pointer, or a free scalar does
    not encode (scalar_value's errors, or a value struct refuses)."""
    fmt, values, constants, held = ["<Q"], ["stream"], {}, []
    t = 0
    for i, p in enumerate(params):
        if p.kind == "tensor":
            tail, holds = fixed[i]
            fmt.append(f"QQ{len(tail)}s")
            values += [f"p[{t}]", f"p[{t}]", f"F{i}"]
            constants[f"F{i}"] = tail
            if holds:
                held.append(f"p[{t}]")
            t += 1
        elif fixed[i] is not None:
            fmt.append("8s")
            values.append(f"F{i}")
            constants[f"F{i}"] = fixed[i]
        else:
            code = _slot_code(DTYPES[p.dtype], type(args[i]))
            if code is not None:
                fmt.append(code)
                values.append(f"args[{i}]")
            else:
                fmt.append("8s")
                values.append(f"_slot(args[{i}], P{i}, W{i})")
                constants[f"P{i}"], constants[f"W{i}"] = p, where[i]
    constants.update(S=struct.Struct("".join(fmt)), _slot=_slot, _ERRORS=_PACK_ERRORS)
    lines = ["def pack(stream, args, p):"]
    if held:
        lines += [f"    if ({' | '.join(held)}) % {ALIGNMENT} or not ({' and '.join(held)}):",
                  "        return None"]
    lines += ["    try:",
              f"        return S.pack({', '.join(values)})",
              "    except _ERRORS:",
              "        return None"]
    return _compile("\n".join(lines), "pack", constants)


def _slot_code(dt, kind: type) -> str | None:
    """The struct code of a free scalar's slot when scalar_value encodes a
    value of this Python type as struct does (ints for integer dtypes, floats
    and ints for float32 and float64, bools for bool), else None."""
    if dt.kind in "iu":
        ok = kind is int
    elif dt.kind == "f":  # float16, bfloat16 and fp8 go as bit patterns
        ok = (kind is float or kind is int) and dt.ctype in (ctypes.c_float, ctypes.c_double)
    else:
        ok = kind is bool
    return _SLOT_CODES.get(dt.ctype) if ok else None


def _slot(value, p: Param, where: str) -> bytes:
    return bytes(scalar_value(value, p, where)).ljust(8, b"\0")


def tensor_maps(plan: CallPlan, ptrs, kernel: str) -> bytes:
    """The CUtensorMaps of a call, encoded once per set of mapped pointers."""
    key = tuple(ptrs[t] for _, t, _ in plan.maps)
    maps = plan.encoded.get(key)
    if maps is None:
        maps = b"".join(bytes(m.encode(plan.rt, ptrs[t], shape, kernel))
                        for m, t, shape in plan.maps)
        if len(plan.encoded) >= MAX_ENCODED:
            plan.encoded.clear()
        plan.encoded[key] = maps
    return maps


def current_stream(device: int) -> int:
    """torch's current stream on `device`, as a CUstream handle."""
    return (_raw_stream or stream_getter())(device)


def stream_getter():
    """torch's getter of the current stream's CUstream handle of a device."""
    global _raw_stream
    if _raw_stream is None:
        import torch

        getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _raw_stream = getter or (lambda d: torch.cuda.current_stream(d).cuda_stream)
    return _raw_stream


# ---- The native launch path (runtime/tlc_launch.c) -------------------------------

NATIVE_ENV = "TLC_NATIVE_LAUNCH"  # "0": launch from plans in Python only
MODULE_ENV = "TLC_LAUNCH_MODULE"  # the extension's file, where it is not beside this one
_native_module = False  # tlc.runtime._launch once looked for; None where absent


def native_module():
    """tlc.runtime._launch, or None where it is not built (or is of another
    version than this file)."""
    global _native_module
    if _native_module is False:
        _native_module = _load_native()
    return _native_module


def _load_native():
    name = f"{__package__}._launch"
    path = os.environ.get(MODULE_ENV) or _built_elsewhere()
    try:
        if path:
            import importlib.machinery
            import importlib.util

            loader = importlib.machinery.ExtensionFileLoader(name, path)
            module = importlib.util.module_from_spec(
                importlib.util.spec_from_file_location(name, path, loader=loader))
            loader.exec_module(module)
        else:
            from . import _launch as module
    except ImportError:
        return None
    if getattr(module, "VERSION", None) != 1:
        return None
    from .errors import LaunchError

    module.set_launch_error(LaunchError)
    return module


def _built_elsewhere() -> str | None:
    """The extension in a built tlc's runtime/ when tlc is imported from a
    checkout (tlc/source_tree.py), as driver.library_path finds the library."""
    import importlib.machinery

    import tlc

    here = os.path.dirname(__file__)
    if any(os.path.exists(os.path.join(here, "_launch" + s))
           for s in importlib.machinery.EXTENSION_SUFFIXES):
        return None
    for folder in tlc.__path__[1:]:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "runtime", "_launch" + suffix)
            if os.path.exists(path):
                return path
    return None


def native_launcher():
    """A new native Launcher for a kernel's plans, or None: the module is
    not built, or TLC_NATIVE_LAUNCH is 0 (then the Python path launches)."""
    if os.environ.get(NATIVE_ENV, "1") == "0":
        return None
    module = native_module()
    return None if module is None else module.Launcher()


def native_specs(params, sig: Signature, key: tuple, fixed, where) -> tuple:
    """Per parameter, in order, what a native Plan checks and packs (the
    source of each is its position in the call): ("t", i, dtype, shape,
    strides, device, holds an element, the slots after its pointers) for a
    tensor, ("f", i, type, value, slot) for a scalar the key fixes, and ("s",
    i, type, struct code or a function packing the slot) for another scalar:
    the parts of `key` (call_key's) and of the plan's `fixed`."""
    parts, at = {}, 0
    for positions, width in ((sig.tensors, 4), (sig.fixed_scalars, 2), (sig.free_scalars, 1)):
        for i in positions:
            parts[i] = key[at:at + width]
            at += width
    specs = []
    for i, p in enumerate(params):
        if p.kind == "tensor":
            dtype, shape, strides, device = parts[i]
            tail, holds = fixed[i]
            specs.append(("t", i, dtype, shape, strides, device, holds, tail))
        elif fixed[i] is not None:
            specs.append(("f", i, *parts[i], fixed[i]))
        else:
            kind, = parts[i]
            code = _slot_code(DTYPES[p.dtype], kind)
            specs.append(("s", i, kind, code[0] if code else
                          functools.partial(_slot, p=p, where=where[i])))
    return tuple(specs)


def native_plan(plan: CallPlan, n_args: int, kernel: str, specs=None, outputs=(),
                empty=None):
    """The native Plan of `plan` of `kernel` for calls of n_args arguments (specs: its
    specs with other sources, the outputs' as -1, -2, ...; outputs: their
    (shape, dtype, device) for `empty`), or None where there is none: a
    runtime library without tlc_rt_launch_packed, or a key the native side
    cannot hold (other types than ints in shapes, a rank above 8)."""
    module, entry = native_module(), plan.rt.native_entry_points()
    if module is None or entry is None or _torch_tensor_type is None:
        return None
    try:
        return module.Plan(n_args, plan.specs if specs is None else specs, plan.device,
                           _torch_tensor_type, stream_getter(), *entry, plan.header,
                           8 + 8 * plan.n_slots, plan.launches, plan.n_maps,
                           functools.partial(tensor_maps, plan, kernel=kernel), outputs, empty)
    except (ValueError, TypeError, OverflowError):
        return None
