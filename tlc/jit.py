"""@tlc.jit and tlc.compile: tile programs -> cached, launchable kernels."""

from __future__ import annotations

import functools
import os

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
        out_idx = _out_positions(out_idx)
        for i in out_idx:
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
        self._fast_path_setup()
        self._launched = False
        self._layouts: dict | None = None  # read from the snapshot on first use

    @property
    def name(self) -> str:
        return self.artifact["name"]

    def __call__(self, *args, stream=None):
        """Launches with the inputs (all parameters but out_idx's, in order);
        allocates and returns the outputs named by out_idx."""
        native = self._native  # the native fast path (tlc/runtime/plans.py)
        if native is not None:
            outputs = native(args, stream)
            if outputs is not None:
                return outputs
        if not self.out_idx:
            return self.kernel(*args, stream=stream)
        n_in = len(self.params) - len(self.out_idx)
        if len(args) != n_in:
            names = [p["name"] for i, p in enumerate(self.params) if i not in self.out_idx]
            from .runtime import ArgumentError

            raise ArgumentError(f"{self.name} takes {n_in} inputs ({', '.join(names)}); "
                            f"outputs {[self.params[i]['name'] for i in self.out_idx]} are "
                            f"allocated and returned, got {len(args)} arguments")
        if self._fast is not None:
            done = self._fast_call(args, stream)
            if done is not None:
                return done
        if not self._launched:
            from .runtime.driver import runtime

            self._check_inputs(args)  # a wrong argument is said before a missing GPU
            runtime()  # no driver or GPU: a LaunchError before anything is allocated
        specs, outputs = self._allocate_outputs(args)
        full = self._full_args(args, outputs)
        self.kernel(*full, stream=stream)
        self._launched = True
        if self._fast is not None:
            self._remember(args, full, specs)
        return outputs[0] if len(outputs) == 1 else outputs

    # ---- The fast path of out_idx calls with torch tensors -----------------
    #
    # A call whose inputs have the key (tlc/runtime/plans.py) of an earlier
    # call that launched from a plan allocates the outputs that call did
    # (same shapes, dtypes and device: torch.empty makes them contiguous) and
    # launches from the Kernel's plan of that earlier call, checking the
    # inputs as the Kernel's own fast path does, without reading the outputs'
    # shapes again. Anything else goes through Kernel.__call__.

    def _fast_path_setup(self) -> None:
        from operator import itemgetter

        from .runtime import Kernel, plans

        self._fast = None  # input key -> (output specs, the Kernel's plan key)
        self._native = self._native_launcher = None
        if not self.out_idx or not isinstance(self.kernel, Kernel):
            return  # a KernelSequence: each of its kernels has its own plans
        params = self.kernel.params
        fixed = {params[i].name for i in self.kernel._signature.fixed_scalars}
        inputs = tuple(p for p, is_out in zip(params, self._is_out) if not is_out)
        self._in_signature = plans.Signature.of(inputs, fixed)
        self._plans_module = plans
        self._fast = {}
        # The full argument list from inputs + outputs, and the tensors' data
        # pointers in the Kernel's order from the inputs' then the outputs'.
        n_in = len(inputs)
        src, tensor_src, at_in, at_out = [], [], 0, n_in
        n_in_tensors = sum(p.kind == "tensor" for p in inputs)
        in_t, out_t = 0, n_in_tensors
        for p, is_out in zip(params, self._is_out):
            if is_out:
                src.append(at_out)
                at_out += 1
                tensor_src.append(out_t)
                out_t += 1
            else:
                src.append(at_in)
                at_in += 1
                if p.kind == "tensor":
                    tensor_src.append(in_t)
                    in_t += 1
        pick = lambda order: (None if order == sorted(order) else  # noqa: E731
                              itemgetter(*order) if len(order) > 1 else
                              lambda xs: (xs[order[0]],))
        self._pick_args, self._pick_ptrs = pick(src), pick(tensor_src)
        # Natively: the Kernel's plans with each parameter's source among
        # the inputs, or an output (-1, -2, ...) allocated by the Launcher.
        self._sources = [s if s < n_in else n_in - 1 - s for s in src]
        self._native_launcher = plans.native_launcher()
        if self._native_launcher is not None:
            self._native = self._native_launcher.launch

    def _full_args(self, inputs: tuple, outputs: list) -> tuple:
        full = inputs + tuple(outputs)
        return full if self._pick_args is None else self._pick_args(full)

    def _fast_call(self, args: tuple, stream):
        """The outputs of a call launched from a plan, or None when the call
        must take the checked path."""
        called = self._in_signature.probe(args)
        if called is None:
            return None
        try:
            entry = self._fast.get(called[0])
        except TypeError:  # an unhashable scalar
            return None
        if entry is None:
            return None
        specs, key = entry
        plan = self.kernel._plans.get(key)
        if plan is None:  # the Kernel emptied its plans
            return None
        empty = self._torch.empty
        outputs = [empty(shape, dtype=dtype, device=device) for shape, dtype, device in specs]
        full = self._full_args(args, outputs)
        tensor = self._plans_module._torch_tensor_type
        ptrs = called[1]
        for o in outputs:
            if type(o) is not tensor:  # e.g. under a torch mode: the checked path
                ptrs = None
                break
            ptrs += (o.data_ptr(),)
        if ptrs is None or not self.kernel._run_plan(
                plan, full, ptrs if self._pick_ptrs is None else self._pick_ptrs(ptrs), stream):
            self.kernel(*full, stream=stream)
        return outputs[0] if len(outputs) == 1 else outputs

    def _remember(self, inputs: tuple, full: tuple, specs) -> None:
        """After a checked launch: lets later calls with these inputs' key
        take the fast path, if the Kernel left a plan for the launch."""
        from .runtime import plans

        called_in = plans.call_key(self._in_signature, inputs)
        called = plans.call_key(self.kernel._signature, full)
        if called_in is None or called is None or called[0] not in self.kernel._plans:
            return
        if len(self._fast) >= plans.MAX_PLANS:
            self._fast.clear()
        self._fast[called_in[0]] = (specs, called[0])
        if self._native_launcher is not None:
            plan = self.kernel._plans[called[0]]
            native = plans.native_plan(
                plan, len(inputs), self.name,
                tuple((kind, self._sources[i], *rest) for i, (kind, _, *rest)
                      in enumerate(plan.specs)),
                tuple(specs), self._torch.empty)
            if native is not None:
                self._native_launcher.add(native)

    def _check_inputs(self, inputs) -> None:
        """Checks the inputs against their parameters, as the launch will."""
        from .runtime.args import check_args

        params = [p for p, is_out in zip(self.kernel.params, self._is_out) if not is_out]
        check_args(self.name, params, inputs)

    def _allocate_outputs(self, inputs):
        """(output specs, torch tensors for the outputs); their shapes,
        dtypes and device are derived once per input shapes and device, then
        reused."""
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
        return specs, [empty(shape, dtype=dtype, device=device) for shape, dtype, device in specs]

    def _output_specs_for(self, inputs):
        try:
            import torch
        except ImportError:
            raise RuntimeError(f"{self.name}: out_idx outputs are allocated as torch "
                               "tensors, and torch is not installed") from None

        from .runtime.args import check_sized, size_expr
        from .runtime.dtypes import torch_dtype

        symbols, device, sized = {}, None, []
        inputs_it = iter(inputs)
        for i, p in enumerate(self.params):
            if i in self.out_idx:
                continue
            arg = next(inputs_it)
            if p["kind"] != "tensor" or not hasattr(arg, "shape"):
                continue
            device = device or getattr(arg, "device", None)
            for k, (dim, size) in enumerate(zip(p["shape"], arg.shape)):
                if isinstance(dim, str) and dim.isidentifier():
                    symbols.setdefault(dim, int(size))
                elif isinstance(dim, str):  # `(seq * 4)`: solved or checked below
                    sized.append((f"argument '{p['name']}'", k, int(size), dim,
                                  tuple(arg.shape)))
        check_sized(sized, symbols, {})  # the outputs' sizes come from the inputs
        outputs = []
        for i in self.out_idx:
            p = self.params[i]
            shape = []
            for dim in p["shape"]:
                if isinstance(dim, str):
                    expr = size_expr(dim)
                    if expr.symbols - symbols.keys():
                        raise TypeError(f"cannot allocate output '{p['name']}': its size {dim} "
                                        "is not the size of any input")
                    dim = expr(symbols)
                shape.append(dim)
            outputs.append((tuple(shape), torch_dtype(p["dtype"]), device or "cuda"))
        self._torch = torch
        return outputs

    def torch_op(self, name: str):
        """Registers this kernel as the PyTorch custom operator `name`
        ("mylib::name") and returns it (the same as torch.ops.mylib.name):
        usable under torch.compile(fullgraph=True), in CUDA graphs, on torch
        streams. Its arguments are the kernel's inputs (all parameters but
        out_idx's); it allocates and returns the out_idx outputs. See
        tlc/torch_op.py."""
        from .torch_op import register

        return register(self, name)

    def get_kernel_source(self) -> str:
        """The PTX (of each kernel in launch order, for a prim_func of several)."""
        from .runtime.artifact import artifact_ptx

        return artifact_ptx(self.artifact)

    def get_mlir(self, stage: str = "tile") -> str:
        """The IR at a stage: "tile" (as the frontend built it), "optimized" (layouts
        and shared memory assigned), "gpu" (per-thread code), "nvvm" (LLVM dialect)."""
        if stage not in self.stages:
            raise ValueError(f"unknown stage '{stage}' (stages: {', '.join(self.stages)})")
        return self.stages[stage]

    def layouts(self) -> dict:
        """The layouts the compiler chose for the kernel's on-chip buffers, by
        the names the program gave them: {name: tlc.layout.FragmentLayout (which
        thread and register hold each element) or tlc.layout.SharedLayout (each
        element's address and bank)}. Buffers the compiler made (mbarriers) and
        those of hand-written tile IR are listed by their SSA names ("%3"). Draw
        one with tlc.layout.plot."""
        from .layout import kernel_layouts

        if self._layouts is None:
            self._layouts = kernel_layouts(self)
        return dict(self._layouts)

    def layout(self, buffer: str):
        """The layout of one buffer (see `layouts`); a tlc.layout.LayoutError
        names the buffers there are when `buffer` is not one of them."""
        from .layout import kernel_layout

        return kernel_layout(self, buffer)

    def get_profiler(self, tensor_supply_type=None):
        from .profiler import Profiler, TensorSupplyType

        return Profiler(self, tensor_supply_type or TensorSupplyType.Auto)

    def save(self, path: str) -> None:
        """Writes the launchable artifact (PTX + metadata) to `path`."""
        from . import runtime

        runtime.save_artifact(self.artifact, path)

    def __repr__(self) -> str:
        return f"<tlc.JITKernel {self.name} for {self.artifact['target']}>"


