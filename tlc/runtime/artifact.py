"""Kernel artifacts (*.tlcart): one JSON file per kernel, the contract between
the tlc compiler and this runtime, and the Kernel that launches one.

    {"format": "tlc-kernel", "version": 1, "name": "vadd", "target": "sm_90a",
     "ptx": "...", "threads": [128, 1, 1], "grid": ["ceildiv(N, 128)", 1, 1],
     "shared_bytes": 0,
     "params": [{"name": "A", "kind": "tensor", "dtype": "float32",
                 "shape": ["N"], "access": "read"},
                {"name": "alpha", "kind": "scalar", "dtype": "float32"}],
     "tensor_maps": [{"param": "A", "box": [128], "swizzle": 0, "fill": "zero"}],
     "check": {...}, "tlc_version": "0.1.0"}

A grid expression may name, besides the shape symbols and integer scalar
parameters, the reserved symbol __sm_count__: the number of streaming
multiprocessors of the device the launch runs on (for persistent kernels,
e.g. "min(ceildiv(N, 128), __sm_count__)"). No parameter may be called that;
a tensor size may (a sequence's per-multiprocessor scratch, e.g. stream-K
partials ["__sm_count__", 128, 256]), and the argument's size must then be
the device's count.

A prim_func of several kernels, or with global scratch tensors
(T.alloc_global), is a version-2 artifact: a sequence of version-1 kernels
launched in order, with the scratch tensors the runtime allocates
(tlc/runtime/sequence.py). load_artifact reads both versions.

"tensor_maps" is optional: the TMA descriptors (CUtensorMap) the kernel takes
after its regular parameters, one per entry; tlc/runtime/tensor_maps.py
documents the fields and their limits. "check" is optional and only read by
test/gpu/run_artifacts.py, which documents it. "cooperative": true (optional)
launches the kernel with cuLaunchCooperativeKernel (T.sync_grid: every block
resident at once, else the launch fails). A tensor parameter declared
with strides (T.StridedTensor) has "strides": per dim an int or a symbol name,
in elements (the launcher passes the argument's own strides, binding those
symbols like sizes); without it the argument must be row-major contiguous.
Keys this module does not know are kept as they are.
"""

import copy
import ctypes
import json
import re
import threading
from pathlib import Path

from . import plans, tensor_maps
from .args import Bound, Param, bind, describe
from .driver import Runtime, launch_dims, runtime
from .dtypes import DTYPES
from .errors import ArgumentError, ArtifactError, LaunchError
from .grid import GridExpr

FORMAT = "tlc-kernel"
VERSION = 1
SUFFIX = ".tlcart"
ACCESS = ("read", "write", "readwrite")
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_ARTIFACT_BYTES = 256 << 20
SM_COUNT = "__sm_count__"  # the grid symbol of the device's multiprocessor count


