"""Shared buffers named only by column slices (tlc.frontend.column_split), as
TileLang's DeepSeek sparse MLA keeps the query's two parts in one buffer and
multiplies each by its own gemm: `T.gemm(Q_s[:, :D], K_s, S)` and
`T.gemm(Q_s[:, D:], Kt_s, S)`. Each slice becomes a buffer of its own."""

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at
from pathlib import Path
from ptxas import assemble

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def two_part_scores(H=64, D=128, Dt=64, BI=64, threads=128, policy=T.GemmWarpPolicy.FullRow):
    """S = Q[:, :D] K[:, :D]^T + Q[:, D:] K[:, D:]^T, Q staged in one shared buffer."""

    @T.prim_func
    def scores(Q: T.Tensor((H, D + Dt), "float16"), K: T.Tensor((BI, D + Dt), "float16"),
               S: T.Tensor((H, BI), "float32")):
        with T.Kernel(1, threads=threads):
            Q_s = T.alloc_shared([H, D + Dt], "float16")
            K_s = T.alloc_shared([BI, D], "float16")
            Kt_s = T.alloc_shared([BI, Dt], "float16")
            acc = T.alloc_fragment([H, BI], "float32")
            T.copy(Q[:, :D], Q_s[:, :D])
            T.copy(Q[:, D:], Q_s[:, D:])
            T.copy(K[:, :D], K_s)
            T.copy(K[:, D:], Kt_s)
            T.clear(acc)
            T.gemm(Q_s[:, :D], K_s, acc, transpose_B=True, policy=policy)
            T.gemm(Q_s[:, D:], Kt_s, acc, transpose_B=True, policy=policy)
            T.copy(acc, S)

    return scores


def _inputs(H=64, D=128, Dt=64, BI=64):
    rng = np.random.default_rng(3)
    q = rng.standard_normal((H, D + Dt)).astype(np.float16)
    k = rng.standard_normal((BI, D + Dt)).astype(np.float16)
    return q, k, q.astype(np.float32) @ k.astype(np.float32).T


def test_slices_in_the_interpreter():
    q, k, expect = _inputs()
    s = np.zeros((64, 64), np.float32)
    tlc.interpret(two_part_scores(), q, k, s)
    np.testing.assert_allclose(s, expect, rtol=1e-3, atol=1e-2)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_each_slice_is_a_buffer_of_its_own(target, tmp_path):
    kernel = tlc.compile(two_part_scores(), target=target)
    optimized = kernel.get_mlir("optimized")
    # Two allocations named by their slices, each laid out for its gemm.
    assert 'tile.alloc_shared' in optimized
    assert '"Q_s[:, 0:128]"' in optimized and '"Q_s[:, 128:192]"' in optimized
    if target == "sm_90a":
        assert optimized.count("kind = wgmma") == 2
    assemble(kernel.get_kernel_source(), target, tmp_path)
    assert set(kernel.layouts()) >= {"Q_s[:, 0:128]", "Q_s[:, 128:192]"}


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_full_row_over_more_warps_than_row_blocks(target, tmp_path):
    # TileLang's sparse MLA: 64 query rows, 256 threads, FullRow. The warps take as many
    # row blocks as there are (4 x 16 rows) and split N for the rest, as TileLang does.
    kernel = tlc.compile(two_part_scores(threads=256), target=target)
    optimized = kernel.get_mlir("optimized")
    assert optimized.count("warps_m = 4, warps_n = 2") == 2
    assemble(kernel.get_kernel_source(), target, tmp_path)


