"""AutoTuner: compile every candidate configuration of a factory, check and
time each on the GPU, keep the fastest (TileLang's `tilelang.autotuner.AutoTuner`)."""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
import threading

from ..utils.tensor import TensorSupplyType
from . import compile_pool, tuning_cache
from .progress import Progress


class AutotuneError(RuntimeError):
    """No candidate could be compiled, checked and timed (the message lists why each failed)."""


_INPUTS = threading.local()


def get_autotune_inputs():
    """The tensors given by the innermost `set_autotune_inputs`, or None."""
    stack = getattr(_INPUTS, "stack", None)
    return stack[-1] if stack else None


@dataclasses.dataclass
class ProfileArgs:
    """How candidates are checked and timed (TileLang's names; `timer` and
    `workers` are tlc's: a replacement for GPU timing, e.g. in tests, and the
    number of compile processes)."""

    warmup: float = 25
    rep: float = 100
    timeout: float | None = 30
    supply_type: TensorSupplyType = TensorSupplyType.Auto
    ref_prog: object = None
    supply_prog: object = None
    rtol: float = 1e-2
    atol: float = 1e-2
    max_mismatched_ratio: float = 0.01
    skip_check: bool = False
    manual_check_prog: object = None
    cache_input_tensors: bool = False
    timer: object = None
    workers: int | None = None


@dataclasses.dataclass
class AutotuneResult:
    """The winner: its latency (ms), config, kernel and PTX (libcode); the
    reference's latency when a ref_prog was timed; the skipped candidates as
    (config, why) pairs; whether it came from the disk cache."""

    latency: float
    config: dict
    ref_latency: float | None
    libcode: str
    kernel: object
    skipped: list = dataclasses.field(default_factory=list)
    from_cache: bool = False