class Kernel:
    """A loaded artifact. Call it with one argument per parameter."""

    def __init__(self, metadata: dict):
        # Our own copy, so that the caller's later edits cannot desynchronise it.
        try:
            self.metadata = copy.deepcopy(metadata)
        except RecursionError:
            raise ArtifactError("artifact: metadata nested too deeply") from None
        where = f"artifact {metadata.get('name')!r}" if isinstance(metadata, dict) else "artifact"
        try:
            self._parse(metadata)
        except ArtifactError as e:
            raise ArtifactError(f"{where}: {e}") from None
        self._lock = threading.Lock()
        self._functions: dict[int, int] = {}  # CUDA context -> CUfunction
        self._plans: dict = {}  # plans.call_key -> plans.CallPlan
        self._name_bytes = self.name.encode()
        # Integer scalars whose value a plan fixes: those sizes or the grid name.
        named = {s for p in self.params for s in p.shape if isinstance(s, str)}
        named |= {s for e in self._grid_code for s in e.symbols} - {SM_COUNT}
        self._signature = plans.Signature.of(self.params, named)
        # The native launch path, where tlc.runtime._launch is built: a
        # Launcher holding the recent plans' native twins (plans.py).
        self._native_launcher = plans.native_launcher()
        self._native = None if self._native_launcher is None else self._native_launcher.launch

    @classmethod
    def from_dict(cls, metadata: dict):
        """The Kernel of version-1 metadata, the KernelSequence of version 2."""
        return from_metadata(metadata)

    def to_dict(self) -> dict:
        return copy.deepcopy(self.metadata)

    def __repr__(self) -> str:
        return f"<tlc Kernel {self.name} ({', '.join(p.name for p in self.params)})>"

    # ---- Calling ------------------------------------------------------------

    def grid_for(self, *args) -> tuple[int, int, int]:
        """The launch grid for these arguments (checks them; launches nothing).

        A kernel whose grid or tensor sizes name __sm_count__ asks the
        runtime for the multiprocessor count of the arguments' device (whose
        context it makes current), so it needs the CUDA driver (LaunchError
        without one); other kernels need no GPU here."""
        bound = bind(self.name, self.params, args, self.tensor_maps)
        if not self._uses_sm_count:
            return self._grid(bound)
        rt = runtime()
        return self._grid(bound, self._sm_count(rt, self._enter(rt, bound)))

    def __call__(self, *args, stream=None) -> None:
        # The fast paths: torch tensors of a shape this kernel was called with
        # before (tlc/runtime/plans.py), natively, else in Python.
        native = self._native
        if native is not None and native(args, stream) is not None:
            return
        called = self._signature.probe(args)
        if called is not None:
            try:
                plan = self._plans.get(called[0])
            except TypeError:  # an unhashable scalar: bind says what is wrong
                plan, called = None, None
            if plan is not None and self._run_plan(plan, args, called[1], stream):
                return
        # Raises before any launch. A grid naming __sm_count__ is known only
        # once the launch's device is (in _launch).
        bound = bind(self.name, self.params, args, self.tensor_maps)
        grid = None if self._uses_sm_count else self._grid(bound)
        explicit = None if stream is None else self._stream_handle(stream)
        if grid is not None and not self._launches(bound, grid):
            return
        rt = runtime()
        if bound.torch_device is None:
            self._launch(rt, bound, grid, explicit or 0)
            return
        import torch  # only reached when the caller passed torch tensors

        plans.note_torch_type(next(a for a, p in zip(args, self.params) if p.kind == "tensor"))
        # The guard makes the tensors' device current and restores torch's
        # notion of the current device afterwards.
        with torch.cuda.device(bound.torch_device):
            if explicit is None:
                explicit = torch.cuda.current_stream(bound.torch_device).cuda_stream
            launched = self._launch(rt, bound, grid, explicit)
        if launched is None:
            return
        fn, grid = launched
        called = called or plans.call_key(self._signature, args)
        if called and bound.device is not None:
            if len(self._plans) >= plans.MAX_PLANS:
                self._plans.clear()
            plan = self._plans[called[0]] = plans.make_plan(
                self.params, self._signature, bound, rt, fn, grid,
                launch_dims(grid, self.threads, self.shared_bytes),
                [describe(self.name, p) for p in self.params], args, self._name_bytes,
                called[0])
            native = self._native_launcher and plans.native_plan(plan, len(args), self.name)
            if native is not None:
                self._native_launcher.add(native)

    def _run_plan(self, plan: "plans.CallPlan", args: tuple, ptrs: tuple, stream) -> bool:
        """Launches a call whose key matched `plan` (ptrs: its tensors' data
        pointers); False, launching nothing, when the full checks must see
        the call (a null or misaligned pointer, a scalar that does not
        encode, a stream that is not one)."""
        if stream is None:
            handle = plans.current_stream(plan.device)
        elif type(stream) is int:
            handle = stream
        else:
            try:
                handle = self._stream_handle(stream)
            except ArgumentError:
                return False
        call = plan.pack(handle, args, ptrs)
        if call is None:
            return False
        if plan.launches:
            if plan.maps:
                call += plans.tensor_maps(plan, ptrs, self.name)
            if plan.launch(plan.header, call):
                plan.rt.raise_launch_error()
        return True

    def _launches(self, bound: Bound, grid) -> bool:
        """Whether a checked call with this grid launches anything: an empty
        grid is a no-op (the driver would reject it), else every mapped
        tensor must hold an element."""
        if 0 in grid:
            return False
        for m, _, shape in bound.maps:
            m.check_not_empty(shape, describe(self.name, m.param))
        return True

    def _enter(self, rt: Runtime, bound: Bound) -> int | None:
        """Makes the context of a checked call's device current; returns the
        device's ordinal (None: no tensor argument, the current context)."""
        device = bound.device
        if device is None and bound.probe_ptr is not None:
            rt.ensure_context(-1)
            try:
                device = rt.pointer_device(bound.probe_ptr)
            except LaunchError as e:
                raise ArgumentError(f"{self.name}: a tensor argument: {e}") from None
        rt.ensure_context(-1 if device is None else device)
        return device

    def _sm_count(self, rt: Runtime, device: int | None) -> int:
        """The multiprocessor count of the current context's device, which
        _enter returned."""
        key = ("device", device) if device is not None else ("context", rt.current_context())
        return rt.sm_count(key)

    def _launch(self, rt: Runtime, bound: Bound, grid, stream: int):
        """Launches a checked call; returns the CUfunction it used and the
        grid, or None when there was nothing to launch. `grid` is None when it
        names __sm_count__: it is computed here, for the launch's device."""
        device = self._enter(rt, bound)
        if grid is None:
            grid = self._grid(bound, self._sm_count(rt, device))
            if not self._launches(bound, grid):
                return None
        fn = self._function(rt)
        values = bound.values
        if bound.maps:  # the CUtensorMaps follow the regular parameters
            bound.encoded = [m.encode(rt, ptr, shape, self.name) for m, ptr, shape in bound.maps]
            values = values + bound.encoded
        params = (ctypes.c_void_p * len(values))(*(ctypes.addressof(v) for v in values))
        rt.launch(fn, grid, self.threads, self.shared_bytes, stream, params, self.name)
        return fn, grid

    def _function(self, rt: Runtime) -> int:
        """The CUfunction in the current context, JIT-loading it once."""
        ctx = rt.current_context()
        with self._lock:
            fn = self._functions.get(ctx)
            if fn is None:
                check_target(self.target, rt.device_capability(), self.name)
                module = rt.load_module(self.ptx.encode("utf-8"), self.name)
                fn = rt.get_function(module, self.name)
                # Any dynamic size is declared: the module's own static shared
                # memory counts against the 48 KiB default limit too, so a
                # kernel asking for exactly 48 KiB would otherwise not launch.
                if self.shared_bytes > 0:
                    rt.set_dynamic_smem(fn, self.shared_bytes, self.name)
                if self.cooperative:
                    rt.set_cooperative(fn)
                self._functions[ctx] = fn
        return fn

    def _grid(self, bound: Bound, sm_count: int | None = None) -> tuple[int, int, int]:
        """The grid of a checked call; sm_count is the value of __sm_count__,
        given when the grid or a tensor size names it."""
        if sm_count is not None and bound.symbols.get(SM_COUNT, sm_count) != sm_count:
            raise ArgumentError(
                f"{self.name}: the tensor size {SM_COUNT} is {bound.symbols[SM_COUNT]}, but "
                f"the device has {sm_count} multiprocessors")
        symbols = bound.symbols if sm_count is None else {**bound.symbols, SM_COUNT: sm_count}
        dims = []
        for axis, expr in enumerate(self._grid_code):
            try:
                n = expr(symbols)
            except ZeroDivisionError:
                raise ArgumentError(
                    f"{self.name}: grid expression {expr.source!r} divides by zero "
                    f"with {_show_symbols(symbols)}") from None
            if not 0 <= n <= MAX_GRID[axis]:
                raise ArgumentError(
                    f"{self.name}: grid dim {'xyz'[axis]} = {expr.source!r} = {n} with "
                    f"{_show_symbols(symbols)} is outside [0, {MAX_GRID[axis]}]")
            dims.append(n)
        for axis, (n, c) in enumerate(zip(dims, self.cluster_dims)):
            if c > 1 and n % c:
                raise ArgumentError(
                    f"{self.name}: grid dim {'xyz'[axis]} = {self._grid_code[axis].source!r} = "
                    f"{n} with {_show_symbols(symbols)} is not whole clusters of {c} "
                    f"(cluster_dims {list(self.cluster_dims)})")
        return tuple(dims)

    def _stream_handle(self, stream) -> int:
        if isinstance(stream, int):
            return stream
        if hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
            return int(stream.cuda_stream)
        if hasattr(stream, "__cuda_stream__"):  # the CUDA Python stream protocol
            return int(stream.__cuda_stream__()[1])
        raise ArgumentError(
            f"{self.name}: stream= must be a CUstream handle (int), a torch.cuda.Stream "
            f"or an object with __cuda_stream__, got {type(stream).__name__}")

    # ---- Reading the metadata ----------------------------------------------

    def _parse(self, d) -> None:
        if not isinstance(d, dict):
            raise ArtifactError(f"expected a JSON object, got {type(d).__name__}")
        if d.get("format") != FORMAT:
            raise ArtifactError(f"format is {d.get('format')!r}, expected {FORMAT!r}")
        if d.get("version") != VERSION:
            raise ArtifactError(
                f"version {d.get('version')!r} is not supported here (a kernel is version "
                f"{VERSION}; a sequence of kernels, version 2, is a KernelSequence)")
        self.name = _need(d, "name", str)
        self.ptx = _need(d, "ptx", str)
        if not self.name or not self.ptx or "\0" in self.ptx:
            raise ArtifactError("name and ptx must be non-empty, and ptx text without NUL")
        self.target = d.get("target")
        self.threads = _dims(d, "threads", lambda v: _is_int(v) and v >= 1)
        if self.threads[0] * self.threads[1] * self.threads[2] > MAX_THREADS_PER_BLOCK:
            raise ArtifactError(
                f"threads {list(self.threads)} exceed {MAX_THREADS_PER_BLOCK} per block")
        # T.Kernel(..., cluster_dims=...): the grid is launched in clusters of these blocks.
        self.cluster_dims = (_dims(d, "cluster_dims", lambda v: _is_int(v) and v >= 1)
                             if "cluster_dims" in d else (1, 1, 1))
        self.cooperative = d.get("cooperative", False)  # T.sync_grid: all blocks at once
        if not isinstance(self.cooperative, bool):
            raise ArtifactError(f"cooperative must be true or false, got {self.cooperative!r}")
        self.shared_bytes = d.get("shared_bytes", 0)
        if not _is_int(self.shared_bytes) or self.shared_bytes < 0:
            raise ArtifactError(
                f"shared_bytes must be a non-negative int, got {self.shared_bytes!r}")
        self.params = parse_params(_need(d, "params", list))
        names = [p.name for p in self.params]
        # Grid expressions name tensor sizes, integer scalar parameters and
        # the device's multiprocessor count.
        symbols = {s for p in self.params for s in p.shape if isinstance(s, str)}
        if SM_COUNT in names:
            raise ArtifactError(
                f"{SM_COUNT} is reserved (the device's multiprocessor count) and cannot name "
                f"a parameter")
        symbols |= {p.name for p in self.params
                    if p.kind == "scalar" and DTYPES[p.dtype].kind in "iu"}
        self.grid_exprs = _dims(d, "grid", lambda v: _is_int(v) or isinstance(v, str))
        try:
            self._grid_code = tuple(GridExpr(e, symbols | {SM_COUNT}) for e in self.grid_exprs)
        except ValueError as e:
            raise ArtifactError(str(e)) from None
        self._uses_sm_count = SM_COUNT in symbols or any(SM_COUNT in e.symbols
                                                         for e in self._grid_code)
        self.tensor_maps = tensor_maps.parse(d.get("tensor_maps"), self.params)