def _out_positions(out_idx) -> list[int]:
    """out_idx as a list of ints: None, an int, or a list or tuple of ints."""
    if out_idx is None:
        return []
    items = [out_idx] if isinstance(out_idx, int) and not isinstance(out_idx, bool) else out_idx
    if not isinstance(items, (list, tuple)) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in items):
        raise CompilationError(f"out_idx must be ints (parameter positions): an int or a "
                               f"list of ints, got {out_idx!r}")
    return list(items)


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


# -- the disk cache (tlc/cache.py; its keys: tlc/cache_key.py) ---------------

from .cache import cache_dir  # noqa: E402,F401  (tlc.jit.cache_dir, as before)


def _cache_key(tile_ir: str, name: str, target: str) -> str:
    """The key of a compilation: what the frontend built, the target and the compiler."""
    from .cache_key import ir_key

    return ir_key(tile_ir, name, target)


class JITFactory:
    """A factory of tile programs; calling it compiles (once per argument set)."""

    def __init__(self, factory, out_idx=None, target=None, cache: bool = True,
                 options: JitOptions | None = None):
        self.factory = factory
        self.out_idx = out_idx
        self.target = target
        self.options = options or jit_options(target)
        self._disk_cache = cache
        self._memory: dict = {}  # cache key -> JITKernel
        functools.update_wrapper(self, factory)

    @property
    def use_disk_cache(self) -> bool:
        """cache=True, and tlc.disable_cache() not in effect."""
        from .cache_control import is_cache_enabled

        return self._disk_cache and is_cache_enabled()

    def get_kernel_source(self, *args, **kwargs) -> str:
        """The PTX of the kernel these factory arguments compile to (TileLang's
        `factory.get_kernel_source(...)`; compiled, or taken from the caches)."""
        return self(*args, **kwargs).get_kernel_source()

    def __call__(self, *args, **kwargs) -> JITKernel:
        target = self.options.resolve_target(_default_target())
        key = self._fast_key(args, kwargs, target)
        if key is not None and key in self._memory:
            return self._memory[key]
        self._cache_hit = False
        call = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
        with _timing_session(f"@tlc.jit {self.factory.__name__}({call}) for {target}"):
            kernel = self._compile(args, kwargs, target, key)
        report(self.options, kernel, "loaded from the disk cache" if self._cache_hit
               else "compiled")
        return kernel

    # The caches, in memory and on disk, share one key: `cache_key.factory_key`
    # (every value the factory can read, hashed without running it) when it can
    # be computed, else the key of the tile IR the factory builds. The target
    # (with the pass configs that change it) is part of both.

    def _fast_key(self, args, kwargs, target) -> str | None:
        from .cache_key import factory_key

        return factory_key(self.factory, args, kwargs, target)

    def _remember(self, key: str, kernel: JITKernel) -> JITKernel:
        if len(self._memory) >= 256:
            self._memory.clear()
        self._memory[key] = kernel
        return kernel

    def _compile(self, args, kwargs, target, key: str | None = None) -> JITKernel:
        from . import cache

        if key is not None and self.use_disk_cache:
            with _stage("disk-cache lookup"):
                kernel = self._from_cache(cache.load(key))
            if kernel is not None:  # a hit loads neither the frontend nor the compiler
                return self._remember(key, kernel)
        from .frontend import PrimFunc

        with _stage(f"frontend: run the factory {self.factory.__name__}"):
            prim = self.factory(*args, **kwargs)
        if not isinstance(prim, PrimFunc):
            raise CompilationError(f"@tlc.jit factory '{self.factory.__name__}' must "
                                   f"return a @T.prim_func, got {type(prim).__name__}")
        module = prim.build_module()
        if key is None:
            key = _cache_key(str(module), prim.name, target)
            if key in self._memory:
                return self._memory[key]
            with _stage("disk-cache lookup (by tile IR)"):
                kernel = self._from_cache(cache.load(key)) if self.use_disk_cache else None
            if kernel is not None:
                return self._remember(key, kernel)
        if not self.use_disk_cache:
            return self._remember(key, self._compile_module(module, prim.name, target))
        # One process compiles a key at a time; the others wait and load its entry.
        with cache.compiling(key) as stored:
            kernel = self._from_cache(stored)
            if kernel is None:
                kernel = self._compile_module(module, prim.name, target, key)
        return self._remember(key, kernel)

    def _compile_module(self, module, name: str, target: str, key: str | None = None):
        """Compiles; stores the entry under `key` if given."""
        from . import cache
        from .compiler import compile_module

        compiled = compile_module(module, target, keep_ir=True)
        artifact, stages = compiled.artifact(name), dict(compiled.stages)
        kernel = _load_kernel(artifact, stages, self.out_idx)
        if key is not None:
            with _stage("disk-cache write"):
                cache.store(key, artifact, stages)
        return kernel

    def _from_cache(self, cached) -> JITKernel | None:
        from .runtime import ArtifactError

        if cached is None:
            return None
        try:
            kernel = JITKernel(*cached, out_idx=self.out_idx)
            self._cache_hit = True
            return kernel
        except (ArtifactError, KeyError, TypeError, ValueError, RecursionError):
            return None  # a damaged entry: compile again and replace it

    def cache_key(self, *args, **kwargs) -> str:
        """The cache key of the kernel these arguments make."""
        target = self.options.resolve_target(_default_target())
        key = self._fast_key(args, kwargs, target)
        if key is not None:
            return key
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
    (accepted; tlc has one runtime), `compile_flags` (nvcc flags:
    `--use_fast_math` honoured, C++-only ones reported and changing nothing,
    others errors; see tlc.compile_flags); `target_host` is an error. See
    tlc.jit_options.

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

        from .eager import EagerJITFactory, is_eager

        if interpret and not isinstance(f, PrimFunc) and is_eager(f):
            return EagerJITFactory(f, options, out_idx, interpret=True)
        if interpret:
            from .interpreter.kernel import interpreted

            return interpreted(f, out_idx=out_idx)
        if isinstance(f, PrimFunc):
            kernel = _compile_source(f, out_idx, options.resolve_target(_default_target()),
                                     None)
            report(options, kernel, "compiled")
            return kernel
        if is_eager(f):
            return EagerJITFactory(f, options, out_idx)
        return JITFactory(f, out_idx=out_idx, target=target, cache=cache, options=options)

    return wrap(fn) if fn is not None else wrap
