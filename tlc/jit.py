"""@tlc.jit and tlc.compile: tile programs -> cached, launchable kernels."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import tempfile

from . import __version__
from .errors import CompilationError
from .jit_options import JitOptions, jit_options, report

STAGES = ("tile", "optimized", "gpu", "nvvm")


class JITKernel:
    """A compiled kernel: call it with tensors; inspect its PTX and IR."""

    def __init__(self, artifact: dict, stages: dict[str, str], out_idx=None):
        from . import runtime

        self.artifact = artifact
        self.stages = stages
        self.kernel = runtime.Kernel.from_dict(artifact)
        self.params = artifact["params"]
        n = len(self.params)
        if out_idx is None:
            out_idx = []
        elif isinstance(out_idx, int):
            out_idx = [out_idx]
        for i in out_idx:
            if isinstance(i, bool) or not isinstance(i, int):
                raise CompilationError(f"out_idx must be ints (parameter positions), got {i!r}")
            if not -n <= i < n:
                raise CompilationError(f"out_idx {i} is out of range for {self.name}'s {n} "
                                       "parameters")
            if self.params[i % n]["kind"] != "tensor":
                raise CompilationError(f"out_idx {i} names the scalar "
                                       f"'{self.params[i % n]['name']}'; outputs are tensors")
        self.out_idx = sorted(i % n for i in out_idx)
        if len(set(self.out_idx)) != len(self.out_idx):
            raise CompilationError(f"out_idx {list(out_idx)} names a parameter twice")
        self._is_out = [i in self.out_idx for i in range(n)]
        self._output_specs: dict = {}  # input shapes/dtypes/devices -> output specs
        self._launched = False

    @property
    def name(self) -> str:
        return self.artifact["name"]

    def __call__(self, *args, stream=None):
        """Launches with the inputs (all parameters but out_idx's, in order);
        allocates and returns the outputs named by out_idx."""
        if not self.out_idx:
            return self.kernel(*args, stream=stream)
        n_in = len(self.params) - len(self.out_idx)
        if len(args) != n_in:
            names = [p["name"] for i, p in enumerate(self.params) if i not in self.out_idx]
            from .runtime import ArgumentError

            raise ArgumentError(f"{self.name} takes {n_in} inputs ({', '.join(names)}); "
                            f"outputs {[self.params[i]['name'] for i in self.out_idx]} are "
                            f"allocated and returned, got {len(args)} arguments")
        if not self._launched:
            from .runtime.driver import runtime

            runtime()  # no driver or GPU: a LaunchError before anything is allocated
        outputs = self._allocate_outputs(args)
        full, it, outs = [], iter(args), iter(outputs)
        for is_out in self._is_out:
            full.append(next(outs) if is_out else next(it))
        self.kernel(*full, stream=stream)
        self._launched = True
        return outputs[0] if len(outputs) == 1 else outputs

    def _allocate_outputs(self, inputs):
        """torch tensors for the outputs; their shapes, dtypes and device
        are derived once per input shapes and device, then reused."""
        try:
            key = tuple((a.shape, a.dtype, a.device) if hasattr(a, "shape") else type(a)
                        for a in inputs)
            specs = self._output_specs.get(key)
        except (TypeError, AttributeError):
            key, specs = None, None
        if specs is None:
            specs = self._output_specs_for(inputs)
            if key is not None:
                if len(self._output_specs) >= 64:
                    self._output_specs.clear()
                self._output_specs[key] = specs
        empty = self._torch.empty
        return [empty(shape, dtype=dtype, device=device) for shape, dtype, device in specs]

    def _output_specs_for(self, inputs):
        try:
            import torch
        except ImportError:
            raise RuntimeError(f"{self.name}: out_idx outputs are allocated as torch "
                               "tensors, and torch is not installed") from None

        from .runtime.dtypes import torch_dtype

        symbols, device = {}, None
        inputs_it = iter(inputs)
        for i, p in enumerate(self.params):
            if i in self.out_idx:
                continue
            arg = next(inputs_it)
            if p["kind"] != "tensor" or not hasattr(arg, "shape"):
                continue
            device = device or getattr(arg, "device", None)
            for dim, size in zip(p["shape"], arg.shape):
                if isinstance(dim, str):
                    symbols.setdefault(dim, int(size))
        outputs = []
        for i in self.out_idx:
            p = self.params[i]
            shape = []
            for dim in p["shape"]:
                if isinstance(dim, str) and dim not in symbols:
                    raise TypeError(f"cannot allocate output '{p['name']}': its size {dim} "
                                    "is not the size of any input")
                shape.append(symbols[dim] if isinstance(dim, str) else dim)
            outputs.append((tuple(shape), torch_dtype(p["dtype"]), device or "cuda"))
        self._torch = torch
        return outputs

    def get_kernel_source(self) -> str:
        """The PTX."""
        return self.artifact["ptx"]

    def get_mlir(self, stage: str = "tile") -> str:
        """The IR at a stage: "tile" (as the frontend built it), "optimized" (layouts
        and shared memory assigned), "gpu" (per-thread code), "nvvm" (LLVM dialect)."""
        if stage not in self.stages:
            raise ValueError(f"unknown stage '{stage}' (stages: {', '.join(self.stages)})")
        return self.stages[stage]

    def get_profiler(self, tensor_supply_type=None):
        from .profiler import Profiler, TensorSupplyType

        return Profiler(self, tensor_supply_type or TensorSupplyType.Auto)

    def save(self, path: str) -> None:
        """Writes the launchable artifact (PTX + metadata) to `path`."""
        from . import runtime

        runtime.save_artifact(self.artifact, path)

    def __repr__(self) -> str:
        return f"<tlc.JITKernel {self.name} for {self.artifact['target']}>"


def _kernel(artifact: dict, stages: dict, out_idx) -> JITKernel:
    """The JITKernel of a fresh compilation; metadata the runtime cannot launch
    is a compilation error, not a runtime one."""
    from .runtime import ArtifactError

    try:
        return JITKernel(artifact, stages, out_idx)
    except ArtifactError as e:
        raise CompilationError(f"kernel '{artifact.get('name')}' cannot be launched: {e}") \
            from None


def _compile_prim(prim, target) -> tuple[dict, dict]:
    from .compiler import compile_module

    module = prim.build_module()
    compiled = compile_module(module, target, keep_ir=True)
    return compiled.artifact(prim.name), dict(compiled.stages)


def _timing_session(title: str):
    """A timing session when TLC_TIMING is set (the table goes to stderr)."""
    from . import timing

    return timing.session(title, timing.enabled_by_environment())


def _stage(name: str):
    from . import timing

    return timing.stage(name)


def compile(source, out_idx=None, target: str | None = None, name: str | None = None,  # noqa: A001
            execution_backend=None, target_host=None, verbose: bool = False,
            pass_configs=None, debug_root_path=None, compile_flags=None):
    """Compiles a @T.prim_func, a tile-IR module or tile-IR text into a JITKernel
    (the options as in `jit`)."""
    options = jit_options(target, execution_backend, target_host, verbose, pass_configs,
                          debug_root_path, compile_flags)
    kernel = _compile_source(source, out_idx, options.resolve_target(_default_target()), name)
    report(options, kernel, "compiled")
    return kernel


def _compile_source(source, out_idx, target: str, name: str | None) -> JITKernel:
    from .frontend import PrimFunc

    title = f"tlc.compile {source.name if isinstance(source, PrimFunc) else name or 'module'}"
    with _timing_session(f"{title} for {target}"):
        if isinstance(source, PrimFunc):
            artifact, stages = _compile_prim(source, target)
            return _load_kernel(artifact, stages, out_idx)
        from .compiler import compile_module, compile_text

        if isinstance(source, str):
            compiled = compile_text(source, target, keep_ir=True)
        else:
            compiled = compile_module(source, target, keep_ir=True)
        return _load_kernel(compiled.artifact(name), dict(compiled.stages), out_idx)


def _load_kernel(artifact: dict, stages: dict, out_idx) -> JITKernel:
    with _stage("load kernel (runtime)"):
        return _kernel(artifact, stages, out_idx)


def _default_target() -> str:
    """sm_90a unless TLC_TARGET names another (no GPU is needed to compile)."""
    return os.environ.get("TLC_TARGET", "sm_90a")


# -- the disk cache ----------------------------------------------------------


def cache_dir() -> str:
    return os.environ.get("TLC_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tlc")


def _compiler_fingerprint() -> str:
    """Changes when the compiler's native library is rebuilt, so that a cache
    filled by an older build of the passes is not used."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        parts = [__version__]
        libs = os.path.join(os.path.dirname(__file__), "_mlir_libs")
        for name in ("libTLCPythonCAPI.so",):
            try:
                st = os.stat(os.path.join(libs, name))
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                pass
        _FINGERPRINT = ";".join(parts)
    return _FINGERPRINT


_FINGERPRINT = None


def _cache_key(tile_ir: str, name: str, target: str) -> str:
    """The key of a compilation: what the frontend built (so a change anywhere,
    in the factory, a helper or a global constant it reads, is a new entry),
    the target and the compiler."""
    blob = json.dumps({"ir": tile_ir, "name": name, "target": target,
                       "compiler": _compiler_fingerprint()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


_PLAIN = (int, float, str, bool, bytes, type(None))


def _referenced_globals(code, env: dict, seen: set, out: dict) -> None:
    """The module-level values and helper functions a factory's code (and the
    code nested in it) reads: constants by value, functions by source."""
    for name in code.co_names:
        if name in seen or name not in env:
            continue
        seen.add(name)
        value = env[name]
        if isinstance(value, _PLAIN) or (isinstance(value, tuple) and
                                         all(isinstance(v, _PLAIN) for v in value)):
            out[name] = repr(value)
        elif inspect.isfunction(value) and value.__module__ == env.get("__name__"):
            try:
                out[name] = inspect.getsource(value)
            except (OSError, TypeError):
                out[name] = value.__qualname__
            _referenced_globals(value.__code__, env, seen, out)
    for const in code.co_consts:
        if inspect.iscode(const):
            _referenced_globals(const, env, seen, out)


def _factory_key(factory, source: str, args, kwargs, target: str) -> str:
    """A key computed without building anything: the factory's source, the
    globals it reads, its arguments, the target and the compiler."""
    reads: dict = {}
    _referenced_globals(factory.__code__, factory.__globals__, set(), reads)
    blob = json.dumps({"source": source, "globals": reads, "args": repr(args),
                       "kwargs": repr(sorted(kwargs.items())), "target": target,
                       "compiler": _compiler_fingerprint()}, sort_keys=True)
    return "f" + hashlib.sha256(blob.encode()).hexdigest()


def _cache_load(key: str):
    path = os.path.join(cache_dir(), key + ".json")
    try:
        with open(path) as f:
            entry = json.load(f)
        if not isinstance(entry, dict) or entry.get("tlc") != __version__:
            return None
        artifact, stages = entry["artifact"], entry["stages"]
        if not isinstance(artifact, dict) or not isinstance(stages, dict):
            return None
        return artifact, stages
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or corrupt: recompile and replace


def _cache_store(key: str, artifact: dict, stages: dict) -> None:
    folder = cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump({"tlc": __version__, "artifact": artifact, "stages": stages}, f)
        os.replace(tmp, os.path.join(folder, key + ".json"))  # atomic among processes
    except OSError:
        pass  # a read-only or full disk only costs recompilation


class JITFactory:
    """A factory of tile programs; calling it compiles (once per argument set)."""

    def __init__(self, factory, out_idx=None, target=None, cache: bool = True,
                 options: JitOptions | None = None):
        self.factory = factory
        self.out_idx = out_idx
        self.target = target
        self.options = options or jit_options(target)
        self._disk_cache = cache
        self._memory: dict = {}
        self._source_text: str | None = None
        functools.update_wrapper(self, factory)

    @property
    def use_disk_cache(self) -> bool:
        """cache=True, and tlc.disable_cache() not in effect."""
        from .cache_control import is_cache_enabled

        return self._disk_cache and is_cache_enabled()

    def __call__(self, *args, **kwargs) -> JITKernel:
        target = self.options.resolve_target(_default_target())
        try:
            mem_key = (args, tuple(sorted(kwargs.items())), target)
            hash(mem_key)
        except TypeError:
            mem_key = None
        if mem_key is not None and mem_key in self._memory:
            return self._memory[mem_key]
        self._cache_hit = False
        call = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
        with _timing_session(f"@tlc.jit {self.factory.__name__}({call}) for {target}"):
            kernel = self._compile(args, kwargs, target)
        report(self.options, kernel, "loaded from the disk cache" if self._cache_hit
               else "compiled")
        if mem_key is not None:
            self._memory[mem_key] = kernel
        return kernel

    def _compile(self, args, kwargs, target) -> JITKernel:
        # The disk cache is keyed by the factory's source, the globals it
        # reads and its arguments: a hit needs neither the frontend nor the
        # compiler. A factory without readable source is keyed by its IR.
        key = None
        if self.use_disk_cache and self._source():
            with _stage("disk-cache lookup"):
                key = _factory_key(self.factory, self._source(), args, kwargs, target)
                kernel = self._from_cache(_cache_load(key))
            if kernel is not None:
                return kernel
        from .compiler import compile_module
        from .frontend import PrimFunc

        with _stage(f"frontend: run the factory {self.factory.__name__}"):
            prim = self.factory(*args, **kwargs)
        if not isinstance(prim, PrimFunc):
            raise CompilationError(f"@tlc.jit factory '{self.factory.__name__}' must "
                                   f"return a @T.prim_func, got {type(prim).__name__}")
        module = prim.build_module()
        if self.use_disk_cache and key is None:
            with _stage("disk-cache lookup (by tile IR)"):
                key = _cache_key(str(module), prim.name, target)
                kernel = self._from_cache(_cache_load(key))
            if kernel is not None:
                return kernel
        compiled = compile_module(module, target, keep_ir=True)
        artifact, stages = compiled.artifact(prim.name), dict(compiled.stages)
        if key is not None:
            with _stage("disk-cache write"):
                _cache_store(key, artifact, stages)
        return _load_kernel(artifact, stages, self.out_idx)

    def _source(self) -> str | None:
        """The factory's source, read once (None when it cannot be read: then
        only the built tile IR keys the disk cache)."""
        if self._source_text is None:
            try:
                self._source_text = inspect.getsource(self.factory)
            except (OSError, TypeError):
                self._source_text = ""
        return self._source_text or None

    def _from_cache(self, cached) -> JITKernel | None:
        from .runtime import ArtifactError

        if cached is None:
            return None
        try:
            kernel = JITKernel(*cached, out_idx=self.out_idx)
            self._cache_hit = True
            return kernel
        except (ArtifactError, KeyError, TypeError, ValueError):
            return None  # a damaged entry: compile again and replace it

    def cache_key(self, *args, **kwargs) -> str:
        """The disk-cache key of the kernel these arguments make."""
        target = self.options.resolve_target(_default_target())
        if self._source():
            return _factory_key(self.factory, self._source(), args, kwargs, target)
        prim = self.factory(*args, **kwargs)
        return _cache_key(str(prim.build_module()), prim.name, target)


def jit(fn=None, *, out_idx=None, target: str | None = None, cache: bool = True,
        execution_backend=None, target_host=None, verbose: bool = False, pass_configs=None,
        debug_root_path=None, compile_flags=None, interpret: bool | None = None):
    """`@tlc.jit` / `@tlc.jit(out_idx=[-1], target="sm_90a")` on a factory that
    returns a @T.prim_func; applied to a prim_func, compiles it directly.

    TileLang's options: `target` ("auto", "cuda", "cuda -arch=sm_80" or an sm_*
    name), `pass_configs` ({tlc.PassConfigKey: value}), `verbose`,
    `debug_root_path` (PTX and IR written there), `execution_backend`
    (accepted; tlc has one runtime); `target_host` and `compile_flags` are
    errors. See tlc.jit_options.

    With `interpret=True`, or TLC_INTERPRET=1 in the environment when the
    decorator runs and `interpret` is not given, nothing is compiled: the
    kernels run on the CPU under tlc.interpreter (numpy arrays or torch
    tensors); the options are still checked, and those that only shape
    compilation (target, pass_configs) do not change what runs."""
    options = jit_options(target, execution_backend, target_host, verbose, pass_configs,
                          debug_root_path, compile_flags)
    if interpret is None:
        interpret = os.environ.get("TLC_INTERPRET", "") not in ("", "0")

    def wrap(f):
        from .frontend import PrimFunc

        if interpret:
            from .interpreter.kernel import interpreted

            return interpreted(f, out_idx=out_idx)
        if isinstance(f, PrimFunc):
            kernel = _compile_source(f, out_idx, options.resolve_target(_default_target()),
                                     None)
            report(options, kernel, "compiled")
            return kernel
        from .eager import EagerJITFactory, is_eager

        if is_eager(f):
            return EagerJITFactory(f, options, out_idx)
        return JITFactory(f, out_idx=out_idx, target=target, cache=cache, options=options)

    return wrap(fn) if fn is not None else wrap