@T.prim_func
def whole_copies_and_an_alias(Q: T.Tensor((64, 192), "float16"),
                              K: T.Tensor((64, 192), "float16"),
                              O: T.Tensor((64, 64), "float16")):
    # TileLang's MLA decode: the query copied in whole, multiplied by its column
    # slices, and its buffer reused under another name for the output.
    with T.Kernel(1, threads=128):
        Q_s = T.alloc_shared([64, 192], "float16")
        K_s = T.alloc_shared([64, 128], "float16")
        Kt_s = T.alloc_shared([64, 64], "float16")
        acc = T.alloc_fragment([64, 64], "float32")
        O_s = Q_s
        T.copy(Q, Q_s)
        T.copy(K[:, :128], K_s)
        T.copy(K[:, 128:], Kt_s)
        T.gemm(Q_s[:, :128], K_s, acc, transpose_B=True, clear_accum=True)
        T.gemm(Q_s[:, 128:], Kt_s, acc, transpose_B=True)
        T.copy(acc, O_s[:, 128:])
        T.copy(O_s[:, 128:], O)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_whole_copies_and_aliases_of_a_split_buffer(target, tmp_path):
    q, k, expect = _inputs()
    o = np.zeros((64, 64), np.float16)
    tlc.interpret(whole_copies_and_an_alias, q, k, o)
    np.testing.assert_allclose(o.astype(np.float32), expect, rtol=2e-3, atol=5e-2)
    kernel = tlc.compile(whole_copies_and_an_alias, target=target)
    optimized = kernel.get_mlir("optimized")
    # Two pieces; the whole copy in is one copy per piece.
    assert '"Q_s[:, 0:128]"' in optimized and '"Q_s[:, 128:192]"' in optimized
    assert kernel.get_mlir("tile").count("tile.copy %arg0") == 2
    assemble(kernel.get_kernel_source(), target, tmp_path)


@T.prim_func
def sliced_and_indexed(Q: T.Tensor((64, 192), "float16"), K: T.Tensor((64, 128), "float16"),
                       S: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        Q_s = T.alloc_shared([64, 192], "float16")
        K_s = T.alloc_shared([64, 128], "float16")
        acc = T.alloc_fragment([64, 64], "float32")
        T.copy(Q, Q_s)
        T.copy(K, K_s)
        Q_s[0, 0] = 0  # an element access: into the piece holding column 0
        T.gemm(Q_s[:, :128], K_s, acc, transpose_B=True, clear_accum=True)
        T.copy(acc, S)


@T.prim_func
def overlapping_slices(Q: T.Tensor((64, 192), "float16"), K: T.Tensor((64, 128), "float16"),
                       S: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        Q_s = T.alloc_shared([64, 192], "float16")
        K_s = T.alloc_shared([64, 128], "float16")
        acc = T.alloc_fragment([64, 64], "float32")
        T.copy(Q[:, :128], Q_s[:, :128])
        T.copy(Q[:, 64:], Q_s[:, 64:])
        T.copy(K, K_s)
        T.gemm(Q_s[:, 64:], K_s, acc, transpose_B=True, clear_accum=True)  # E:overlap
        T.copy(acc, S)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_element_accesses_of_a_split_buffer(target, tmp_path):
    rng = np.random.default_rng(5)
    q = rng.standard_normal((64, 192)).astype(np.float16)
    k = rng.standard_normal((64, 128)).astype(np.float16)
    s = np.zeros((64, 64), np.float32)
    tlc.interpret(sliced_and_indexed, q, k, s)
    q0 = q.copy()
    q0[0, 0] = 0
    assert np.abs(s - q0[:, :128].astype(np.float32) @ k.astype(np.float32).T).max() < 1e-2
    assemble(tlc.compile(sliced_and_indexed, target=target).get_kernel_source(), target,
             tmp_path)


@pytest.mark.parametrize("prim, marker", [(overlapping_slices, "overlap")])
def test_slices_of_a_buffer_used_otherwise_are_errors(prim, marker):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(prim, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, "Q_s[:, ",
                    "T.gemm's A is a slice of the shared buffer 'Q_s': tlc takes slices of a "
                    "buffer as operands when every use of it in the function is a column slice")


@T.prim_func
def whole_slice_aliases(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"),
                        C: T.Tensor((64, 64), "float32")):
    # TileLang's aliases: a buffer sliced whole is the buffer.
    with T.Kernel(1, threads=128):
        A_s = T.alloc_shared((64, 64), "float16")
        B_s = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        X_s = A_s[:64, :64]
        X_f = acc[0:64, :]
        T.clear(X_f)
        T.copy(A, X_s)
        T.copy(B, B_s[:, :64])
        T.gemm(X_s, B_s[:64, :], acc, transpose_B=True)
        T.copy(acc, C)


def test_a_buffer_sliced_whole_is_the_buffer(tmp_path):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((64, 64)).astype(np.float16)
    b = rng.standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    tlc.interpret(whole_slice_aliases, a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32).T, rtol=1e-3,
                               atol=1e-2)
    assemble(tlc.compile(whole_slice_aliases, target="sm_90a").get_kernel_source(), "sm_90a",
             tmp_path)
