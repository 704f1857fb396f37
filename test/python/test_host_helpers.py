"""TileLang's host helpers: tlc.profiler.do_bench, tlc.testing, tlc.utils.tensor
(no GPU here: timing runs against a fake torch whose events read a fake clock)."""

import random
import sys
import types

import numpy as np
import pytest

import tlc
from tlc import profiler, testing
from tlc.runtime import LaunchError
from tlc.utils.tensor import TensorSupplyType, get_tensor_supply, map_torch_type


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError


def fake_torch(monkeypatch, call_ms: float):
    """A torch whose CUDA events read a clock that each call of the timed
    function advances by `call_ms`; it counts the calls and L2 flushes."""
    clock = {"now": 0.0, "calls": 0, "flushes": 0}

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = clock["now"]

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return other.t - self.t

    class Buffer:
        def zero_(self):
            clock["flushes"] += 1

    cuda = types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None,
                                 Event=Event)
    torch = types.SimpleNamespace(cuda=cuda, empty=lambda *a, **k: Buffer(),
                                  int32="int32", int8="int8")
    monkeypatch.setitem(sys.modules, "torch", torch)

    def fn():
        clock["calls"] += 1
        clock["now"] += call_ms

    return fn, clock


def test_do_bench_budgets_are_milliseconds(monkeypatch):
    fn, clock = fake_torch(monkeypatch, 2.0)
    assert tlc.profiler.do_bench(fn, warmup=10, rep=40) == pytest.approx(2.0)
    # 1 first call + 5 for the estimate + 10/2 warm-up + 40/2 timed
    assert clock["calls"] == 1 + 5 + 5 + 20
    assert clock["flushes"] == 5 + 20  # L2 flushed before each timed call


def test_do_bench_counts_modes_and_quantiles(monkeypatch):
    fn, clock = fake_torch(monkeypatch, 0.5)
    times = profiler.do_bench(fn, _n_warmup=3, _n_repeat=7, return_mode="all")
    assert times == [0.5] * 7 and clock["calls"] == 1 + 5 + 3 + 7
    assert profiler.do_bench(fn, quantiles=[0.5, 0.2]) == [0.5, 0.5]
    assert profiler.do_bench(fn, return_mode="min") == 0.5


def test_do_bench_errors(no_torch):
    with pytest.raises(ValueError, match="return_mode must be one of"):
        profiler.do_bench(lambda: None, return_mode="avg")
    with pytest.raises(ValueError, match="backend must be one of"):
        profiler.do_bench(lambda: None, backend="cupti")
    with pytest.raises(LaunchError, match="torch, which is not installed"):
        profiler.do_bench(lambda: None)


def test_do_bench_without_a_gpu(monkeypatch):
    cuda = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    with pytest.raises(LaunchError, match="needs a CUDA device"):
        profiler.do_bench(lambda: None)


def test_set_random_seed_reproduces():
    testing.set_random_seed(7)
    first = (random.random(), np.random.rand())
    testing.set_random_seed(7)
    assert (random.random(), np.random.rand()) == first


def test_requires_cuda_skips_without_a_gpu(no_torch):
    def t():
        pass

    marked = testing.requires_cuda(t)
    (mark,) = marked.pytestmark
    assert mark.name == "skipif" and mark.args == (True,)
    assert "CUDA device" in mark.kwargs["reason"]
    mark = testing.requires_cuda_compute_version_ge(9, 0).mark
    assert mark.args == (True,) and "ge 9.0" in mark.kwargs["reason"]
    with pytest.raises(ValueError, match="mode must be one of"):
        testing.requires_cuda_compute_version(9, 0, "ne")


def test_torch_assert_close_on_arrays():
    ref = np.linspace(-1, 1, 1000).astype(np.float32)
    out = ref + 1e-4
    testing.torch_assert_close(out, ref, rtol=1e-2, atol=1e-3)
    out[:3] += 1.0  # 0.3 % of the elements
    testing.torch_assert_close(out, ref, max_mismatched_ratio=0.005)
    with pytest.raises(AssertionError, match=r"3 of 1000 elements \(0.30%\) differ"):
        testing.torch_assert_close(out, ref, max_mismatched_ratio=0.001)
    with pytest.raises(AssertionError, match="shapes differ"):
        testing.torch_assert_close(ref[:10], ref)


def test_tensor_helpers_without_torch(no_torch):
    with pytest.raises(RuntimeError, match="map_torch_type needs torch"):
        map_torch_type("float16")
    with pytest.raises(TypeError, match="supply_type must be a TensorSupplyType"):
        get_tensor_supply("normal")
    supply = get_tensor_supply(TensorSupplyType.Normal)
    with pytest.raises(ValueError, match="symbolic sizes"):
        supply({"name": "A", "shape": ["m", 4], "dtype": "float16"})
    with pytest.raises(RuntimeError, match="get_tensor_supply needs torch"):
        supply({"name": "A", "shape": [2, 4], "dtype": "float16"})
    assert tlc.TensorSupplyType is TensorSupplyType is profiler.TensorSupplyType


def test_num_sms_without_a_gpu(no_torch, monkeypatch):
    # tilelang.carver.arch.driver.get_num_sms(), as persistent kernels size their grids:
    # with no GPU, the default target's reference chip (an H100/H200's 132 SMs for sm_90a).
    from tlc.carver import arch

    monkeypatch.setattr(arch, "_warned", False)
    monkeypatch.setenv("TLC_TARGET", "sm_90a")
    with pytest.warns(UserWarning, match="get_num_sms\\(\\) sees no GPU; using 132"):
        assert arch.driver.get_num_sms() == 132
    monkeypatch.setenv("TLC_TARGET", "sm_80")
    assert arch.get_num_sms() == 108
