"""examples/families/dynamic_gemm.py: relu(X @ W^T + bias) with a run-time M (and
optionally N and K) compiles once for sm_90a (wgmma, TMA loads; with N and K static the
warp-specialized persistent loop) and sm_80 (mma.sync, cp.async), its sizes left
symbolic in the launch metadata, assembles without spills, and one interpreted kernel
matches float64 numpy at several M, including ones no block divides."""

import numpy as np
import pytest

import tlc
import tlc.language as T
from ptxas import assemble
import example_modules

ex = example_modules.load("families/dynamic_gemm")


@pytest.mark.parametrize("dynamic_nk", [False, True], ids=["m", "mnk"])
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_compiles(arch, dynamic_nk, tmp_path):
    n, k = (T.dynamic("n"), T.dynamic("k")) if dynamic_nk else (4096, 4096)
    kernel = tlc.jit(ex.linear_relu.factory, out_idx=[-1], target=arch, cache=False)(
        T.dynamic("m"), n, k)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    shapes = {p["name"]: p["shape"] for p in kernel.artifact["params"]}
    assert shapes["X"] == (["m", "k"] if dynamic_nk else ["m", 4096])
    assert shapes["Y"] == (["m", "n"] if dynamic_nk else ["m", 4096])
    if arch == "sm_90a":
        assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
        assert "mma.sync" not in ptx
        if not dynamic_nk:
            # Row strides known: TMA loads fed to a producer warpgroup.
            assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx
            assert "setmaxnreg" in ptx
    else:
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
        assert "wgmma" not in ptx
    if arch == "sm_80" or dynamic_nk:
        assert "cp.async.cg.shared.global" in ptx
    assert "max.f32" in ptx or "max.f16" in ptx or "max.NaN" in ptx  # the ReLU
    assemble(ptx, arch, tmp_path)


def run(kernel, M, N, K, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((M, K)).astype(np.float16)
    w = (rng.standard_normal((N, K)) / np.sqrt(K)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float16)
    y = kernel(x, w, bias)
    assert y.dtype == np.float16 and y.shape == (M, N)
    ref = ex.reference(x, w, bias)
    assert (ref == 0).any() and (ref > 0).any()  # the ReLU does something
    np.testing.assert_allclose(y.astype(np.float64), ref, rtol=4e-3, atol=4e-3)


CONFIG = dict(block_M=64, block_N=64, block_K=32, threads=128, num_stages=2)


def test_one_kernel_many_m():
    kernel = tlc.jit(ex.linear_relu.factory, out_idx=[-1], interpret=True)(
        T.dynamic("m"), 96, 80, **CONFIG)  # N, K: no block divides them either
    for M in (1, 37, 64, 150):
        run(kernel, M, 96, 80, seed=M)


def test_one_kernel_dynamic_mnk():
    kernel = tlc.jit(ex.linear_relu.factory, out_idx=[-1], interpret=True)(
        T.dynamic("m"), T.dynamic("n"), T.dynamic("k"), **CONFIG)
    for M, N, K in ((70, 64, 64), (5, 130, 40), (128, 100, 96)):
        run(kernel, M, N, K, seed=M * N + K)
