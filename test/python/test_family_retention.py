"""examples/families/retention.py: chunked RetNet retention compiles to wgmma (Q, K, V by TMA
in a warp-specialized loop) on sm_90a and to mma.sync with cp.async on sm_80, assembles
without spills (the decays are looked up in a shared table, not recomputed in registers),
and matches a float64 numpy reference (output and decayed final state) in the interpreter
for RetNet's decays, small and unit decays, lengths no chunk divides and V widths no block
divides."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import example_modules


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/retention")


def compile_for(ex, arch, *args, **kwargs):
    return tlc.jit(ex.retention.factory, out_idx=[4, 5], target=arch, cache=False)(
        *args, **kwargs)


@pytest.mark.parametrize("dim,consumer_warpgroups", [(64, 1), (128, 2)])
def test_sm90a_default_config(ex, dim, consumer_warpgroups, tmp_path):
    kernel = compile_for(ex, "sm_90a", 8, 32, 4096, dim, dim)
    ptx = kernel.get_kernel_source()
    assert ".target sm_90a" in ptx
    assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx  # all four gemms
    assert "cp.async.bulk.tensor" in ptx  # Q, K, V tiles by TMA
    assert kernel.artifact["threads"][0] == 128 * (consumer_warpgroups + 1)
    # exponentials only for the table before the loop: no ex2 between the loop's wgmmas
    assert ptx.count("ex2.approx") <= 4
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
    assert "cp.async.cg" in ptx
    assemble(ptx, "sm_80", tmp_path)


def inputs(batch, heads, seq, dk, dv, seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((batch, heads, seq, dk)).astype(np.float16)
    k = rng.standard_normal((batch, heads, seq, dk)).astype(np.float16)
    v = rng.standard_normal((batch, heads, seq, dv)).astype(np.float16)
    return q, k, v


def assert_close(out, state, ref_out, ref_state):
    # fp16 output, fp16 copies of the state (Q S) and of the decayed V (K^T V)
    np.testing.assert_allclose(out.astype(np.float64), ref_out, rtol=0,
                               atol=2e-3 * np.abs(ref_out).max())
    np.testing.assert_allclose(state, ref_state, rtol=0, atol=1e-3 * np.abs(ref_state).max())


@pytest.mark.parametrize("batch,heads,seq,dk,dv,gamma,config", [
    (1, 2, 128, 32, 32, None, dict(chunk=32, block_V=16, threads=128)),   # chunks divide T
    (2, 3, 100, 32, 48, None, dict(chunk=32, block_V=32, threads=128)),   # neither T nor DV
    (1, 2, 90, 64, 64, [0.5, 0.01], dict(chunk=32, block_V=32, threads=256)),  # fast decays
    (1, 2, 75, 32, 32, [1.0, 0.999], dict(chunk=16, block_V=32, threads=128)),  # none / slow
    (1, 2, 200, 128, 64, None, {}),                                       # sm_90a default
])
def test_interpreter_matches_numpy(ex, batch, heads, seq, dk, dv, gamma, config):
    q, k, v = inputs(batch, heads, seq, dk, dv, seq + dk)
    gamma = ex.retnet_gammas(heads) if gamma is None else np.array(gamma, np.float32)
    kernel = tlc.jit(ex.retention.factory, out_idx=[4, 5], interpret=True)(
        batch, heads, seq, dk, dv, **config)
    out, state = kernel(q, k, v, gamma)
    assert out.dtype == np.float16 and state.dtype == np.float32
    assert_close(out, state, *ex.reference(q, k, v, gamma))


def test_unit_decay_is_linear_attention(ex):
    q, k, v = inputs(1, 1, 64, 32, 32, 2)
    ref_out, ref_state = ex.reference(q, k, v, [1.0])
    scores = np.tril(q.astype(np.float64) @ k.astype(np.float64).swapaxes(-1, -2))
    np.testing.assert_allclose(ref_out, 32 ** -0.5 * scores @ v.astype(np.float64))
    np.testing.assert_allclose(ref_state, k.astype(np.float64).swapaxes(-1, -2) @ v)


def test_pipelined_sm80_ir_interprets_to_the_same_result(ex):
    """The IR after the pipeliner (cp.async copies landing at their waits), interpreted."""
    batch, heads, seq, dk, dv = 1, 2, 100, 64, 48
    q, k, v = inputs(batch, heads, seq, dk, dv, 9)
    gamma = ex.retnet_gammas(heads)
    out = np.full((batch, heads, seq, dv), np.nan, np.float16)
    state = np.full((batch, heads, dk, dv), np.nan, np.float32)
    kernel = compile_for(ex, "sm_80", batch, heads, seq, dk, dv, chunk=32, block_V=32,
                         threads=128)
    tlc.interpret(kernel.get_mlir("optimized"), q, k, v, gamma, out, state)
    assert_close(out, state, *ex.reference(q, k, v, gamma))


def test_bad_head_dim(ex):
    with pytest.raises(ValueError, match="dim_k must be a multiple of 16 up to 256, got 320"):
        ex.retention.factory(1, 1, 128, 320, 64)