def check_target(target: str | None, capability: tuple[int, int], kernel: str) -> None:
    """Refuses a kernel built for features the device lacks: sm_XY code runs on
    compute capability X.Y and later, sm_XYa code (wgmma, setmaxnreg) on X.Y
    only."""
    m = re.fullmatch(r"sm_(\d+)(\d)(a?)", target or "")
    if m is None:
        return  # an artifact without a target: the driver's JIT decides
    need = (int(m.group(1)), int(m.group(2)))
    fits = capability == need if m.group(3) else capability >= need
    if not fits:
        major, minor = capability
        runs_on = (f"compute capability {need[0]}.{need[1]} only" if m.group(3)
                   else f"compute capability {need[0]}.{need[1]} and later")
        raise LaunchError(
            f"{kernel}: built for {target}, which runs on {runs_on}, but the device is "
            f"sm_{major}{minor} (compute capability {major}.{minor}); compile it with "
            f"target='sm_{major}{minor}'")


def parse_params(params: list) -> tuple[Param, ...]:
    """The Params of an artifact's "params" list (names must not repeat)."""
    parsed = tuple(_param(i, p) for i, p in enumerate(params, 1))
    names = [p.name for p in parsed]
    if len(set(names)) != len(names):
        raise ArtifactError(f"parameter names repeat: {names}")
    return parsed


