"""examples/families/blocksparse_gemm.py: the block-sparse GEMM over per-tile lists of K
slices compiles for sm_90a (a warp-specialized TMA + wgmma loop whose producer reads the
slice table) and sm_80 (cp.async + mma.sync); the mask-reading form, its copies under an
`if` in T.Pipelined, is pipelined on that condition the same ways; both assemble without spills and in the interpreter match a float64 numpy
reference, for sizes no block divides, empty and dense masks."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import example_modules


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/blocksparse_gemm")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_lists_compile(ex, arch, tmp_path):
    kernel = tlc.jit(ex.blocksparse_gemm.factory, out_idx=[-1], target=arch, cache=False)(
        4096, 4096, 4096)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    if arch == "sm_90a":
        # a producer warpgroup loads A's tile (one box) and B's 128-column tile (two
        # 128-byte column blocks) at the listed slice; wgmma consumers
        assert "wgmma.mma_async" in ptx and "setmaxnreg" in ptx
        assert ptx.count("cp.async.bulk.tensor") == 3
        assert {m["param"] for m in kernel.artifact["tensor_maps"]} == {"A", "B"}
    else:
        assert "mma.sync" in ptx and "cp.async.cg.shared.global" in ptx
    assemble(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_masked_compiles(ex, arch, tmp_path):
    kernel = tlc.jit(ex.blocksparse_gemm_masked.factory, out_idx=[-1], target=arch,
                     cache=False)(4096, 4096, 4096)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    # the mask is read a byte at a time
    assert "ld.global.u8" in ptx or "ld.global.b8" in ptx
    if arch == "sm_90a":
        # a TMA producer warpgroup (the same loads as the lists kernel's) feeding wgmma
        # consumers
        assert "wgmma.mma_async" in ptx and "setmaxnreg" in ptx
        assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == 3
    else:
        # predicated cp.async issued ahead (zero bytes read where the mask is off)
        assert "mma.sync" in ptx and "cp.async.cg.shared.global" in ptx
        assert "cp.async.wait_group" in ptx
    assemble(ptx, arch, tmp_path)


SMALL = dict(block_M=64, block_N=64, block_K=32, threads=128)


def _inputs(M, N, K, density, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float16)
    blocks = (-(-M // 64), -(-N // 64), -(-K // 32))
    return a, b, ex_mask(rng, blocks, density)


def ex_mask(rng, blocks, density):
    return rng.random(blocks) < density


def _check(c, ref, out_dtype="float16"):
    assert not np.isnan(c).any()
    rtol = 2.0 ** -10 if out_dtype == "float16" else 1e-5
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=rtol, atol=2e-3)


CASES = [
    (128, 128, 128, 0.5, {}),
    (100, 72, 90, 0.6, {}),                       # no block divides M, N or K
    (64, 64, 64, 0.0, {}),                        # nothing selected: zeros
    (64, 128, 256, 1.0, {"out_dtype": "float32"}),  # dense
]


@pytest.mark.parametrize("M,N,K,density,options", CASES)
def test_lists_interpreter_matches_numpy(ex, M, N, K, density, options):
    a, b, mask = _inputs(M, N, K, density, M + N + K)
    index, count = ex.mask_to_lists(mask)
    kernel = tlc.jit(ex.blocksparse_gemm.factory, out_idx=[-1], interpret=True)(
        M, N, K, **SMALL, **options)
    c = kernel(a, b, index, count)
    _check(c, ex.reference(a, b, mask, 64, 64, 32), options.get("out_dtype", "float16"))


@pytest.mark.parametrize("M,N,K,density,options", CASES[:3])
def test_masked_interpreter_matches_numpy(ex, M, N, K, density, options):
    a, b, mask = _inputs(M, N, K, density, M + N + K)
    kernel = tlc.jit(ex.blocksparse_gemm_masked.factory, out_idx=[-1], interpret=True)(
        M, N, K, **SMALL, **options)
    c = kernel(a, b, mask)
    _check(c, ex.reference(a, b, mask, 64, 64, 32))


def test_optimized_ir_interprets(ex):
    """sm_80's IR after the pipelining (the slice table read for the copies issued
    ahead), shared-memory and barrier passes."""
    M, N, K = 100, 72, 160
    a, b, mask = _inputs(M, N, K, 0.5, 7)
    index, count = ex.mask_to_lists(mask)
    kernel = tlc.jit(ex.blocksparse_gemm.factory, out_idx=[-1], target="sm_80", cache=False)(
        M, N, K, **SMALL)
    c = np.full((M, N), np.nan, np.float16)
    tlc.interpret(kernel.get_mlir("optimized"), a, b, index, count, c)
    _check(c, ex.reference(a, b, mask, 64, 64, 32))


def test_mask_to_lists(ex):
    mask = np.array([[[True, False, True, True], [False, False, False, False]]])
    index, count = ex.mask_to_lists(mask)
    assert count.tolist() == [[3, 0]]
    assert index.tolist() == [[[0, 2, 3, -1], [-1, -1, -1, -1]]]
