"""examples/families/attention_sink.py: FlashAttention forward with per-head sink logits
and sliding windows compiles to wgmma (K and V by TMA, warp-specialized) on sm_90a and to
mma.sync with cp.async on sm_80, assembles without spills, and matches a float64 numpy
reference in the interpreter (MHA and GQA, both layouts, windows, lengths no block
divides)."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import example_modules


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/attention_sink")


def compile_for(ex, arch, *args, **kwargs):
    return tlc.jit(ex.sink_attention.factory, out_idx=[-1], target=arch, cache=False,
                   pass_configs=ex.PASS_CONFIGS)(*args, **kwargs)


@pytest.mark.parametrize("args,kwargs,threads", [
    ((2, 32, 4096, 64), dict(heads_kv=8, window=128), 384),        # gpt-oss-like
    ((2, 32, 4096, 64), dict(heads_kv=8), 512),                    # 192 queries a block
    ((2, 16, 1000, 128), dict(layout="BSHD"), 384),                # plain causal + sinks
    ((1, 8, 2048, 128), dict(heads_kv=2, window=300, dtype="bfloat16"), 384),
    ((1, 8, 1024, 256), dict(window=512), 384),                    # 64-key blocks
])
def test_sm90a_wgmma_tma(ex, args, kwargs, threads, tmp_path):
    kernel = compile_for(ex, "sm_90a", *args, **kwargs)
    ptx = kernel.get_kernel_source()
    assert ".target sm_90a" in ptx
    # consumer warpgroups of 64 queries each, and the TMA producer's
    assert kernel.artifact["threads"][0] == threads
    assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx
    assert "cp.async.bulk.tensor" in ptx  # K and V by TMA
    assert "setmaxnreg" in ptx  # producer / consumer warpgroups
    assert "ex2.approx.ftz.f32" in ptx  # fast-math exp2
    assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize("args,kwargs", [
    ((2, 32, 4096, 64), dict(heads_kv=8, window=128)),
    ((2, 8, 1000, 128), dict(layout="BSHD", block_M=64, block_N=64, threads=128)),
])
def test_sm80_mma_sync(ex, args, kwargs, tmp_path):
    ptx = compile_for(ex, "sm_80", *args, **kwargs).get_kernel_source()
    assert ".target sm_80" in ptx
    assert "mma.sync" in ptx and "wgmma" not in ptx
    assert "cp.async" in ptx and "cp.async.bulk" not in ptx
    assemble(ptx, "sm_80", tmp_path)


def run_interpreted(ex, batch, heads, heads_kv, seq, dim, window, layout, seed=0, **blocks):
    kernel = tlc.jit(ex.sink_attention.factory, out_idx=[-1], interpret=True)(
        batch, heads, seq, dim, heads_kv=heads_kv, window=window, layout=layout, **blocks)
    rng = np.random.default_rng(seed)
    q_shape, kv_shape = ex.tensor_shapes(batch, heads, heads_kv, seq, dim, layout)
    q = rng.standard_normal(q_shape).astype(np.float16)
    k = rng.standard_normal(kv_shape).astype(np.float16)
    v = rng.standard_normal(kv_shape).astype(np.float16)
    sinks = (rng.standard_normal(heads) * 2).astype(np.float32)
    return kernel(q, k, v, sinks), ex.reference(q, k, v, sinks, window, layout)


SMALL = dict(block_M=32, block_N=32, threads=128)


@pytest.mark.parametrize("batch,heads,heads_kv,seq,dim,window,layout,blocks", [
    (1, 2, 2, 128, 64, None, "BHSD", SMALL),               # MHA, blocks divide
    (2, 4, 1, 100, 64, None, "BSHD", SMALL),               # MQA, 100 queries
    (1, 4, 2, 90, 32, 40, "BHSD", SMALL),                  # window of 40 > block
    (1, 2, 1, 75, 64, 16, "BSHD", dict(block_M=32, block_N=16, threads=128)),  # window < block
    (1, 2, 2, 64, 64, 1, "BHSD", SMALL),                   # each row sees itself only
    (1, 2, 1, 200, 64, None, "BHSD", {}),                  # default: 192 x 128 blocks
    (1, 2, 2, 150, 64, 128, "BSHD", {}),                   # default: 128 x 128 blocks
])
def test_interpreter_matches_numpy(ex, batch, heads, heads_kv, seq, dim, window, layout,
                                   blocks):
    out, ref = run_interpreted(ex, batch, heads, heads_kv, seq, dim, window, layout, **blocks)
    assert out.dtype == np.float16 and out.shape == ref.shape
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=1e-2, atol=2e-3)


def test_sinks_change_the_result(ex):
    """Very negative sinks give plain causal attention; the reference itself differs."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 2, 48, 32)).astype(np.float16) for _ in range(3))
    plain = ex.reference(q, k, v, np.full(2, -1e9))
    sunk = ex.reference(q, k, v, np.full(2, 3.0))
    assert np.abs(plain - sunk).max() > 0.1
    kernel = tlc.jit(ex.sink_attention.factory, out_idx=[-1], interpret=True)(
        1, 2, 48, 32, **SMALL)
    out = kernel(q, k, v, np.full(2, -1e4, np.float32))
    np.testing.assert_allclose(out.astype(np.float64), plain, rtol=1e-2, atol=2e-3)


@pytest.mark.parametrize("kwargs,message", [
    (dict(heads_kv=3), "heads_kv (3) must divide heads (8)"),
    (dict(layout="SBHD"), "layout must be one of"),
    (dict(window=0), "window must be None or a positive number"),
])
def test_bad_arguments(ex, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ex.sink_attention.factory(1, 8, 128, 64, **kwargs)


def test_pipelined_sm80_ir_interprets_to_the_same_result(ex):
    """The IR after the pipeliner (cp.async copies landing at their waits), interpreted:
    a window that starts the loop at a run-time K block."""
    batch, heads, heads_kv, seq, dim, window = 1, 2, 1, 100, 64, 40
    kernel = tlc.jit(ex.sink_attention.factory, out_idx=[-1], target="sm_80", cache=False,
                     pass_configs=ex.PASS_CONFIGS)(
        batch, heads, seq, dim, heads_kv=heads_kv, window=window, **SMALL)
    rng = np.random.default_rng(11)
    q_shape, kv_shape = ex.tensor_shapes(batch, heads, heads_kv, seq, dim, "BHSD")
    q = rng.standard_normal(q_shape).astype(np.float16)
    k = rng.standard_normal(kv_shape).astype(np.float16)
    v = rng.standard_normal(kv_shape).astype(np.float16)
    sinks = rng.standard_normal(heads).astype(np.float32)
    out = np.full(q_shape, np.nan, np.float16)
    tlc.interpret(kernel.get_mlir("optimized"), q, k, v, sinks, out)
    np.testing.assert_allclose(out.astype(np.float64), ex.reference(q, k, v, sinks, window),
                               rtol=1e-2, atol=2e-3)