def from_metadata(metadata):
    """The launchable object of an artifact's metadata: a Kernel (version 1)
    or a KernelSequence (version 2: several kernels, global scratch)."""
    from .sequence import VERSION as SEQUENCE, KernelSequence

    if isinstance(metadata, dict) and metadata.get("version") == SEQUENCE:
        name = metadata.get("name")
        try:
            return KernelSequence(metadata)
        except ArtifactError as e:
            raise ArtifactError(f"artifact {name!r}: {e}") from None
    return Kernel(metadata)


def artifact_ptx(artifact: dict) -> str:
    """The PTX of an artifact: its kernel's, or each kernel's of a sequence in
    launch order, each after a `// kernel i of n: name` comment line."""
    if "kernels" not in artifact:
        return artifact["ptx"]
    kernels = artifact["kernels"]
    return "\n".join(f"// kernel {i} of {len(kernels)}: {k['name']}\n{k['ptx']}"
                      for i, k in enumerate(kernels, 1))


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _need(d: dict, key: str, kind: type):
    if not isinstance(d.get(key), kind):
        raise ArtifactError(f"{key!r} must be a {kind.__name__}, got {d.get(key)!r}")
    return d[key]


def _dims(d: dict, key: str, ok) -> tuple:
    """A list of 1 to 3 launch dimensions, padded to 3 with 1."""
    v = _need(d, key, list)
    if not 1 <= len(v) <= 3 or not all(ok(x) for x in v):
        raise ArtifactError(f"{key!r} must list 1 to 3 dimensions, got {v!r}")
    return tuple(v) + (1,) * (3 - len(v))


