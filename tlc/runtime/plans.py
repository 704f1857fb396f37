"""The launch fast path for torch tensors.

A call whose arguments were all checked once (tlc.runtime.args.bind) leaves a
CallPlan keyed by what those checks read: each tensor's dtype, shape, strides
and device, and the value of each integer scalar that sizes or grid
expressions name. A later call with the same key skips bind: it reads only the
data pointers (checking their alignment) and the other scalars (checked and
encoded as bind does), packs every kernel parameter into one 8-byte slot and
launches with one call into the runtime library, which makes the tensors'
device current for the launch only (so torch's device guard is not needed).
Anything the plan does not cover (other tensor kinds, a misaligned pointer, a
new shape) goes through the full checks again, which also give the errors.

A kernel with TMA tensor maps takes their CUtensorMaps after the slots, 128
bytes each. The plan fixes the mapped tensors' shapes, so a map changes only
with the pointers: the plan keeps the maps it encoded by the mapped tensors'
pointers, and a call with pointers seen before encodes nothing.
"""

import struct
from dataclasses import dataclass, field

from .args import ALIGNMENT, Bound, Param, scalar_value

# Plans per kernel; past this many distinct keys the table is emptied.
MAX_PLANS = 64
# Encoded tensor maps per plan (by the mapped pointers), emptied likewise.
MAX_ENCODED = 16

_PAIR = struct.Struct("<QQ")
_torch_tensor_type = None  # torch.Tensor once seen: exact type checks are fast
_raw_stream = None  # torch's current-stream getter, once torch is in use


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

    @classmethod
    def of(cls, params: tuple[Param, ...], named: set[str]) -> "Signature":
        kinds = [("t" if p.kind == "tensor" else "f" if p.name in named else "s")
                 for p in params]
        pick = lambda k: tuple(i for i, x in enumerate(kinds) if x == k)  # noqa: E731
        return cls(len(params), pick("t"), pick("f"), pick("s"))


def call_key(sig: Signature, args: tuple):
    """The plan key of a call and its tensors' data pointers, or None when a
    tensor argument is not exactly a torch.Tensor."""
    tensor_type = _torch_tensor_type
    if tensor_type is None or len(args) != sig.n:
        return None
    key, ptrs = [], []
    for i in sig.tensors:
        a = args[i]
        if type(a) is not tensor_type:
            return None
        key.append((a.dtype, a.shape, a.stride(), a.get_device()))
        ptrs.append(a.data_ptr())
    for i in sig.fixed_scalars:
        key.append((type(args[i]), args[i]))
    for i in sig.free_scalars:
        key.append(type(args[i]))
    key = tuple(key)
    try:
        hash(key)
    except TypeError:  # an unhashable scalar: bind will say what is wrong
        return None
    return key, ptrs


def make_plan(params: tuple[Param, ...], sig: Signature, bound: Bound, rt, fn: int, grid,
              dims: bytes, where) -> CallPlan:
    """The plan of a call that `bound` checked (values in PTX order)."""
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
    return CallPlan(rt, bound.device, fn, tuple(grid), dims, tuple(fixed), tuple(where),
                    maps, len(maps), encoded)


def pack(plan: CallPlan, params: tuple[Param, ...], args: tuple, ptrs: list[int],
         kernel: str) -> bytes | None:
    """The parameter slots of a call that matched `plan`, then its tensor
    maps, or None when a pointer is misaligned (the full checks then report
    it)."""
    parts, t = [], 0
    for i, p in enumerate(params):
        fixed = plan.fixed[i]
        if p.kind == "tensor":
            ptr = ptrs[t]
            t += 1
            if ptr % ALIGNMENT and fixed[1]:
                return None
            parts.append(_PAIR.pack(ptr, ptr))
            parts.append(fixed[0])
        elif fixed is not None:
            parts.append(fixed)
        else:
            parts.append(bytes(scalar_value(args[i], p, plan.where[i])).ljust(8, b"\0"))
    if plan.maps:
        parts.append(_tensor_maps(plan, ptrs, kernel))
    return b"".join(parts)


def _tensor_maps(plan: CallPlan, ptrs: list[int], kernel: str) -> bytes:
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
    global _raw_stream
    if _raw_stream is None:
        import torch

        getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _raw_stream = getter or (lambda d: torch.cuda.current_stream(d).cuda_stream)
    return _raw_stream(device)