class AutoTuner:
    """Tunes `fn` (a factory returning a @T.prim_func, plain or @tlc.jit) over
    `configs` (a list of keyword dicts, or a function of the factory's
    arguments returning one)."""

    _memory: dict = {}  # tuning key -> AutotuneResult, for this process

    def __init__(self, fn, configs, args=(), kwargs=None, compile_only: bool = False):
        from ..eager import EagerJITFactory
        from ..jit import JITFactory
        from ..jit_options import jit_options

        self.fn = fn
        self.configs = configs
        self._args, self._kwargs = tuple(args), dict(kwargs or {})
        self._eager = self._call = None
        self._compile_only = compile_only and isinstance(fn, EagerJITFactory)
        if isinstance(fn, EagerJITFactory):
            # tuned on the call's own tensors (or, compile_only, on supplied ones:
            # kwargs are .compile's sizes and compile-time values); keyed by sizes
            # and dtypes, not values
            self._eager = fn
            self._call = fn.compile_call(self._kwargs, _tuned_names(configs)) if compile_only \
                else fn.bind(self._args, self._kwargs)
            self._factory, self._out_idx = fn.fn, fn.out_idx
            self._options, self._use_disk_cache = fn.options, False
        elif isinstance(fn, JITFactory):
            self._factory, self._out_idx = fn.factory, fn.out_idx
            self._options, self._use_disk_cache = fn.options, fn.use_disk_cache
        else:
            self._factory, self._out_idx = fn, None
            self._options, self._use_disk_cache = jit_options(), True
        self.profile_args = ProfileArgs()

    @classmethod
    def from_kernel(cls, kernel, configs) -> AutoTuner:
        """A tuner of `kernel(**config)` for each config."""
        return cls(kernel, configs)

    def set_compile_args(self, out_idx=None, target=None, execution_backend=None,
                         target_host=None, verbose: bool = False, pass_configs=None) -> AutoTuner:
        """How candidates compile: @tlc.jit's options."""
        from ..jit_options import jit_options

        self._out_idx = out_idx
        self._options = jit_options(target, execution_backend, target_host, verbose,
                                    pass_configs)
        return self

    def set_profile_args(self, warmup: float = 25, rep: float = 100, timeout: float = 30,
                         supply_type: TensorSupplyType = TensorSupplyType.Auto,
                         ref_prog=None, supply_prog=None, rtol: float = 1e-2,
                         atol: float = 1e-2, max_mismatched_ratio: float = 0.01,
                         skip_check: bool = False, manual_check_prog=None,
                         cache_input_tensors: bool = False, timer=None,
                         workers: int | None = None) -> AutoTuner:
        """How candidates are checked and timed (see ProfileArgs).

        Each candidate runs on inputs from `set_autotune_inputs`, else (for an
        eager-style kernel) the call's own tensors, else `supply_prog(params)`
        (the inputs, each with .name, .shape and .dtype), else the profiler's
        `supply_type`; with `ref_prog` (and not `skip_check`) its outputs must match
        `ref_prog(*inputs)` within rtol/atol/max_mismatched_ratio, and
        `manual_check_prog(outputs, reference_outputs)` may reject it by
        raising. `timer(kernel, config) -> ms` replaces all of that (the
        GPU timing and the checks, so it excludes their arguments; warmup and
        rep are then the timer's business)."""
        if not isinstance(supply_type, TensorSupplyType):
            raise TypeError(f"supply_type must be a TensorSupplyType, got {supply_type!r}")
        if timer is not None:
            given = [name for name, v in (("ref_prog", ref_prog), ("supply_prog", supply_prog),
                                          ("manual_check_prog", manual_check_prog),
                                          ("cache_input_tensors", cache_input_tensors))
                     if v] + (["supply_type"] if supply_type != TensorSupplyType.Auto else [])
            if given:
                raise ValueError(f"timer= replaces the checking and the timing on the GPU, "
                                 f"so {', '.join(given)} would not be used: drop one or the "
                                 "other")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or workers < 1):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self.profile_args = ProfileArgs(warmup, rep, timeout, supply_type, ref_prog,
                                        supply_prog, rtol, atol, max_mismatched_ratio,
                                        skip_check, manual_check_prog, cache_input_tensors,
                                        timer, workers)
        return self

    # -- the run ------------------------------------------------------------------

    def _candidates(self) -> list[dict]:
        configs = self.configs
        if callable(configs):
            configs = configs(*self._args, **self._kwargs)
        if configs is None:
            raise ValueError("autotune needs configs= (a list of keyword dicts)")
        configs = list(configs)
        if not configs:
            raise ValueError("autotune got an empty list of configs")
        sig = inspect.signature(self._factory)
        for c in configs:
            if not isinstance(c, dict):
                raise TypeError(f"each autotune config is a dict of keyword arguments, "
                                f"got {c!r}")
            pinned = sorted(set(c) & set(self._kwargs))
            if pinned:
                raise ValueError(f"config {c} sets {pinned}, which the call also gives")
            runtime = sorted(set(c) & set(self._eager.runtime if self._eager else ()))
            if runtime:
                raise ValueError(f"config {c} sets {runtime}, kernel arguments given at launch")
            if self._compile_only:  # .compile's keywords: sizes and compile-time values
                unknown = sorted(set(c) - set(sig.parameters))
                if unknown:
                    raise TypeError(f"config {c} does not fit {self._factory.__name__}"
                                    f"{sig}: no parameter {unknown[0]!r}")
                continue
            try:
                sig.bind(*self._args, **self._kwargs, **c)
            except TypeError as e:
                raise TypeError(f"config {c} does not fit {self._factory.__name__}"
                                f"{sig}: {e}") from None
        return configs

    def run(self, warmup: float | None = None, rep: float | None = None,
            timeout: float | None = None) -> AutotuneResult:
        """Tunes (or reads the winner from the disk cache) and returns the result."""
        from ..jit import _default_target

        p = self.profile_args
        if warmup is not None or rep is not None or timeout is not None:
            p = dataclasses.replace(p, warmup=p.warmup if warmup is None else warmup,
                                    rep=p.rep if rep is None else rep,
                                    timeout=p.timeout if timeout is None else timeout)
        configs = self._candidates()
        target = self._options.resolve_target(_default_target())
        options = dataclasses.replace(self._options, target=target)
        extra = {"out_idx": self._out_idx, "ref": p.ref_prog is not None and not p.skip_check,
                 "supply": p.supply_type.name}
        if self._eager is not None:
            call = self._call
            key_args, key_kwargs = (), {**call.statics, "__sizes__": call.consts,
                                        "__dtypes__": call.dtypes}
        else:
            key_args, key_kwargs = self._args, self._kwargs
        key = tuning_key_of(self._factory, key_args, key_kwargs, configs, target, extra)
        label = f"{self._factory.__name__}{_call_repr(self._args, self._kwargs)}"
        if key in self._memory:
            return self._memory[key]
        from ..cache_control import is_cache_enabled

        cached = tuning_cache.load_best(key, configs) if is_cache_enabled() else None
        if cached is not None:
            result = self._from_cache(configs, cached, options, label)
            if result is not None:
                self._memory[key] = result
                return result
        if p.timer is None:
            from ..profiler import _cuda_torch

            _cuda_torch(f"autotune of {label}")  # no GPU: say so before compiling anything
        result = self._tune(configs, options, p, label)
        if is_cache_enabled():
            tuning_cache.store_best(key, configs, configs.index(result.config), result.latency)
        self._memory[key] = result
        return result

    def _jobs(self, configs, options) -> list:
        from ..cache import cache_dir

        if self._eager is not None:
            call = self._call
            return [compile_pool.Job((), {"values": {**call.statics, **c}, "consts": call.consts,
                                          "dtypes": call.dtypes}, self._out_idx, options, False,
                                     cache_dir(), eager=True) for c in configs]
        return [compile_pool.Job(self._args, {**self._kwargs, **c}, self._out_idx, options,
                                 self._use_disk_cache, cache_dir()) for c in configs]

    def _from_cache(self, configs, cached, options, label) -> AutotuneResult | None:
        index, latency = cached
        (job,) = self._jobs([configs[index]], options)
        try:
            kernel = compile_pool.compile_job(self._factory, job)
        except Exception:
            return None  # the winner no longer compiles: tune again
        print(f"tlc.autotune {label}: best config from the disk cache: {configs[index]} "
              f"({latency:.4f} ms)", file=sys.stderr)
        return AutotuneResult(latency, configs[index], None, kernel.get_kernel_source(),
                              kernel, [], True)

    def _tune(self, configs, options, p: ProfileArgs, label: str) -> AutotuneResult:
        progress = Progress(f"tlc.autotune {label}", len(configs))
        workers = p.workers or compile_pool.default_workers()
        outcomes = compile_pool.compile_all(self._factory, self._jobs(configs, options),
                                            workers, p.timeout,
                                            lambda done: progress.update("compiled", done))
        skipped, timed = [], []
        measure = p.timer or _GpuTimer(p, self._call.launch_args if self._call else None)
        for n, (config, outcome) in enumerate(zip(configs, outcomes), 1):
            if outcome.error is not None:
                skipped.append((config, "failed to compile: " + _first_line(outcome.error)))
            else:
                try:
                    ms = measure(outcome.kernel, config)
                    if isinstance(ms, bool) or not isinstance(ms, (int, float)) \
                            or not math.isfinite(ms) or ms <= 0:
                        raise ValueError(f"the timer returned {ms!r}, not a time in ms")
                    timed.append((float(ms), n - 1, outcome.kernel))
                except AssertionError as e:
                    skipped.append((config, "failed the check: " + _first_line(str(e))))
                except Exception as e:
                    skipped.append((config, f"failed to run: {type(e).__name__}: "
                                            f"{_first_line(str(e))}"))
            progress.update("timed", n)
        progress.done()
        for config, why in skipped:
            print(f"  skipped {config}: {why}", file=sys.stderr)
        if not timed:
            reasons = "\n".join(f"  {c}: {why}" for c, why in skipped)
            raise AutotuneError(f"autotune of {label}: all {len(configs)} candidates "
                                f"failed:\n{reasons}")
        latency, index, kernel = min(timed, key=lambda t: (t[0], t[1]))
        ref_latency = getattr(measure, "ref_latency", None)
        print(f"tlc.autotune {label}: best {configs[index]} {latency:.4f} ms "
              f"({len(timed)} timed, {len(skipped)} skipped)", file=sys.stderr)
        return AutotuneResult(latency, configs[index], ref_latency, kernel.get_kernel_source(),
                              kernel, skipped)


