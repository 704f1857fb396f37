"""examples/families/topk.py: MoE gating top-k (values and int32 expert ids,
ties to the lower id) compiles for sm_90a and sm_80 to warp-shuffle
reductions only (no shared memory round trips, also for rows of 256 logits,
laid out one warp a row), assembles without spills, and matches a stable-sort
numpy reference in the interpreter, with and without ties, including row
counts no block divides."""

import numpy as np
import pytest
from ptxas import assemble

import example_modules
import tlc


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/topk")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("E,k", [(64, 2), (128, 4), (256, 8)])
@pytest.mark.parametrize("M", [4096, 1000])
def test_compiles_to_warp_reductions(ex, arch, M, E, k, tmp_path):
    kernel = tlc.jit(ex.topk_gating.factory, out_idx=[1, 2], target=arch, cache=False)(
        M, E, k)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    rows = ex.default_block_M(E, 128)
    # each round: a max and a min of every row a thread holds, each a butterfly
    # over the row's lanes (16 for 64 logits, a whole warp for 128 and 256)
    lanes = min(32, E // 4)
    rows_a_thread = rows // (4 * (32 // lanes))
    levels = lanes.bit_length() - 1
    assert ptx.count("shfl.sync.bfly") == 2 * k * rows_a_thread * levels
    # the rows come in as 16-byte loads (32 logits a thread); no row reduction
    # meets in shared memory, and each round's results are stored straight out
    assert ptx.count("ld.global.v4.b32") == rows * E // (128 * 4) == 8
    assert "bar.sync" not in ptx and ".shared" not in ptx
    assert ".local" not in ptx
    assemble(ptx, arch, tmp_path)


def test_wide_rows_take_one_warp_a_row(ex):
    kernel = tlc.jit(ex.topk_gating.factory, out_idx=[1, 2], target="sm_80", cache=False)(
        1000, 256, 8)
    scores = kernel.layout("scores")
    # row 5 lives in warp 1 (rows dealt to the 4 warps in turn), every lane holding
    # 8 of its 256 logits: 4 consecutive ones in each half
    threads = {scores.thread_and_register(5, j)[0] for j in range(256)}
    assert threads == set(range(32, 64))
    assert kernel.layout("column").map == scores.map
    assert "bar.sync" not in kernel.get_kernel_source()


def logits(rng, M, E, ties):
    x = rng.standard_normal((M, E)).astype(np.float32)
    if ties:
        x = np.round(x * 2) / 2  # a dozen distinct values: ties in every row
    return x


@pytest.mark.parametrize("M,E,k,ties", [
    (37, 64, 2, False),     # 64 rows a block: one partial block
    (37, 64, 8, True),
    (20, 128, 4, True),     # 32 rows a block
    (45, 256, 8, False),    # 16 rows a block, one warp a row: 3 blocks, the last partial
    (45, 256, 8, True),
    (9, 96, 3, True),       # a width no layout rule is made for
])
def test_interpreter_matches_reference(ex, M, E, k, ties):
    rng = np.random.default_rng(M * 1000 + E + k)
    x = logits(rng, M, E, ties)
    kernel = tlc.jit(ex.topk_gating.factory, out_idx=[1, 2], interpret=True)(M, E, k)
    values, indices = kernel(x)
    ref_v, ref_i = ex.reference(x, k)
    assert indices.dtype == np.int32 and values.shape == (M, k)
    np.testing.assert_array_equal(indices, ref_i)
    np.testing.assert_allclose(values, ref_v, rtol=0, atol=0)
    if ties:  # the rule was exercised: equal values listed at increasing columns
        same = values[:, 1:] == values[:, :-1]
        assert same.any() and (indices[:, 1:][same] > indices[:, :-1][same]).all()


def test_k_must_fit_the_row(ex):
    with pytest.raises(ValueError, match=r"k must be in \[1, E = 64\], got 65"):
        ex.topk_gating.factory(16, 64, 65)
