"""Timing on the GPU (`tilelang.profiler.do_bench`) and kernel.get_profiler():
inputs by a supply type, assert_allclose, do_bench.

torch is imported when something is timed; without torch or a CUDA device,
timing raises tlc.runtime.LaunchError saying which is missing.
"""

from __future__ import annotations

import statistics

from .utils.tensor import TensorSupplyType, get_tensor_supply

RETURN_MODES = ("min", "max", "mean", "median", "all")
BACKENDS = ("event", "cudagraph")


def _cuda_torch(what: str):
    from .runtime.errors import LaunchError

    try:
        import torch
    except ImportError:
        raise LaunchError(f"{what} times on the GPU through torch, which is not installed") \
            from None
    if not torch.cuda.is_available():
        raise LaunchError(f"{what} needs a CUDA device, and torch sees none")
    return torch


def _graph_times(torch, fn, per_graph: int, reps: int, warmup: int) -> list[float]:
    """ms of one call of `fn`, per replay of a CUDA graph of `per_graph` calls."""
    fn()  # outside capture: module loading, allocator warm-up
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=torch.cuda.Stream()):
        for _ in range(per_graph):
            fn()
    for _ in range(warmup):
        graph.replay()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / per_graph)
    return times


def graph_time_ms(fn, per_graph: int = 20, reps: int = 20, warmup: int = 3) -> float:
    """Median GPU time in ms of one call of `fn`: `per_graph` calls captured
    in a CUDA graph, replayed `reps` times between CUDA events (so the host's
    launch overhead is not what is measured). Needs torch with CUDA."""
    torch = _cuda_torch("graph_time_ms")
    return statistics.median(_graph_times(torch, fn, per_graph, reps, warmup))


def _event_times(torch, fn, n_warmup: int, n_repeat: int, flush) -> list[float]:
    for _ in range(n_warmup):
        fn()
    times = []
    for _ in range(n_repeat):
        if flush is not None:
            flush.zero_()  # evict the inputs from L2, as a cold call sees them
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def _summarize(times: list[float], quantiles, return_mode: str):
    if quantiles is not None:
        import numpy as np

        q = np.quantile(np.asarray(times, dtype=np.float64), list(quantiles)).tolist()
        return q[0] if len(q) == 1 else q
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.fmean,
            "median": statistics.median}[return_mode](times)


def do_bench(fn, warmup: float = 25, rep: float = 100, _n_warmup: int = 0,
             _n_repeat: int = 0, quantiles=None, fast_flush: bool = True,
             backend: str = "event", return_mode: str = "mean"):
    """GPU time of `fn()` in ms (`tilelang.profiler.do_bench`).

    `warmup` and `rep` are time budgets in ms: the number of warm-up and timed
    calls comes from an estimate of one call (or `_n_warmup` / `_n_repeat`
    when given). backend "event": CUDA events around each call, with L2
    flushed before each (`fast_flush`: by zeroing a 256 MB buffer of int32
    rather than int8 elements); "cudagraph": replays of a CUDA graph of 10
    calls, no flush. Returns the `return_mode` ("min", "max", "mean",
    "median", or "all" times) or, given `quantiles`, those quantiles."""
    if return_mode not in RETURN_MODES:
        raise ValueError(f"return_mode must be one of {', '.join(RETURN_MODES)}, "
                         f"got {return_mode!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    for name, v in (("warmup", warmup), ("rep", rep)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise ValueError(f"{name} is a time budget in ms, got {v!r}")
    torch = _cuda_torch("do_bench")
    fn()
    torch.cuda.synchronize()
    flush = torch.empty(256 * 1024 * 1024 // (4 if fast_flush else 1),
                        dtype=torch.int32 if fast_flush else torch.int8, device="cuda")
    estimate = statistics.median(_event_times(torch, fn, 0, 5, flush))
    per_call = max(estimate, 1e-3)
    n_warmup = _n_warmup or max(1, int(warmup / per_call))
    n_repeat = _n_repeat or max(1, int(rep / per_call))
    if backend == "cudagraph":
        per_graph = 10
        times = _graph_times(torch, fn, per_graph, max(1, n_repeat // per_graph),
                             max(1, n_warmup // per_graph))
    else:
        times = _event_times(torch, fn, n_warmup, n_repeat, flush)
    return _summarize(times, quantiles, return_mode)


class Profiler:
    """Makes inputs for a JITKernel, checks it against a reference, times it."""

    def __init__(self, kernel, supply_type: TensorSupplyType = TensorSupplyType.Auto):
        self.kernel = kernel
        self.supply_type = supply_type

    def supply(self, p):
        """A value for parameter `p`: a CUDA tensor, or a Python number for a scalar."""
        if p["kind"] == "scalar":
            if p["dtype"] == "bool":
                return True
            return 1.0 if p["dtype"].startswith(("float", "bfloat")) else 1
        return get_tensor_supply(self.supply_type)(p)

    def inputs(self) -> list:
        """One input per parameter that is not an output."""
        return [self.supply(p) for i, p in enumerate(self.kernel.params)
                if i not in self.kernel.out_idx]

    def _run(self, inputs):
        if self.kernel.out_idx:
            out = self.kernel(*inputs)
            return list(out) if isinstance(out, (list, tuple)) else [out]
        self.kernel(*inputs)
        return [inputs[i] for i, p in enumerate(self.kernel.params)
                if p["kind"] == "tensor" and p.get("access") != "read"]

    def assert_allclose(self, reference_program, rtol: float = 1e-2, atol: float = 1e-2,
                        max_mismatched_ratio: float = 0.0):
        """Runs the kernel and `reference_program` on the same fresh inputs and
        compares every output."""
        import torch

        inputs = self.inputs()
        ref_inputs = [x.clone() if hasattr(x, "clone") else x for x in inputs]
        outs = self._run(inputs)
        refs = reference_program(*ref_inputs)
        refs = list(refs) if isinstance(refs, (list, tuple)) else [refs]
        if len(refs) != len(outs):
            raise AssertionError(f"the reference returned {len(refs)} outputs, the kernel "
                                 f"{len(outs)}")
        for k, (out, ref) in enumerate(zip(outs, refs)):
            ref = ref.to(out.dtype)
            close = torch.isclose(out, ref, rtol=rtol, atol=atol)
            bad = (~close).sum().item()
            if bad > max_mismatched_ratio * out.numel():
                diff = (out.float() - ref.float()).abs()
                raise AssertionError(
                    f"output {k}: {bad} of {out.numel()} elements differ beyond rtol={rtol}, "
                    f"atol={atol}; max abs diff {diff.max().item()}")

    def do_bench(self, func=None, warmup: float = 25, rep: float = 100, n_warmup: int = 0,
                 n_repeat: int = 0, input_tensors=None, backend: str = "cudagraph",
                 quantiles=None, return_mode: str = "median"):
        """Time in ms of one launch of the kernel (or of `func(*inputs)`) on
        fresh inputs or `input_tensors`: tlc.profiler.do_bench with these
        budgets and counts. The default, replays of a CUDA graph of 10
        launches and their median, times the GPU rather than the Python
        launch; backend="event", return_mode="mean" is TileLang's default."""
        inputs = input_tensors or self.inputs()
        if func is None:
            def call():
                return self._run(inputs)
        else:
            def call():
                return func(*inputs)
        return do_bench(call, warmup, rep, n_warmup, n_repeat, quantiles=quantiles,
                        backend=backend, return_mode=return_mode)
