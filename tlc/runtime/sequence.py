"""Artifacts of several kernels (format version 2): a prim_func with several
`with T.Kernel(...)` blocks, or with T.alloc_global scratch tensors.

    {"format": "tlc-kernel", "version": 2, "name": "splitk", "target": "sm_90a",
     "params": [... the caller's parameters, as in version 1 ...],
     "scratch": [{"name": "partial", "dtype": "float32", "shape": [4, "M", "N"]},
                 {"name": "flags", "dtype": "int32", "shape": ["__sm_count__"],
                  "zero_fill": true}],
     "kernels": [{... a complete version-1 artifact ...}, ...],
     "tlc_version": "0.1.0"}

Each entry of "kernels" is a version-1 artifact (tlc/runtime/artifact.py)
whose parameters are the sequence's "params" followed by its "scratch"
tensors, in that order. A call checks the arguments against "params",
allocates the scratch tensors (their sizes are ints, size symbols of the
parameters and __sm_count__, the multiprocessor count of the call's device,
as in grid expressions: per-multiprocessor scratch of persistent kernels,
e.g. stream-K's partial tiles), then launches the kernels in order on one
stream, so each sees what the kernels before it wrote.

A scratch entry with "view_of": "X" is a view (`T.Tensor(shape, dtype,
X.data)`): nothing is allocated; the call passes parameter X's memory with
the entry's shape (tensor parameters are row-major and contiguous), after
checking that the element counts agree.

Scratch contents are undefined when a call starts, except those of an
entry with "zero_fill": true (never a view), which are zeros when the first
kernel starts: set at every call, on the call's stream, before the launches
(e.g. stream-K's flags). Where they come from:

- torch tensor arguments: torch.empty (torch.zeros for "zero_fill") on
  their device at every call, from torch's caching allocator on the launch
  stream (as out_idx outputs are), so the memory returns to the allocator
  when the call returns and is reused by later work on that stream only
  after these launches; CUDA-graph capture and torch.compile see ordinary
  allocations.
- other arguments (__cuda_array_interface__, DLPack): one driver allocation
  per (CUDA context, stream), kept by the KernelSequence and reused by every
  later call on that stream, which the stream orders after the earlier
  launches; it grows (after a synchronize) when a call needs more, and is
  freed when the KernelSequence is collected. "zero_fill" entries are
  cleared with cuMemsetD8Async on the call's stream at every call.
"""

import copy
import threading
import weakref

from . import plans
from .args import DeviceBuffer, bind, tensor_arg
from .artifact import SM_COUNT
from .driver import runtime
from .dtypes import DTYPES
from .errors import ArgumentError, ArtifactError

VERSION = 2
SCRATCH_ALIGNMENT = 256  # bytes, as cuMemAlloc aligns


