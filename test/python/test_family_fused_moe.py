"""examples/families/fused_moe.py: the MoE FFN forward (expert tiles from the
host's sorted, padded slot list; rows gathered by token index, gate/up gemms,
SiLU * up, down gemm, routing-weighted atomic combine) compiles for sm_90a
(weights by TMA into wgmma, warp-specialized) and sm_80 (cp.async + mma.sync)
as four kernels that assemble without spills, and matches a float64 numpy
MoE layer in the interpreter: sizes no block divides, one token, skewed
routing with experts left empty, a T.dynamic token count, and the IR after
the pipeliner."""

import numpy as np
import pytest
from ptxas import assemble

import example_modules
import tlc
import tlc.language as T


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/fused_moe")


def kernels(ex, arch, *args, **options):
    kernel = tlc.jit(ex.fused_moe.factory, out_idx=[-1], target=arch, cache=False)(
        *args, **options)
    return {k["name"].rsplit("_", 1)[1]: k for k in kernel.artifact["kernels"]}


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("tokens,D,I,E,topk,options", [
    (4096, 4096, 1408, 64, 6, {}),
    (T.dynamic("tokens"), 2048, 768, 128, 8, {}),
    (777, 1000, 520, 16, 2, {}),
    (4096, 4096, 1408, 64, 6, {"block_M": 64, "block_N": 64, "block_K": 64, "threads": 128,
                               "num_stages": 3}),
])
def test_compiles_to_four_kernels(ex, arch, tokens, D, I, E, topk, options, tmp_path):
    ks = kernels(ex, arch, tokens, D, I, E, topk, **options)
    assert list(ks) == ["k0", "k1", "k2", "k3"]  # zero, gate_up, down, cast
    # the expert tiles' grid follows the routing: entries // block_M tiles
    block_M = options.get("block_M", ex.default_config(tokens, topk, E)["block_M"])
    assert f"entries // {block_M}" in " ".join(ks["k1"]["grid"] + ks["k2"]["grid"])
    for name, k in ks.items():
        ptx = k["ptx"]
        assert f".target {arch}" in ptx
        assert ".local" not in ptx
        assemble(ptx, arch, tmp_path)
    gate_up, down = ks["k1"]["ptx"], ks["k2"]["ptx"]
    config = dict(ex.default_config(tokens, topk, E), **options)
    if arch == "sm_90a":
        # weights' tiles by TMA (a producer warpgroup, which gives its registers
        # to two consumer warpgroups), both gemms on wgmma
        for ptx in (gate_up, down):
            assert "cp.async.bulk.tensor" in ptx
            assert ("setmaxnreg" in ptx) == (config["threads"] == 256)
            assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx
        assert "red.global.add.v2.f32" in down  # the combine: vector atomics
    else:
        for ptx in (gate_up, down):
            assert "cp.async.cg.shared.global" in ptx and "mma.sync" in ptx
        assert "atom.global.add.f32" in down
    # the gather: X's rows read by the consumer threads, not a bulk copy
    assert "ld.global" in gate_up
    if arch == "sm_80":  # the down projection leaves only through the atomic adds
        assert "st.global" not in down