def _tuned_names(configs) -> tuple:
    """The parameters a list of configs sets (none known for a function of them)."""
    if callable(configs) or not configs:
        return ()
    return tuple(sorted({k for c in configs for k in c}))


def tuning_key_of(fn, args, kwargs, configs, target, extra) -> str:
    return tuning_cache.tuning_key(fn, args, kwargs, configs, target, extra)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "(no message)"


def _short(value) -> str:
    if hasattr(value, "shape") and hasattr(value, "dtype"):  # a tensor: not its values
        return f"tensor({list(value.shape)}, {str(value.dtype).removeprefix('torch.')})"
    return repr(value)


def _call_repr(args, kwargs) -> str:
    parts = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
    return f"({', '.join(parts)})"


def kernel_params(kernel) -> list:
    """The kernel's inputs as TileLang's supply programs see them: objects with
    .name, .shape and .dtype (a torch dtype for tensors)."""
    from types import SimpleNamespace

    from ..utils.tensor import map_torch_type

    return [SimpleNamespace(name=p["name"], shape=list(p.get("shape", [])),
                            dtype=map_torch_type(p["dtype"]) if p["kind"] == "tensor"
                            else p["dtype"], kind=p["kind"])
            for i, p in enumerate(kernel.params) if i not in kernel.out_idx]