class KernelSequence:
    """A loaded version-2 artifact. Call it with one argument per parameter,
    like a Kernel."""

    def __init__(self, metadata: dict):
        from .artifact import FORMAT, Kernel, parse_params

        self.metadata = copy.deepcopy(metadata)
        if metadata.get("format") != FORMAT or metadata.get("version") != VERSION:
            raise ArtifactError(f"a kernel sequence is format {FORMAT!r} version {VERSION}, "
                                f"got {metadata.get('format')!r} {metadata.get('version')!r}")
        self.name = _need(metadata, "name", str)
        self.target = metadata.get("target")
        self.params = parse_params(_need(metadata, "params", list))
        self.scratch = tuple(_scratch(i, s, self.params)
                             for i, s in enumerate(_need(metadata, "scratch", list), 1))
        kernels = _need(metadata, "kernels", list)
        if not kernels:
            raise ArtifactError("'kernels' lists no kernel")
        self.kernels = tuple(Kernel(k) for k in kernels)
        self._check_kernel_params()
        self._signature = plans.Signature.of(self.params, set())
        self._uses_sm_count = any(SM_COUNT in s.shape for s in self.scratch)
        # plans.call_key -> (scratch shapes, torch device); the key holds each
        # tensor's device, so shapes of __sm_count__ are per device.
        self._shapes: dict = {}
        self._lock = threading.Lock()
        self._blocks: dict = {}  # (context, stream) -> (pointer, bytes) of driver scratch
        weakref.finalize(self, _free_blocks, self._blocks)

    def _check_kernel_params(self) -> None:
        """Each kernel takes the parameters, then the scratch tensors."""
        want = [(p.name, p.kind, p.dtype, p.shape) for p in self.params]
        want += [(s.name, "tensor", s.dtype, s.shape) for s in self.scratch]
        for k in self.kernels:
            got = [(p.name, p.kind, p.dtype, p.shape) for p in k.params]
            if got != want:
                raise ArtifactError(
                    f"kernel {k.name!r} takes {[g[0] for g in got]}, but the sequence passes "
                    f"its parameters and scratch tensors {[w[0] for w in want]}")

    @classmethod
    def from_dict(cls, metadata: dict) -> "KernelSequence":
        return cls(metadata)

    def to_dict(self) -> dict:
        return copy.deepcopy(self.metadata)

    @property
    def ptx(self) -> str:
        """Every kernel's PTX, in launch order (see artifact_ptx)."""
        from .artifact import artifact_ptx

        return artifact_ptx(self.metadata)

    def __repr__(self) -> str:
        return (f"<tlc KernelSequence {self.name} ({', '.join(p.name for p in self.params)}): "
                f"{', '.join(k.name for k in self.kernels)}>")

    # ---- Calling ------------------------------------------------------------

    def __call__(self, *args, stream=None) -> None:
        """Launches every kernel in order, on `stream` (as Kernel.__call__
        takes it; None: torch's current stream for torch tensors, else the
        default stream)."""
        shapes, torch_device, bound = self._scratch_shapes(args)
        if torch_device is not None:
            scratch = self._torch_scratch(shapes, torch_device, stream)
        else:
            scratch = self._driver_scratch(shapes, bound, stream)
        for i, s in enumerate(self.scratch):
            if s.view_of is not None:
                scratch[i] = s.view(args[s.view_of], shapes[i], self.name)
        for kernel in self.kernels:
            kernel(*args, *scratch, stream=stream)

    def _scratch_shapes(self, args):
        """(the scratch tensors' shapes, the torch device or None, the checked
        call or None); torch calls of a signature seen before skip the checks,
        which each kernel's launch makes again."""
        called = plans.call_key(self._signature, args)
        cached = self._shapes.get(called[0]) if called else None
        if cached is not None:
            return cached[0], cached[1], None
        bound = bind(self.name, self.params, args)
        sm_count = self._sm_count(bound) if self._uses_sm_count else None
        shapes = [s.sized(bound.symbols, self.name, sm_count) for s in self.scratch]
        if called and bound.torch_device is not None:
            if len(self._shapes) >= plans.MAX_PLANS:
                self._shapes.clear()
            self._shapes[called[0]] = (shapes, bound.torch_device)
        return shapes, bound.torch_device, bound

    def _sm_count(self, bound) -> int:
        """The multiprocessor count of a checked call's device: the value
        its kernels' grids take for __sm_count__ (the same cache)."""
        rt, first = runtime(), self.kernels[0]
        if bound.torch_device is None:
            return first._sm_count(rt, first._enter(rt, bound))
        import torch

        with torch.cuda.device(bound.torch_device):  # restores torch's current device
            return first._sm_count(rt, first._enter(rt, bound))

    def _torch_scratch(self, shapes, device: int, stream) -> list:
        import torch

        from .dtypes import torch_dtype

        where = torch.device("cuda", device)
        # Views take no memory of their own (None here; __call__ fills them).
        made = [(torch.zeros if s.zero_fill else torch.empty, shape, torch_dtype(s.dtype))
                if s.view_of is None else None for shape, s in zip(shapes, self.scratch)]
        if stream is None:
            return [m and m[0](m[1], dtype=m[2], device=where) for m in made]
        if not isinstance(stream, torch.cuda.Stream):  # allocate for the launch's stream
            stream = torch.cuda.ExternalStream(self.kernels[0]._stream_handle(stream),
                                               device=where)
        with torch.cuda.stream(stream):  # torch.zeros fills on it too
            return [m and m[0](m[1], dtype=m[2], device=where) for m in made]

    def _driver_scratch(self, shapes, bound, stream) -> list:
        """DeviceBuffers carved from the (context, stream)'s driver allocation."""
        offsets, total = [], 0
        for shape, s in zip(shapes, self.scratch):
            total = -(-total // SCRATCH_ALIGNMENT) * SCRATCH_ALIGNMENT
            offsets.append(total)
            if s.view_of is None:  # views take no memory of their own
                total += _elements(shape) * DTYPES[s.dtype].itemsize
        if not total:
            return [None] * len(self.scratch)
        rt = runtime()
        self.kernels[0]._enter(rt, bound)  # the arguments' device's context
        handle = 0 if stream is None else self.kernels[0]._stream_handle(stream)
        key = (rt.current_context(), handle)
        with self._lock:
            ptr, size, _ = self._blocks.get(key, (0, -1, None))
            if size < total:
                if ptr:
                    rt.synchronize()  # earlier launches may still use it
                    del self._blocks[key]
                    rt.mem_free(ptr)
                ptr = rt.mem_alloc(total)
                self._blocks[key] = (ptr, total, rt)
        for off, shape, s in zip(offsets, shapes, self.scratch):
            if s.zero_fill and _elements(shape):
                rt.memset_d8_async(ptr + off, 0, _elements(shape) * DTYPES[s.dtype].itemsize,
                                   handle)
        return [DeviceBuffer(ptr + off, s.dtype, tuple(shape)) if s.view_of is None else None
                for off, shape, s in zip(offsets, shapes, self.scratch)]


class Scratch:
    """One scratch tensor of a sequence: name, dtype, shape (ints and symbols),
    whether a call starts it at zero; a view names the parameter (its 0-based
    position) whose memory it is."""

    def __init__(self, name: str, dtype: str, shape: tuple, view_of: int | None = None,
                 base: str = "", zero_fill: bool = False):
        self.name, self.dtype, self.shape = name, dtype, shape
        self.view_of, self.base, self.zero_fill = view_of, base, zero_fill

    def view(self, arg, shape: tuple[int, ...], kernel: str):
        """Parameter `arg`'s memory with this view's shape and dtype (its
        row-major contiguity was checked with the arguments)."""
        t = tensor_arg(arg, f"argument '{self.base}' of {kernel}")
        size = DTYPES[self.dtype].itemsize
        base_size = DTYPES[t.dtype].itemsize if t.dtype in DTYPES else size
        if _elements(shape) * size != _elements(t.shape) * base_size:
            raise ArgumentError(
                f"{kernel}: view '{self.name}' {tuple(shape)} {self.dtype} has "
                f"{_elements(shape) * size} bytes, but argument '{self.base}' "
                f"{tuple(t.shape)} {t.dtype} has {_elements(t.shape) * base_size}; a view "
                "has as many bytes as its tensor")
        if t.is_torch:
            if not arg.is_contiguous():
                raise ArgumentError(f"{kernel}: argument '{self.base}' must be row-major "
                                    f"contiguous (view '{self.name}' is of its memory)")
            if t.dtype != self.dtype:
                from .dtypes import torch_dtype

                return arg.reshape(-1).view(torch_dtype(self.dtype)).view(shape)
            return arg.view(shape)
        return DeviceBuffer(t.ptr, self.dtype, tuple(shape))

    def sized(self, symbols: dict[str, int], kernel: str,
              sm_count: int | None = None) -> tuple[int, ...]:
        """The shape for a call whose size symbols are `symbols`; sm_count is
        the value of __sm_count__, given when the shape names it."""
        if sm_count is not None:
            symbols = {**symbols, SM_COUNT: sm_count}
        try:
            return tuple(symbols[d] if isinstance(d, str) else d for d in self.shape)
        except KeyError as e:
            raise ArgumentError(f"{kernel}: scratch tensor '{self.name}' has size {e}, "
                                "which no argument gave") from None


def _scratch(index: int, s, params) -> Scratch:
    where = f"scratch {index}"
    if not isinstance(s, dict) or not isinstance(s.get("name"), str) or not s["name"]:
        raise ArtifactError(f"{where} must be an object with a name, got {s!r}")
    where = f"scratch {index} ({s['name']!r})"
    if s.get("dtype") not in DTYPES:
        raise ArtifactError(f"{where}: unknown dtype {s.get('dtype')!r}")
    shape = s.get("shape")
    symbols = {d for p in params for d in p.shape if isinstance(d, str)}
    if not isinstance(shape, list) or not all(
            (isinstance(d, int) and not isinstance(d, bool) and d >= 0)
            or (isinstance(d, str) and d in symbols | {SM_COUNT}) for d in shape):
        raise ArtifactError(f"{where}: shape must list non-negative ints, size symbols of "
                            f"the parameters ({', '.join(sorted(symbols)) or 'none'}) and "
                            f"{SM_COUNT}, got {shape!r}")
    zero_fill = s.get("zero_fill", False)
    if not isinstance(zero_fill, bool):
        raise ArtifactError(f"{where}: zero_fill must be true or false, got {zero_fill!r}")
    base = s.get("view_of")
    if base is None:
        return Scratch(s["name"], s["dtype"], tuple(shape), zero_fill=zero_fill)
    if "zero_fill" in s:
        raise ArtifactError(f"{where}: a view takes no zero_fill (its memory is argument "
                            f"{base!r}'s)")
    at = [i for i, p in enumerate(params) if p.name == base and p.kind == "tensor"]
    if not at:
        raise ArtifactError(f"{where}: a view of {base!r}, which is no tensor parameter")
    return Scratch(s["name"], s["dtype"], tuple(shape), at[0], base)


def _need(d: dict, key: str, kind: type):
    if not isinstance(d.get(key), kind):
        raise ArtifactError(f"{key!r} must be a {kind.__name__}, got {d.get(key)!r}")
    return d[key]


def _elements(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _free_blocks(blocks: dict) -> None:
    """Frees a collected sequence's driver scratch (errors ignored: the
    context may be gone at interpreter exit)."""
    for ptr, _, rt in blocks.values():
        try:
            rt.mem_free(ptr)
        except Exception:  # noqa: BLE001, S110
            pass
    blocks.clear()
