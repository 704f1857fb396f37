"""examples/families/grouped_gemm.py: the grouped GEMM compiles for sm_90a (a
warp-specialized TMA + wgmma loop whose producer loads each group's rows and weight
from run-time offsets) and sm_80 (cp.async + mma.sync), assembles without spills, and in
the interpreter matches a float64 numpy reference for groups of sizes no block divides,
empty groups and a dynamic total_M (also the sm_80 IR after the compiler's passes)."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import tlc.language as T
import example_modules


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/grouped_gemm")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("total_M", [4096, "dynamic"])
def test_compiles(ex, arch, total_M, tmp_path):
    m = T.dynamic("total_M") if total_M == "dynamic" else total_M
    kernel = tlc.jit(ex.grouped_gemm.factory, out_idx=[-1], target=arch, cache=False)(
        8, m, 4096, 2048)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    if arch == "sm_90a":
        # A's rows and B[g]'s tile by TMA (a producer warpgroup), wgmma consumers
        assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor" in ptx
        assert "setmaxnreg" in ptx
        params = {p["param"]: p["box"] for p in kernel.artifact["tensor_maps"]}
        assert params == {"A": [128, 64], "B": [1, 128, 64]}
    else:
        assert "mma.sync" in ptx and "cp.async.cg.shared.global" in ptx
    # the grid: N tiles x (row tiles of total_M + groups - 1)
    rows = "(ceildiv(total_M, 128) + 7)" if total_M == "dynamic" else "39"
    assert kernel.artifact["grid"][:2] == ["32", rows]
    assemble(ptx, arch, tmp_path)


def _inputs(sizes, N, K, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((sum(sizes), K)).astype(np.float16)
    b = (rng.standard_normal((len(sizes), N, K)) / np.sqrt(K)).astype(np.float16)
    return a, b, np.array(ex_offsets(sizes), np.int32)


def ex_offsets(sizes):
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)


SMALL = dict(block_M=64, block_N=64, block_K=32, threads=128)


def _check(c, ref, out_dtype="float16"):
    assert not np.isnan(c).any()
    rtol = 2.0 ** -10 if out_dtype == "float16" else 1e-5
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=rtol, atol=2e-3)


@pytest.mark.parametrize("sizes,N,K,options", [
    ([64, 128], 64, 64, {}),                              # whole tiles
    ([30, 0, 100, 1], 72, 96, {}),                        # partial tiles, an empty group
    ([5] * 6, 64, 64, {"out_dtype": "float32"}),          # many tiny groups
    ([0, 70, 0], 128, 64, {}),                            # empty first and last groups
])
def test_interpreter_matches_numpy(ex, sizes, N, K, options):
    a, b, offsets = _inputs(sizes, N, K, sum(sizes))
    kernel = tlc.jit(ex.grouped_gemm.factory, out_idx=[-1], interpret=True)(
        len(sizes), sum(sizes), N, K, **SMALL, **options)
    c = kernel(a, b, offsets)
    _check(c, ex.reference(a, b, offsets), options.get("out_dtype", "float16"))


def test_dynamic_total_m(ex):
    kernel = tlc.jit(ex.grouped_gemm.factory, out_idx=[-1], interpret=True)(
        3, T.dynamic("total_M"), 64, 64, **SMALL)
    for sizes in ([10, 20, 30], [65, 0, 64]):
        a, b, offsets = _inputs(sizes, 64, 64, sum(sizes))
        c = kernel(a, b, offsets)
        assert c.shape == (sum(sizes), 64)
        _check(c, ex.reference(a, b, offsets))


def test_optimized_ir_interprets(ex):
    """sm_80's IR after the layout, pipelining, shared-memory and barrier passes."""
    sizes, N, K = [30, 0, 100, 1], 64, 96
    a, b, offsets = _inputs(sizes, N, K, 3)
    kernel = tlc.jit(ex.grouped_gemm.factory, out_idx=[-1], target="sm_80", cache=False)(
        len(sizes), sum(sizes), N, K, **SMALL)
    c = np.full((sum(sizes), N), np.nan, np.float16)
    tlc.interpret(kernel.get_mlir("optimized"), a, b, offsets, c)
    _check(c, ex.reference(a, b, offsets))


def test_offsets_of(ex):
    assert ex.offsets_of([3, 0, 5]) == [0, 3, 3, 8]
