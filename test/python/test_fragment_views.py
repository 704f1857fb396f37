"""Fragments seen another way: T.reshape of a fragment (its registers indexed
with another shape, as TileLang's DeepSeek indexer sums a gemm's accumulator
per head) and T.Parallel loops that index a fragment with their indices in
another order (a tile written transposed)."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
import marked_lines
from ptxas import assemble

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


@T.prim_func
def weighted_head_sums(A: T.Tensor((64, 128), "float32"), W: T.Tensor((4, 32), "float32"),
                       S: T.Tensor((64, 4), "float32")):
    # 64 rows of 4 groups of 32: each group weighted and summed.
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((64, 128), "float32")
        w = T.alloc_fragment((4, 32), "float32")
        groups = T.reshape(f, (64, 4, 32))
        sums = T.alloc_fragment((64, 4), "float32")
        T.copy(A, f)
        T.copy(W, w)
        for i, g, h in T.Parallel(64, 4, 32):
            groups[i, g, h] = T.max(groups[i, g, h], 0) * w[g, h]
        T.reduce_sum(groups, sums, dim=2)
        T.copy(sums, S)


@T.prim_func
def accumulator_head_sums(K: T.Tensor((128, 64), "float16"), Q: T.Tensor((128, 64), "float16"),
                          S: T.Tensor((4, 128), "float32")):
    # A gemm's accumulator (128 keys x 4 tokens * 32 heads) viewed per head,
    # summed over the heads, written transposed (token-major).
    with T.Kernel(1, threads=256):
        k_s = T.alloc_shared((128, 64), "float16")
        q_s = T.alloc_shared((128, 64), "float16")
        acc = T.alloc_fragment((128, 128), "float32")
        heads = T.reshape(acc, (128, 4, 32))
        sums = T.alloc_fragment((128, 4), "float32")
        T.copy(K, k_s)
        T.copy(Q, q_s)
        T.gemm(k_s, q_s, acc, transpose_B=True, clear_accum=True)
        T.reduce_sum(heads, sums, dim=2)
        for t, n in T.Parallel(4, 128):
            S[t, n] = sums[n, t]


@T.prim_func
def transposed_accumulator(A: T.Tensor((64, 32), "float16"), B: T.Tensor((64, 32), "float16"),
                           C: T.Tensor((64, 64), "float32"), D: T.Tensor((64, 64), "float32")):
    # C = A B^T and D = its transpose, both from the accumulator's registers:
    # the second loop runs over (j, i) and reads acc[i, j].
    with T.Kernel(1, threads=128):
        a_s = T.alloc_shared((64, 32), "float16")
        b_s = T.alloc_shared((64, 32), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        t = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a_s)
        T.copy(B, b_s)
        T.gemm(a_s, b_s, acc, transpose_B=True, clear_accum=True)
        T.copy(acc, C)
        for j, i in T.Parallel(64, 64):
            t[j, i] = acc[i, j] + 1.0
        T.copy(t, D)


@T.prim_func
def scaled_head_sums(K: T.Tensor((128, 64), "float16"), Q: T.Tensor((128, 64), "float16"),
                     W: T.Tensor((4, 32), "float32"), C: T.Tensor((128,), "float32"),
                     S: T.Tensor((4, 128), "float32")):
    # TileLang's indexer: a per-key scale read as c[n] in a loop over (n, t, h)
    # (a row vector two dimensions short) and again beside the transposed,
    # replicated result of the reduction.
    with T.Kernel(1, threads=256):
        k_s = T.alloc_shared((128, 64), "float16")
        q_s = T.alloc_shared((128, 64), "float16")
        acc = T.alloc_fragment((128, 128), "float32")
        heads = T.reshape(acc, (128, 4, 32))
        w = T.alloc_fragment((4, 32), "float32")
        c = T.alloc_fragment((128,), "float32")
        sums = T.alloc_fragment((128, 4), "float32")
        T.copy(K, k_s)
        T.copy(Q, q_s)
        T.copy(W, w)
        T.copy(C, c)
        T.gemm(k_s, q_s, acc, transpose_B=True, clear_accum=True)
        for n, t, h in T.Parallel(128, 4, 32):
            heads[n, t, h] = T.max(heads[n, t, h], 0) * w[t, h] * c[n]
        T.reduce_sum(heads, sums, dim=-1)
        for t, n in T.Parallel(4, 128):
            S[t, n] = sums[n, t] * c[n]


@T.prim_func
def first_rows_of_an_accumulator(A: T.Tensor((64, 32), "float16"), B: T.Tensor((64, 32), "float16"),
                                 O: T.Tensor((4, 64), "float32"), P: T.Tensor((64, 64), "float32")):
    # TileLang's flash decoding keeps only the first valid_block_H rows of its
    # output fragment: T.copy(acc[:4, :], O_shared). And a region written into
    # a fragment: rows 8..11 replaced by O's values.
    with T.Kernel(1, threads=128):
        a_s = T.alloc_shared((64, 32), "float16")
        b_s = T.alloc_shared((64, 32), "float16")
        o_s = T.alloc_shared((4, 64), "float32")
        acc = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a_s)
        T.copy(B, b_s)
        T.gemm(a_s, b_s, acc, transpose_B=True, clear_accum=True)
        T.copy(acc[:4, :], o_s)
        T.copy(o_s, O)
        T.copy(o_s, acc[8:12, :])
        T.copy(acc, P)


@T.prim_func
def combine_splits(L: T.Tensor((8, 128), "float16"), M: T.Tensor((128,), "float32"),
                   S: T.Tensor((128,), "float32")):
    # TileLang's flash decoding combines its splits' log-sum-exps: lse[k, j]
    # read in a loop over j inside a serial loop over k.
    with T.Kernel(1, threads=128):
        lse = T.alloc_fragment((8, 128), "float16")
        mx = T.alloc_fragment((128,), "float32")
        total = T.alloc_fragment((128,), "float32")
        for k, j in T.Parallel(8, 128):
            lse[k, j] = L[k, j]
        T.reduce_max(lse, mx, dim=0, clear=True)
        T.clear(total)
        for k in T.serial(8):
            for j in T.Parallel(128):
                total[j] += T.exp2(lse[k, j] - mx[j])
        T.copy(mx, M)
        T.copy(total, S)


def _rng(seed):
    return np.random.default_rng(seed)


def test_reshape_weights_and_sums_groups():
    a = _rng(0).standard_normal((64, 128)).astype(np.float32)
    w = _rng(1).standard_normal((4, 32)).astype(np.float32)
    s = np.zeros((64, 4), np.float32)
    tlc.interpret(weighted_head_sums, a, w, s)
    want = (np.maximum(a.reshape(64, 4, 32), 0) * w).sum(axis=2)
    np.testing.assert_allclose(s, want, rtol=1e-5, atol=1e-5)


def test_accumulator_viewed_per_head_and_written_transposed():
    k = _rng(2).standard_normal((128, 64)).astype(np.float16)
    q = _rng(3).standard_normal((128, 64)).astype(np.float16)
    s = np.zeros((4, 128), np.float32)
    tlc.interpret(accumulator_head_sums, k, q, s)
    acc = k.astype(np.float32) @ q.astype(np.float32).T
    np.testing.assert_allclose(s, acc.reshape(128, 4, 32).sum(axis=2).T, rtol=1e-3, atol=1e-2)


def test_loop_reads_the_accumulator_transposed():
    a = _rng(4).standard_normal((64, 32)).astype(np.float16)
    b = _rng(5).standard_normal((64, 32)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    d = np.zeros((64, 64), np.float32)
    tlc.interpret(transposed_accumulator, a, b, c, d)
    want = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(d, want.T + 1, rtol=1e-3, atol=1e-3)


def test_row_vectors_two_dimensions_short():
    k = _rng(9).standard_normal((128, 64)).astype(np.float16)
    q = _rng(10).standard_normal((128, 64)).astype(np.float16)
    w = _rng(11).standard_normal((4, 32)).astype(np.float32)
    c = _rng(12).random(128).astype(np.float32) + 0.5
    s = np.zeros((4, 128), np.float32)
    tlc.interpret(scaled_head_sums, k, q, w, c, s)
    acc = np.maximum(k.astype(np.float32) @ q.astype(np.float32).T, 0).reshape(128, 4, 32)
    want = ((acc * w * c[:, None, None]).sum(axis=2) * c[:, None]).T
    np.testing.assert_allclose(s, want, rtol=1e-3, atol=1e-2)


def test_region_of_an_accumulator():
    a = _rng(13).standard_normal((64, 32)).astype(np.float16)
    b = _rng(14).standard_normal((64, 32)).astype(np.float16)
    o, p = np.zeros((4, 64), np.float32), np.zeros((64, 64), np.float32)
    tlc.interpret(first_rows_of_an_accumulator, a, b, o, p)
    acc = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(o, acc[:4], rtol=1e-3, atol=1e-3)
    acc[8:12] = acc[:4]
    np.testing.assert_allclose(p, acc, rtol=1e-3, atol=1e-3)


def test_fragment_indexed_by_an_outer_loop():
    x = (_rng(15).standard_normal((8, 128)) * 3).astype(np.float16)
    m, t = np.zeros(128, np.float32), np.zeros(128, np.float32)
    tlc.interpret(combine_splits, x, m, t)
    xf = x.astype(np.float32)
    np.testing.assert_array_equal(m, xf.max(axis=0))
    np.testing.assert_allclose(t, np.exp2(xf - xf.max(axis=0)).sum(axis=0), rtol=1e-5)
    v = [x, np.zeros(128, np.float32), np.zeros(128, np.float32)]
    tlc.interpret(_optimized(combine_splits, "sm_80"), *v)
    np.testing.assert_allclose(v[2], np.exp2(xf - xf.max(axis=0)).sum(axis=0), rtol=1e-5)


def _optimized(prim, arch):
    return tlc.compiler.compile_module(prim.build_module(), arch, keep_ir=True).stages[
        "optimized"]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_the_view_takes_the_accumulators_layout(arch):
    """The accumulator keeps its tensor-core layout (no conversion through
    shared memory); the view's loop and reduction work on its registers."""
    text = _optimized(accumulator_head_sums, arch)
    assert "tile.view" in text
    acc = next(line for line in text.splitlines()
               if "tile.alloc_fragment" in line and "128x128xf32" in line)
    assert "layout = #tile.layout<threads = 256" in acc, acc
    # No fragment copies between layouts: the only copies are the operand loads.
    assert text.count("tile.copy") == 2, text


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_transposed_loop_needs_no_conversion(arch):
    text = _optimized(transposed_accumulator, arch)
    # The loop over (j, i) takes the accumulator's layout with its dimensions
    # swapped, and `t` takes the loop's: no fragment-to-fragment copy.
    assert text.count("tile.copy") == 4, text  # two loads, two stores


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("prim", [weighted_head_sums, accumulator_head_sums,
                                  transposed_accumulator, scaled_head_sums,
                                  first_rows_of_an_accumulator, combine_splits],
                         ids=lambda p: p.name)
