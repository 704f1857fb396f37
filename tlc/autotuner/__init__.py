"""Autotuning (`tilelang.autotune`, `tilelang.autotuner`).

    @tlc.autotune(configs=[{"block_M": 64}, {"block_M": 128}], warmup=25, rep=100)
    @tlc.jit(out_idx=[-1])
    def matmul(M, N, K, block_M=128, ...): ...

    kernel = matmul(4096, 4096, 4096)   # the fastest candidate's JITKernel

The first call for some arguments compiles every candidate in parallel worker
processes, checks (given a ref_prog) and times each on the GPU, prints progress
and the skipped candidates on stderr, and keeps the winner in memory and in the
disk cache: a later call, in this process or another, compiles (or loads) only
the winner. Without a GPU the tuning raises tlc.runtime.LaunchError, unless a
`timer=` replaces GPU timing.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import warnings

from ..utils.tensor import TensorSupplyType
from .tuner import AutotuneError, AutotuneResult, AutoTuner, ProfileArgs, _INPUTS
from .tuner import get_autotune_inputs

__all__ = [
    "AutoTuner", "AutotuneError", "AutotuneResult", "ProfileArgs", "autotune",
    "get_autotune_inputs", "set_autotune_inputs",
]


@contextlib.contextmanager
def set_autotune_inputs(*tensors):
    """Within it, tuning runs every candidate on these tensors (all the
    kernel's inputs, in order) instead of generated ones."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    stack = getattr(_INPUTS, "stack", None)
    if stack is None:
        stack = _INPUTS.stack = []
    stack.append(tensors)
    try:
        yield
    finally:
        stack.pop()


class AutotunedFactory:
    """A factory under @tlc.autotune: calling it returns the best kernel for
    the arguments (tuned once per argument set and target)."""

    def __init__(self, fn, configs, profile: dict):
        self.fn = fn
        self.configs = configs
        self.profile = profile
        self._results: dict = {}  # call signature -> AutotuneResult (skips keying by source)
        self._positional: list | None = None  # the factory's positional parameter names
        functools.update_wrapper(self, fn, updated=())  # fn's attributes must not replace ours

    def _pinned(self, kwargs, args=()) -> bool:
        """Whether the call gives a tuned parameter itself, by keyword or by position: then,
        as in TileLang, nothing is tuned and the call compiles with the values it gives (the
        other parameters at their defaults), which a warning says. TileLang's tests and
        examples call tuned factories with their block sizes written out."""
        configs = self.configs if not callable(self.configs) else None
        if not configs:
            return False
        # The names positional arguments fill (computed once: this runs on every call).
        if self._positional is None:
            fn = getattr(self.fn, "factory", None) or getattr(self.fn, "fn", None) or self.fn
            self._positional = [
                p.name for p in inspect.signature(fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        given = set(kwargs).union(self._positional[:len(args)])
        tuned = set().union(*(set(c) for c in configs))
        pinned = sorted(tuned & given)
        if not pinned:
            return False
        if not tuned <= given:
            warnings.warn(f"{self.__name__}: the call gives the tuned parameter(s) "
                          f"{', '.join(pinned)}, so nothing is tuned; "
                          f"{', '.join(sorted(tuned - given))} keep their defaults",
                          stacklevel=3)
        return True

    def __call__(self, *args, **kwargs):
        """The best kernel for these arguments; for an eager-style kernel
        (called with its tensors), the best kernel's outputs on them."""
        from ..eager import EagerJITFactory
        from ..jit import JITFactory

        if self._pinned(kwargs, args):
            factory = self.fn if isinstance(self.fn, (JITFactory, EagerJITFactory)) \
                else JITFactory(self.fn)
            return factory(*args, **kwargs)
        eager = isinstance(self.fn, EagerJITFactory)
        result = self.get_tuner_result(*args, **kwargs)
        kernel = result.kernel
        kernel.latency, kernel.config, kernel.ref_latency = \
            result.latency, result.config, result.ref_latency
        if eager:
            call = self.fn.bind(args, kwargs)
            return kernel(*call.launch_args)
        return kernel

    def compile(self, *args, **kwargs):
        """The best kernel for these arguments, not run (TileLang's
        `tuned.compile(M=..., N=..., K=...)`). An eager-style factory takes
        its T.const sizes and compile-time parameters as keywords, no
        tensors: the candidates are timed on inputs the tuner supplies (as
        for a factory-style kernel). Giving every tuned parameter compiles
        that kernel without tuning. A factory-style factory returns its
        kernel when called already: this is the call."""
        from ..eager import EagerJITFactory

        if not isinstance(self.fn, EagerJITFactory):
            return self(*args, **kwargs)
        if args:
            raise TypeError(f"{self.__name__}.compile takes its sizes and compile-time "
                            "parameters as keywords (M=..., block_M=...), got positional "
                            "arguments")
        if self._pinned(kwargs):
            return self.fn.compile(**kwargs)
        result = self._tuned((), kwargs, compile_only=True)
        kernel = result.kernel
        kernel.latency, kernel.config, kernel.ref_latency = \
            result.latency, result.config, result.ref_latency
        return kernel

    def get_tuner_result(self, *args, **kwargs) -> AutotuneResult:
        """The AutotuneResult for these arguments (tuning if needed)."""
        return self._tuned(args, kwargs, compile_only=False)

    def _tuned(self, args, kwargs, compile_only: bool) -> AutotuneResult:
        """get_tuner_result's work; `compile_only`: an eager-style factory's
        .compile keywords, no tensors (kept apart from the factory's own
        keyword arguments)."""
        from ..eager import EagerJITFactory
        from ..jit import _default_target

        sig = _signature(args, kwargs, (_default_target(), compile_only))
        result = self._results.get(sig) if sig is not None else None
        if result is None:
            tuner = AutoTuner(self.fn, self.configs, args, kwargs, compile_only=compile_only)
            tuner.set_profile_args(**self.profile)
            result = tuner.run()
            if isinstance(self.fn, EagerJITFactory) and not compile_only:
                self.fn.check(tuner._call, {**tuner._call.statics, **result.config})
            if sig is not None:
                self._results[sig] = result
        return result


def _signature(args, kwargs, target):
    """A hashable summary of a call (tensors by shape and dtype), or None."""
    def one(v):
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return ("tensor", tuple(v.shape), str(v.dtype))
        return v

    key = (tuple(one(a) for a in args), tuple(sorted((k, one(v)) for k, v in kwargs.items())),
           target)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def autotune(func=None, *, configs=None, warmup: float = 25, rep: float = 100,
             timeout: float = 100, supply_type: TensorSupplyType = TensorSupplyType.Auto,
             ref_prog=None, supply_prog=None, rtol: float = 1e-2, atol: float = 1e-2,
             max_mismatched_ratio: float = 0.01, skip_check: bool = False,
             manual_check_prog=None, cache_input_tensors: bool = False, timer=None,
             workers: int | None = None):
    """`@tlc.autotune(configs=...)` above `@tlc.jit(...)` (or on a plain
    factory): see AutoTuner.set_profile_args for the arguments; `timeout` is
    the seconds each candidate's compilation may take."""
    if configs is None:
        raise ValueError("autotune needs configs= (a list of keyword dicts, or a function "
                         "of the factory's arguments returning one)")
    profile = dict(warmup=warmup, rep=rep, timeout=timeout, supply_type=supply_type,
                   ref_prog=ref_prog, supply_prog=supply_prog, rtol=rtol, atol=atol,
                   max_mismatched_ratio=max_mismatched_ratio, skip_check=skip_check,
                   manual_check_prog=manual_check_prog,
                   cache_input_tensors=cache_input_tensors, timer=timer, workers=workers)
    AutoTuner(lambda: None, configs).set_profile_args(**profile)  # check them now

    def wrap(fn):
        return AutotunedFactory(fn, configs, profile)

    return wrap(func) if func is not None else wrap