class _GpuTimer:
    """Checks a candidate against the reference and times it with do_bench."""

    def __init__(self, p: ProfileArgs, call_inputs=None):
        self.p = p
        self.call_inputs = call_inputs  # an eager kernel's own launch arguments
        self.inputs = None
        self.ref_latency = None

    def _inputs(self, kernel):
        if self.inputs is not None and self.p.cache_input_tensors:
            return self.inputs
        from ..profiler import Profiler

        given = get_autotune_inputs()
        if given is not None:
            inputs = list(given)
        elif self.call_inputs is not None:
            inputs = list(self.call_inputs)
        elif self.p.supply_prog is not None:
            inputs = list(self.p.supply_prog(kernel_params(kernel)))
        else:
            inputs = Profiler(kernel, self.p.supply_type).inputs()
        self.inputs = inputs
        return inputs

    def __call__(self, kernel, config) -> float:
        from ..profiler import Profiler, do_bench
        from ..utils.tensor import torch_assert_close

        p = self.p
        inputs = self._inputs(kernel)
        profiler = Profiler(kernel, p.supply_type)
        if not p.skip_check and (p.ref_prog is not None or p.manual_check_prog is not None):
            outs = profiler._run([x.clone() if hasattr(x, "clone") else x for x in inputs])
            refs = None
            if p.ref_prog is not None:
                refs = p.ref_prog(*inputs)
                refs = list(refs) if isinstance(refs, (list, tuple)) else [refs]
                if len(refs) != len(outs):
                    raise AssertionError(f"the reference returned {len(refs)} outputs, the "
                                         f"kernel {len(outs)}")
                for out, ref in zip(outs, refs):
                    torch_assert_close(out, ref.to(out.dtype), rtol=p.rtol, atol=p.atol,
                                       max_mismatched_ratio=p.max_mismatched_ratio,
                                       check_dtype=False)
            if p.manual_check_prog is not None:
                p.manual_check_prog(outs, refs)
            if p.ref_prog is not None and self.ref_latency is None:
                self.ref_latency = do_bench(lambda: p.ref_prog(*inputs), p.warmup, p.rep)
        return do_bench(lambda: profiler._run(inputs), p.warmup, p.rep)