def test_ptx_assembles(prim, arch, tmp_path):
    # combine_splits reads lse[k, j] at a run-time k: its registers are an
    # array indexed at run time, which lives on the stack.
    assemble(tlc.compile(prim, target=arch).artifact["ptx"], arch, tmp_path,
             stack=prim is combine_splits)


@pytest.mark.parametrize("prim,values,want", [
    (weighted_head_sums,
     lambda r: [r.standard_normal((64, 128)).astype(np.float32),
                r.standard_normal((4, 32)).astype(np.float32), np.zeros((64, 4), np.float32)],
     lambda v: (np.maximum(v[0].reshape(64, 4, 32), 0) * v[1]).sum(axis=2)),
    (transposed_accumulator,
     lambda r: [r.standard_normal((64, 32)).astype(np.float16),
                r.standard_normal((64, 32)).astype(np.float16), np.zeros((64, 64), np.float32),
                np.zeros((64, 64), np.float32)],
     lambda v: (v[0].astype(np.float32) @ v[1].astype(np.float32).T).T + 1),
], ids=["reshape", "transposed"])
def test_optimized_ir_computes_the_same(prim, values, want):
    """The IR after layout inference and the barrier passes (sm_80), interpreted."""
    v = values(_rng(6))
    tlc.interpret(_optimized(prim, "sm_80"), *v)
    np.testing.assert_allclose(v[-1], want(v), rtol=1e-3, atol=1e-3)