def _param(index: int, p) -> Param:
    if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"]:
        raise ArtifactError(f"param {index} must be an object with a name, got {p!r}")
    where = f"param {index} ({p['name']!r})"
    kind, dtype = p.get("kind"), p.get("dtype")
    if kind not in ("tensor", "scalar"):
        raise ArtifactError(f"{where}: kind must be 'tensor' or 'scalar', got {kind!r}")
    if dtype not in DTYPES:
        raise ArtifactError(f"{where}: unknown dtype {dtype!r} (known: {', '.join(DTYPES)})")
    if kind == "scalar":
        return Param(index, p["name"], kind, dtype)
    shape = p.get("shape")
    if not isinstance(shape, list) or not all(
            (_is_int(s) and s >= 0) or (isinstance(s, str) and _size_expr(s)) for s in shape):
        raise ArtifactError(
            f"{where}: shape must list non-negative ints, symbol names and expressions of "
            f"them, got {shape!r}")
    if p.get("access") not in ACCESS:
        raise ArtifactError(f"{where}: access must be one of {ACCESS}, got {p.get('access')!r}")
    strides = p.get("strides", ())
    if not isinstance(strides, (list, tuple)) or (strides and len(strides) != len(shape)) or \
            not all((_is_int(s) and s >= 0) or (isinstance(s, str) and s.isidentifier())
                    for s in strides):
        raise ArtifactError(f"{where}: strides must list a non-negative int or a symbol name "
                            f"per dim, got {strides!r}")
    return Param(index, p["name"], kind, dtype, tuple(shape), p["access"], tuple(strides))


def _size_expr(s: str) -> bool:
    """A symbol name, or an expression of symbols in the grid language."""
    from .grid import GridExpr

    if s.isidentifier():
        return True
    try:
        GridExpr(s)
    except ValueError:
        return False
    return True


def _show_symbols(symbols: dict[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in symbols.items()) or "no symbols"


# ---- Files ------------------------------------------------------------------


def load_artifact(path) -> Kernel:
    """The Kernel of an artifact file; every failure is an ArtifactError naming it."""
    from ..output import open_regular

    path = Path(path)
    try:
        with open_regular(str(path), "artifact") as f:
            data = f.read(MAX_ARTIFACT_BYTES + 1)
    except OSError as e:
        raise ArtifactError(str(e)) from None
    if len(data) > MAX_ARTIFACT_BYTES:
        raise ArtifactError(f"{path}: larger than {MAX_ARTIFACT_BYTES >> 20} MiB")
    try:
        metadata = json.loads(data.decode("utf-8"))
        return from_metadata(metadata)
    except (ArtifactError, ValueError) as e:  # json's errors are ValueErrors
        raise ArtifactError(f"{path}: {e}") from None
    except RecursionError:
        raise ArtifactError(f"{path}: JSON nested too deeply") from None


def save_artifact(kernel, path) -> Path:
    """Writes an artifact atomically: a temporary file in the same folder,
    renamed over `path`, so a reader never sees a partial file (see
    tlc/output.py for what `path` may be). Raises OutputError (an OSError)."""
    from ..output import write_output

    metadata = kernel.to_dict() if hasattr(kernel, "to_dict") else \
        from_metadata(kernel).to_dict()
    path = Path(path)
    text = json.dumps(metadata, indent=1, ensure_ascii=False) + "\n"
    write_output(str(path), text, fsync=True)
    return path
