"""examples/families/gemv.py: y = A @ x compiles for sm_90a and sm_80 to a
cp.async pipeline of 16-byte copies whose per-thread fp32 partial sums are
combined by warp shuffles once at the end, assembles without spills, and
matches float64 numpy in the interpreter, also where no block divides N or K."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import example_modules


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/gemv")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("N,K,out_dtype", [(8192, 8192, "float32"), (4096, 16384, "float16")])
def test_compiles_to_a_cp_async_pipeline(ex, arch, N, K, out_dtype, tmp_path):
    kernel = tlc.jit(ex.gemv.factory, out_idx=[-1], target=arch, cache=False)(
        N, K, out_dtype=out_dtype)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    config = ex.default_config(N, K)
    # A's slab (8 x 512 fp16 = 512 16-byte vectors, 4 a thread) and x's piece
    # (64 vectors) arrive by 16-byte cp.async, never by plain global loads,
    # copied ahead for (num_stages - 1) slabs before the loop and once in it.
    vectors = (config["block_N"] * config["block_K"] // 8) // config["threads"] + 1
    assert ptx.count("cp.async.cg.shared.global") == vectors * config["num_stages"]
    assert "ld.global" not in ptx and "cp.async.wait" in ptx
    # the partial sums of a row are combined once, by butterfly shuffles
    assert "shfl.sync.bfly" in ptx
    assert ".local" not in ptx
    assemble(ptx, arch, tmp_path)


def test_unaligned_rows_use_narrow_copies(ex, tmp_path):
    # K = 1004: rows start at 8-byte, not 16-byte, boundaries: 8-byte cp.async
    kernel = tlc.jit(ex.gemv.factory, out_idx=[-1], target="sm_90a", cache=False)(1000, 1004)
    ptx = kernel.get_kernel_source()
    assert "cp.async.ca.shared.global" in ptx and "cp.async.cg" not in ptx
    assert "ld.global" not in ptx
    assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize("N,K,options", [
    (16, 1024, {"block_N": 8, "block_K": 256}),                        # blocks divide both
    (37, 1000, {"block_N": 8, "block_K": 256}),                        # neither divides
    (13, 300, {"block_N": 4, "block_K": 128, "out_dtype": "float16"}), # fp16 output
    (9, 260, {"block_N": 2, "block_K": 128, "dtype": "bfloat16", "num_stages": 2}),
])
def test_interpreter_matches_numpy(ex, N, K, options):
    rng = np.random.default_rng(N * K)
    A = rng.standard_normal((N, K)).astype(np.float32)
    x = rng.standard_normal(K).astype(np.float32)
    if options.get("dtype", "float16") == "float16":
        A, x = A.astype(np.float16), x.astype(np.float16)
    else:  # bfloat16 is passed as float32 arrays: give them bf16 values
        A = (A.view(np.uint32) & 0xFFFF0000).view(np.float32)
        x = (x.view(np.uint32) & 0xFFFF0000).view(np.float32)
    kernel = tlc.jit(ex.gemv.factory, out_idx=[-1], interpret=True)(N, K, **options)
    y = kernel(A, x)
    assert y.shape == (N,)
    ref = ex.reference(A, x)
    if options.get("out_dtype", "float32") == "float16":
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=2 ** -10, atol=1e-3)
    else:
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=1e-5, atol=1e-4)


def test_optimized_ir_interprets_to_the_same_result(ex):
    """sm_80's IR after layout, pipelining and barrier passes, interpreted."""
    rng = np.random.default_rng(3)
    N, K = 21, 700
    A = rng.standard_normal((N, K)).astype(np.float16)
    x = rng.standard_normal(K).astype(np.float16)
    y = np.full(N, np.nan, np.float32)
    kernel = tlc.jit(ex.gemv.factory, out_idx=[-1], target="sm_80", cache=False)(
        N, K, block_N=4, block_K=256)
    tlc.interpret(kernel.get_mlir("optimized"), A, x, y)
    np.testing.assert_allclose(y, ex.reference(A, x), rtol=1e-5, atol=1e-4)