# -- errors --------------------------------------------------------------------------------


@T.prim_func
def two_orders_of_a_misplaced_fragment(A: T.Tensor((64, 64), "float32"),
                                       B: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((64, 64), "float32")
        h = T.alloc_fragment((64, 64), "float32")
        T.copy(A, f)
        for i, j in T.Parallel(64, 64):
            h[i, j] = f[i, j] + f[j, i]
        T.copy(h, B)


def test_a_fragment_read_in_two_orders_is_converted():
    """f[i, j] and f[j, i] in one loop: the second order reads a transposed
    copy (through shared memory), the result is still right."""
    a = _rng(7).standard_normal((64, 64)).astype(np.float32)
    b = np.zeros_like(a)
    tlc.interpret(two_orders_of_a_misplaced_fragment, a, b)
    np.testing.assert_allclose(b, a + a.T, rtol=1e-6)
    v = [a, np.zeros_like(a)]
    tlc.interpret(_optimized(two_orders_of_a_misplaced_fragment, "sm_80"), *v)
    np.testing.assert_allclose(v[1], a + a.T, rtol=1e-6)


@T.prim_func
def view_as_gemm_accumulator(A: T.Tensor((64, 32), "float16"), B: T.Tensor((64, 32), "float16")):
    with T.Kernel(1, threads=128):
        a_s = T.alloc_shared((64, 32), "float16")
        b_s = T.alloc_shared((64, 32), "float16")
        acc = T.alloc_fragment((64, 2, 32), "float32")
        flat = T.reshape(acc, (64, 64))
        T.copy(A, a_s)
        T.copy(B, b_s)
        T.gemm(a_s, b_s, flat, transpose_B=True)  # E:gemm


def test_a_view_is_no_gemm_accumulator():
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(view_as_gemm_accumulator, target="sm_80")
    marked_lines.assert_error_at(e.value, THIS, LINES, "gemm", "T.gemm",
                                 "C must come from tile.alloc_fragment in this kernel")


def test_lightning_indexer_in_the_interpreter(repo):
    """examples/lightning_indexer.py (both kernels) on values fp8 holds exactly,
    against numpy: windows no block divides, -inf outside them."""
    import sys

    sys.path.insert(0, str(repo / "examples"))
    import lightning_indexer

    rng = np.random.default_rng(8)
    seq, seq_kv, heads, dim = 6, 300, 32, 64
    q = rng.integers(-8, 9, (seq * heads, dim)).astype(np.float32) / 8
    k = rng.integers(-8, 9, (seq_kv, dim)).astype(np.float32) / 8
    k_scale = rng.random(seq_kv).astype(np.float32) + 0.5
    weights = rng.standard_normal((seq, heads)).astype(np.float32)
    starts = np.array([0, 3, 100, 150, 299, 7], np.int32)
    ends = np.array([300, 5, 101, 290, 300, 200], np.int32)
    logits = np.full((seq, seq_kv), np.nan, np.float32)
    kernel = lightning_indexer.indexer_logits.compile(heads=heads, dim=dim)
    tlc.interpret(kernel.get_mlir("tile"), q, k, k_scale, weights, starts, ends, logits)
    score = np.maximum(np.einsum("shd,nd->shn", q.reshape(seq, heads, dim), k), 0)
    want = (score * weights[:, :, None]).sum(axis=1) * k_scale[None, :]
    n = np.arange(seq_kv)
    want[(n[None, :] < starts[:, None]) | (n[None, :] >= ends[:, None])] = -np.inf
    np.testing.assert_allclose(logits, want, rtol=1e-5, atol=1e-4)


def _halves(policy):
    """TileLang's sparse MLA backward stores its dKV accumulator half by half:
    a loop over all rows guarded by `i < 32` reads row i + 32 * s."""

    @T.prim_func
    def halves(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"),
               C: T.Tensor((2, 32, 64), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_shared((64, 64), "float16")
            b = T.alloc_shared((64, 64), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            half = T.alloc_shared((32, 64), "float32")
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, acc, clear_accum=True, policy=policy)
            for s in range(2):
                for i, j in T.Parallel(64, 64):
                    if i < 32:
                        half[i, j] = acc[i + s * 32, j]
                T.copy(half, C[s, 0, 0])

    return halves


halves_of_an_accumulator = _halves(T.GemmWarpPolicy.Square)


def test_a_guarded_loop_reads_a_shifted_half():
    """The loop runs over the 32 rows its guard lets through, reading the
    accumulator as (2, 32, 64) at (s, i, j)."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((2, 32, 64), np.float32)
    tlc.interpret(halves_of_an_accumulator, a, b, c)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    assert np.abs(c.reshape(64, 64) - ref).max() < 1e-2
    ir_text = str(halves_of_an_accumulator.build_module())
    assert "tile.parallel" in ir_text and "in [32, 64]" in ir_text


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_a_guarded_loop_reads_a_shifted_half_compiles(arch, tmp_path):
    assemble(tlc.compile(halves_of_an_accumulator, target=arch).get_kernel_source(), arch,
             tmp_path)


@T.prim_func
def first_half_of_an_accumulator(A: T.Tensor((64, 64), "float16"),
                                 C: T.Tensor((32, 64), "float32")):
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a)
        T.gemm(a, a, acc, clear_accum=True)
        for i, j in T.Parallel(64, 64):
            if i < 32:
                C[i, j] = acc[i, j]


def test_a_guarded_loop_reading_its_own_rows_keeps_its_extent():
    # Only a shifted read (i + a * 32 under i < 32) shortens the loop: here the
    # loop keeps the accumulator's 64 rows (its layout) and the guard.
    ir_text = str(first_half_of_an_accumulator.build_module())
    assert "in [64, 64]" in ir_text and "in [32, 64]" not in ir_text
    a = np.random.default_rng(12).standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((32, 64), np.float32)
    tlc.interpret(first_half_of_an_accumulator, a, c)
    ref = a.astype(np.float32) @ a.astype(np.float32)
    assert np.abs(c - ref[:32]).max() < 1e-2


def test_a_shifted_half_held_by_its_own_threads_needs_no_conversion():
    """With FullCol each warp holds all 64 rows of its columns, so rows i and
    i + 32 are in one thread: the loop takes the accumulator's layout with the
    halves sliced out and reads its registers, no converted copy. Split
    2 x 2, rows i and i + 32 are in different warps: a converted copy (through
    shared memory)."""
    full_col = tlc.compile(_halves(T.GemmWarpPolicy.FullCol), target="sm_80")
    square = tlc.compile(_halves(T.GemmWarpPolicy.Square), target="sm_80")
    # The converted copy is a fragment of its own (and a tile.copy into it).
    assert full_col.get_mlir("optimized").count("tile.alloc_fragment") == 1
    assert square.get_mlir("optimized").count("tile.alloc_fragment") == 2
    rng = np.random.default_rng(13)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    for kernel in (full_col, square):  # the IR the passes leave, layouts and all
        c = np.zeros((2, 32, 64), np.float32)
        tlc.interpret(kernel.get_mlir("optimized"), a, b, c)
        assert np.abs(c.reshape(64, 64) - a.astype(np.float32) @ b.astype(np.float32)).max() < 1e-2
