"""examples/families/linear_attention.py: chunked causal linear attention compiles to wgmma
(Q, K, V by TMA in a warp-specialized loop) on sm_90a and to mma.sync with cp.async on
sm_80, assembles without spills, and matches a float64 numpy reference (output and final
state) in the interpreter, also for lengths no chunk divides and V widths no block
divides."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import example_modules


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/linear_attention")


def compile_for(ex, arch, *args, **kwargs):
    return tlc.jit(ex.linear_attention.factory, out_idx=[3, 4], target=arch, cache=False)(
        *args, **kwargs)


@pytest.mark.parametrize("dim,consumer_warpgroups", [(64, 1), (128, 2)])
def test_sm90a_default_config(ex, dim, consumer_warpgroups, tmp_path):
    kernel = compile_for(ex, "sm_90a", 8, 32, 4096, dim, dim)
    ptx = kernel.get_kernel_source()
    assert ".target sm_90a" in ptx
    assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx  # all four gemms
    assert "cp.async.bulk.tensor" in ptx  # Q, K, V tiles by TMA
    # the consumers and the TMA producer warpgroup
    assert kernel.artifact["threads"][0] == 128 * (consumer_warpgroups + 1)
    assemble(ptx, "sm_90a", tmp_path)


def test_sm90a_head_dim_256(ex, tmp_path):
    ptx = compile_for(ex, "sm_90a", 2, 8, 2048, 256, 256).get_kernel_source()
    assert "wgmma.mma_async" in ptx
    assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize("dim,config", [(64, dict(chunk=64, threads=128)),
                                        (128, dict(chunk=64, threads=256))])
def test_sm80_mma_sync(ex, dim, config, tmp_path):
    ptx = compile_for(ex, "sm_80", 8, 32, 4096, dim, dim, **config).get_kernel_source()
    assert ".target sm_80" in ptx
    assert "mma.sync" in ptx and "wgmma" not in ptx
    assert "cp.async.cg" in ptx  # pipelined Q, K, V tiles
    assemble(ptx, "sm_80", tmp_path)


@pytest.mark.parametrize("batch,heads,seq,dk,dv,config", [
    (1, 2, 128, 32, 32, dict(chunk=32, block_V=16, threads=128)),   # chunks divide T
    (2, 1, 100, 32, 48, dict(chunk=32, block_V=32, threads=128)),   # neither T nor DV divide
    (1, 2, 90, 64, 64, dict(chunk=32, block_V=32, threads=256)),
    (1, 1, 200, 128, 64, {}),                                       # the sm_90a default config
])
def test_interpreter_matches_numpy(ex, batch, heads, seq, dk, dv, config):
    rng = np.random.default_rng(seq + dk)
    q = rng.standard_normal((batch, heads, seq, dk)).astype(np.float16)
    k = rng.standard_normal((batch, heads, seq, dk)).astype(np.float16)
    v = rng.standard_normal((batch, heads, seq, dv)).astype(np.float16)
    kernel = tlc.jit(ex.linear_attention.factory, out_idx=[3, 4], interpret=True)(
        batch, heads, seq, dk, dv, **config)
    out, state = kernel(q, k, v)
    ref_out, ref_state = ex.reference(q, k, v)
    assert out.dtype == np.float16 and state.dtype == np.float32
    # fp16 output and an fp16 copy of the state feeding Q S: errors relative to the scale
    np.testing.assert_allclose(out.astype(np.float64), ref_out, rtol=0,
                               atol=2e-3 * np.abs(ref_out).max())
    np.testing.assert_allclose(state, ref_state, rtol=0, atol=1e-5 * np.abs(ref_state).max())


def test_explicit_scale(ex):
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 1, 40, 32)).astype(np.float16) for _ in range(3))
    kernel = tlc.jit(ex.linear_attention.factory, out_idx=[3, 4], interpret=True)(
        1, 1, 40, 32, 32, scale=1.0, chunk=16, block_V=32, threads=128)
    out, _ = kernel(q, k, v)
    ref, _ = ex.reference(q, k, v, scale=1.0)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=0, atol=2e-3 * np.abs(ref).max())


def test_bad_head_dim(ex):
    with pytest.raises(ValueError, match="dim_k must be a multiple of 16 up to 256, got 512"):
        ex.linear_attention.factory(1, 1, 128, 512, 64)


def test_pipelined_sm80_ir_interprets_to_the_same_result(ex):
    """The IR after the pipeliner (cp.async copies landing at their waits), interpreted:
    the state carried across chunks survives the staging of Q, K and V."""
    batch, heads, seq, dk, dv = 1, 2, 100, 64, 48
    rng = np.random.default_rng(7)
    q = rng.standard_normal((batch, heads, seq, dk)).astype(np.float16)
    k = rng.standard_normal((batch, heads, seq, dk)).astype(np.float16)
    v = rng.standard_normal((batch, heads, seq, dv)).astype(np.float16)
    out = np.full((batch, heads, seq, dv), np.nan, np.float16)
    state = np.full((batch, heads, dk, dv), np.nan, np.float32)
    kernel = compile_for(ex, "sm_80", batch, heads, seq, dk, dv, chunk=32, block_V=32,
                         threads=128)
    tlc.interpret(kernel.get_mlir("optimized"), q, k, v, out, state)
    ref_out, ref_state = ex.reference(q, k, v)
    np.testing.assert_allclose(out.astype(np.float64), ref_out, rtol=0,
                               atol=2e-3 * np.abs(ref_out).max())
    np.testing.assert_allclose(state, ref_state, rtol=0, atol=1e-5 * np.abs(ref_state).max())