def test_moe_align(ex):
    rng = np.random.default_rng(0)
    ids, _ = ex.route(rng, 100, 8, 3, skew=2.0)
    ids[:, :] = np.where(ids == 5, 4, ids)  # expert 5 gets no token
    ids[0] = [4, 5, 6]
    block_M = 16
    slots, tile_expert = ex.moe_align(ids, 8, block_M)
    assert slots.dtype == tile_expert.dtype == np.int32
    assert len(slots) == len(tile_expert) * block_M
    real = slots[slots < ids.size]
    assert sorted(real.tolist()) == list(range(ids.size))  # each (token, slot) once
    tiles = slots.reshape(-1, block_M)
    for t, e in enumerate(tile_expert):
        row = tiles[t][tiles[t] < ids.size]
        assert len(row) and (ids.reshape(-1)[row] == e).all()  # one expert a tile
        assert (np.diff(row) > 0).all()  # ascending within it
    counts = np.bincount(ids.reshape(-1), minlength=8)
    assert (np.bincount(tile_expert, minlength=8) == -(-counts // block_M)).all()
    with pytest.raises(ValueError, match=r"expert ids must be in \[0, 8\)"):
        ex.moe_align(np.array([[8]]), 8, 16)


def problem(ex, rng, tokens, D, I, E, topk, skew=0.0):
    ids, w = ex.route(rng, tokens, E, topk, skew)
    x = rng.standard_normal((tokens, D)).astype(np.float16)
    wg = (rng.standard_normal((E, I, D)) * D ** -0.5).astype(np.float16)
    wu = (rng.standard_normal((E, I, D)) * D ** -0.5).astype(np.float16)
    wd = (rng.standard_normal((E, D, I)) * I ** -0.5).astype(np.float16)
    return x, wg, wu, wd, ids, w


def assert_matches(ex, out, x, wg, wu, wd, ids, w):
    ref = ex.reference(x, wg, wu, wd, ids, w)
    assert out.dtype == np.float16 and not np.isnan(out).any()
    # fp16 rounding of the intermediate and of the output
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-3,
                               atol=2e-3 * np.abs(ref).max())


TINY = dict(block_M=16, block_N=64, block_K=32, block_D=64, threads=128)


@pytest.mark.parametrize("tokens,D,I,E,topk,skew,options", [
    (37, 144, 96, 4, 2, 0.0, TINY),   # no block divides D (144) or I (96)
    (1, 128, 64, 8, 4, 0.0, TINY),    # decode: one token, four one-entry tiles
    (50, 64, 64, 6, 2, 3.0, dict(TINY, block_N=32, block_D=32)),  # skewed: experts empty
    (40, 64, 96, 3, 3, 0.0, dict(TINY, block_M=32, threads=256)),  # every expert each token
    (150, 160, 192, 2, 2, 0.0, {}),    # the default for many tokens: LARGE (128-entry tiles)
])
def test_interpreter_matches_reference(ex, tokens, D, I, E, topk, skew, options):
    rng = np.random.default_rng(tokens * 31 + E)
    x, wg, wu, wd, ids, w = problem(ex, rng, tokens, D, I, E, topk, skew)
    block_M = options.get("block_M", ex.default_config(tokens, topk, E)["block_M"])
    slots, tile_expert = ex.moe_align(ids, E, block_M)
    kernel = tlc.jit(ex.fused_moe.factory, out_idx=[-1], interpret=True)(
        tokens, D, I, E, topk, **options)
    out = kernel(x, wg, wu, wd, w, slots, tile_expert)
    assert_matches(ex, out, x, wg, wu, wd, ids, w)


def test_dynamic_token_count(ex):
    """One kernel for any number of tokens (and any routing)."""
    kernel = tlc.jit(ex.fused_moe.factory, out_idx=[-1], interpret=True)(
        T.dynamic("tokens"), 64, 64, 4, 2, **dict(TINY, block_N=32, block_D=32))
    for tokens in (5, 33):
        rng = np.random.default_rng(tokens)
        x, wg, wu, wd, ids, w = problem(ex, rng, tokens, 64, 64, 4, 2)
        slots, tile_expert = ex.moe_align(ids, 4, 16)
        assert_matches(ex, kernel(x, wg, wu, wd, w, slots, tile_expert), x, wg, wu, wd, ids, w)


def test_pipelined_ir_interprets_to_the_same_result(ex):
    """sm_80's IR after the pipeliner (cp.async stages landing at their waits,
    the gathered rows one K slice ahead in registers), all four kernels."""
    tokens, D, I, E, topk = 37, 144, 96, 4, 2
    rng = np.random.default_rng(2)
    x, wg, wu, wd, ids, w = problem(ex, rng, tokens, D, I, E, topk)
    slots, tile_expert = ex.moe_align(ids, E, TINY["block_M"])
    kernel = tlc.jit(ex.fused_moe.factory, out_idx=[-1], target="sm_80", cache=False)(
        tokens, D, I, E, topk, **TINY)
    optimized = kernel.get_mlir("optimized")
    assert optimized.count("stages = 3") >= 4  # both weights of gate_up, H and W_down
    out = np.full((tokens, D), np.nan, np.float16)
    tlc.interpret(optimized, x, wg, wu, wd, w, slots, tile_expert, out)
    assert_matches(ex, out, x, wg, wu, wd, ids, w)
