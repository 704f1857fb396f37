"""kernel.get_profiler(): inputs by a supply type, do_bench, assert_allclose."""

from __future__ import annotations

import enum
import statistics


def graph_time_ms(fn, per_graph: int = 20, reps: int = 20, warmup: int = 3) -> float:
    """Median GPU time in ms of one call of `fn`: `per_graph` calls captured
    in a CUDA graph, replayed `reps` times between CUDA events (so the host's
    launch overhead is not what is measured). Needs torch with CUDA."""
    import torch

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
    return statistics.median(times)


class TensorSupplyType(enum.Enum):
    """How the profiler fills input tensors."""

    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


class Profiler:
    """Makes inputs for a JITKernel, checks it against a reference, times it."""

    def __init__(self, kernel, supply_type: TensorSupplyType = TensorSupplyType.Auto):
        self.kernel = kernel
        self.supply_type = supply_type

    def _static_shape(self, p) -> list[int]:
        if any(isinstance(d, str) for d in p["shape"]):
            raise ValueError(f"parameter '{p['name']}' has symbolic sizes {p['shape']}: "
                             "the profiler needs static shapes (call the kernel yourself)")
        return list(p["shape"])

    def supply(self, p):
        """A value for parameter `p`: a CUDA tensor, or a Python number for a scalar."""
        if p["kind"] == "scalar":
            if p["dtype"] == "bool":
                return True
            return 1.0 if p["dtype"].startswith(("float", "bfloat")) else 1
        import torch

        from .runtime.dtypes import torch_dtype

        dt = torch_dtype(p["dtype"])
        shape = self._static_shape(p)
        kind = self.supply_type
        if kind == TensorSupplyType.Auto:
            kind = TensorSupplyType.Normal if dt.is_floating_point else TensorSupplyType.Integer
        if kind == TensorSupplyType.Zero:
            return torch.zeros(shape, dtype=dt, device="cuda")
        if kind == TensorSupplyType.One:
            return torch.ones(shape, dtype=dt, device="cuda")
        if kind == TensorSupplyType.Integer or not dt.is_floating_point:
            if dt == torch.bool:
                return torch.rand(shape, device="cuda") < 0.5
            return torch.randint(-2, 3, shape, device="cuda").to(dt)
        if kind == TensorSupplyType.Uniform:
            return torch.rand(shape, device="cuda").to(dt)
        return torch.randn(shape, device="cuda").to(dt)

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

    def do_bench(self, func=None, warmup: int = 25, rep: int = 100, n_warmup: int = 0,
                 n_repeat: int = 0, input_tensors=None) -> float:
        """Median time in ms of one launch, from CUDA events around replays of a
        CUDA graph of 10 launches (the GPU's time, not the Python launch's)."""
        inputs = input_tensors or self.inputs()
        if func is None:
            def func():
                return self._run(inputs)
        else:
            fn = func

            def func():
                return fn(*inputs)
        return graph_time_ms(func, per_graph=10, reps=max(5, n_repeat or 20),
                             warmup=max(1, n_warmup or 3))
