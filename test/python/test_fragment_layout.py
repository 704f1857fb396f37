"""T.Fragment in T.annotate_layout: TileLang's element -> (thread, local index)
layouts, inverted into #tile.layout's (thread, register) -> element affine map
on the fragment's allocation; results unchanged (interpreter), the layout in
the IR, and errors at the user's line."""

from pathlib import Path

import numpy as np
import pytest

import marked_lines
import ptxas

import tlc
import tlc.language as T
from tlc.layout import (Fragment, LayoutError, make_fully_replicated_layout_fragment,
                        make_gemm_fragment_8x8, make_gemm_fragment_8x8_transposed)
from tlc.layout.affine import evaluate
from tlc.layout.affine_fit import digits, fit_map

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def table(layout):
    """coords[t, r] of a FragmentLayout, for comparing two layouts slot by slot."""
    return np.stack(evaluate(layout.map, np.arange(layout.threads)[:, None],
                             np.arange(layout.regs)[None, :]), axis=-1)


# -- the fit ----------------------------------------------------------------------------


def test_digits_of_bit_fields_and_mixed_radix():
    t = np.arange(32)
    assert digits((t // 4) + (t % 4) * 8) == [(1, 4, 8), (4, 8, 1)]
    assert digits(t) == [(1, 32, 1)]  # consecutive bits with doubling weights: one digit
    t96 = np.arange(96)
    assert digits((t96 % 32) * 3 + t96 // 32) == [(1, 32, 3), (32, 3, 1)]
    assert digits(np.array([0, 1, 3, 2])) is None  # a Gray code is no sum of digits


def test_fit_reproduces_the_mma_accumulator():
    m16n8 = "(d0, d1) -> (d0 floordiv 4 + (d1 floordiv 2) * 8, (d0 mod 4) * 2 + d1 mod 2)"
    coords = np.stack(evaluate(m16n8, np.arange(32)[:, None], np.arange(4)[None, :]), -1)
    found = fit_map(coords)
    again = np.stack(evaluate(found, np.arange(32)[:, None], np.arange(4)[None, :]), -1)
    assert np.array_equal(coords, again)


# -- the Fragment object (tilelang.layout.Fragment) ---------------------------------------


def test_fragment_queries_and_its_tile_layout():
    # A 4x8 tile over 4 threads, each a 2x4 block: TileAttrs.td's worked example.
    f = Fragment((4, 8), forward_thread_fn=lambda i, j: (i // 2) * 2 + j // 4,
                 forward_index_fn=lambda i, j: (i % 2) * 4 + j % 4)
    assert f.get_input_shape() == [4, 8] and f.get_output_shape() == [8]
    assert f.get_thread_size() == 4
    layout = f.to_layout(name="blk")
    assert (layout.threads, layout.regs) == (4, 8)
    assert layout.element(1, 5) == (1, 5) and layout.thread_and_register(2, 3) == (2, 3)
    # forward_fn gives both at once; the same layout.
    g = Fragment((4, 8), forward_fn=lambda i, j: ((i // 2) * 2 + j // 4, (i % 2) * 4 + j % 4))
    assert g.is_equal(f) and not g.is_equal(make_gemm_fragment_8x8())


def test_default_local_index_numbers_a_threads_elements_in_row_major_order():
    f = Fragment((64, 64), forward_thread_fn=lambda i, j: (j % 16) * 8 + i // 8)
    layout = f.to_layout()
    assert layout.regs == 32
    # Thread 9 holds rows 8-15 of columns 1, 17, 33, 49, row by row.
    assert [layout.element(9, r) for r in range(6)] == [
        (8, 1), (8, 17), (8, 33), (8, 49), (9, 1), (9, 17)]


def test_replicated_fragments():
    # TileLang's row sums: every thread of a 64-thread row group holds the row's sum.
    s = Fragment((4,), forward_fn=lambda i, rep: (rep, i), replicate=64)
    layout = s.to_layout()
    assert (layout.threads, layout.regs, layout.replication) == (64, 4, 64)
    assert layout.holders(2)[:2] == [(0, 2), (1, 2)]
    # forward_thread_fn takes the replica too.
    h = Fragment((32, 4), forward_thread_fn=lambda i, j, rep: i * 4 + rep, replicate=4)
    assert h.to_layout().holders(5, 2) == [(20, 2), (21, 2), (22, 2), (23, 2)]
    full = make_fully_replicated_layout_fragment((2, 3), 128).to_layout()
    assert full.replication == 128 and full.element(77, 4) == (1, 1)
    # Fragment.replicate: the same placement again on further threads.
    r = make_gemm_fragment_8x8().replicate(4)
    assert r.get_thread_size() == 128 and r.to_layout().holders(0, 0) == [
        (0, 0), (32, 0), (64, 0), (96, 0)]


def test_gemm_fragment_8x8_and_repeat():
    a = make_gemm_fragment_8x8().to_layout()
    assert [a.element(5, r) for r in range(2)] == [(1, 2), (1, 3)]
    b = make_gemm_fragment_8x8_transposed().to_layout()
    assert [b.element(5, r) for r in range(2)] == [(2, 1), (3, 1)]
    # Two copies along the rows: in further registers, or on further threads.
    regs = make_gemm_fragment_8x8().repeat([2, 1]).to_layout()
    assert regs.regs == 4 and regs.element(5, 2) == (9, 2)
    threads = make_gemm_fragment_8x8().repeat([2, 1], repeat_on_thread=True).to_layout()
    assert threads.threads == 64 and threads.element(37, 1) == (9, 3)


def test_fragment_argument_errors():
    with pytest.raises(LayoutError, match="needs forward_fn"):
        Fragment((4, 4))
    with pytest.raises(LayoutError, match="not both"):
        Fragment((4, 4), forward_fn=lambda i, j: (i, j), forward_thread_fn=lambda i, j: i)
    with pytest.raises(LayoutError, match=r"forward_fn\(0, 0\) returned 0; it returns "
                                          r"\(thread, index\)"):
        Fragment((4, 4), forward_fn=lambda i, j: i)
    with pytest.raises(LayoutError, match=r"forward_thread_fn\(0, 0\) raised "
                                          "ZeroDivisionError"):
        Fragment((4, 4), forward_thread_fn=lambda i, j: i // j)
    with pytest.raises(LayoutError, match=r"thread of element \(0, 0\) is 0.0, not an integer"):
        Fragment((4, 4), forward_thread_fn=lambda i, j: j / 2)
    with pytest.raises(LayoutError, match="shape is a tuple of positive ints"):
        Fragment((4, 0), forward_thread_fn=lambda i, j: i)


def test_plot_layout_draws_a_fragment(tmp_path):
    f = Fragment((16, 16), forward_thread_fn=lambda i, j: j * 2 + i // 8)
    (path,) = tlc.layout.plot_layout(f, save_directory=str(tmp_path), name="f", formats="svg")
    svg = Path(path).read_text()
    assert "32 threads x 8 registers" in svg and ">T2<" in svg


# -- (a) a gemm accumulator annotated with the layout tlc infers --------------------------


def _gemm(annotate=None, bm=128, bn=128, bk=32, threads=128):
    M, N, K = 256, 256, 128

    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(N // bn, M // bm, threads=threads) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), "float16")
            B_shared = T.alloc_shared((bk, bn), "float16")
            C_local = T.alloc_fragment((bm, bn), "float32")
            if annotate is not None:
                T.annotate_layout({C_local: annotate(C_local)})
            T.clear(C_local)
            for k in T.Pipelined(K // bk, num_stages=2):
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * bm, bx * bn])

    return gemm


def _mma_accumulator(C):
    """The m16n8 accumulator of 4 warps in 2 x 2, each warp 64x64, as a
    TileLang program writes it: element (i, j) -> (thread, register)."""
    def thread(i, j):
        warp = (i // 64) * 2 + j // 64
        return warp * 32 + (i % 8) * 4 + (j % 8) // 2

    def register(i, j):
        return ((i % 64) // 16) * 32 + ((j % 64) // 8) * 4 + ((i % 16) // 8) * 2 + j % 2

    return T.Fragment(C.shape, forward_thread_fn=thread, forward_index_fn=register)


def _as_inferred(inferred):
    """A T.Fragment holding each element where `inferred` (a FragmentLayout) does."""
    return lambda C: T.Fragment(C.shape, forward_fn=lambda i, j: inferred.thread_and_register(
        i, j))


@pytest.mark.parametrize("target, bm, bk", [("sm_80", 128, 32), ("sm_90a", 64, 64)])
def test_accumulator_annotated_as_inferred_keeps_the_layout(target, bm, bk, tmp_path):
    plain = tlc.compile(_gemm(bm=bm, bk=bk), target=target)
    inferred = plain.layout("C_local")
    annotate = _mma_accumulator if target == "sm_80" else _as_inferred(inferred)
    annotated = tlc.compile(_gemm(annotate, bm=bm, bk=bk), target=target)
    assert "layout = #tile.layout<threads = 128" in annotated.get_mlir("tile")
    mine = annotated.layout("C_local")
    assert (mine.threads, mine.regs) == (inferred.threads, inferred.regs)
    assert np.array_equal(table(mine), table(inferred))
    ptx = annotated.get_kernel_source()
    instruction = "mma.sync" if target == "sm_80" else "wgmma.mma_async"
    assert ptx.count(instruction) == plain.get_kernel_source().count(instruction) > 0
    ptxas.assemble(ptx, target, tmp_path)


def test_accumulator_annotated_as_inferred_gives_identical_ptx():
    plain = tlc.compile(_gemm(), target="sm_80")
    annotated = tlc.compile(_gemm(_mma_accumulator), target="sm_80")
    assert annotated.get_kernel_source() == plain.get_kernel_source()


# -- (b) custom layouts: same results, the layout in the IR --------------------------------

M, N = 64, 32


def _scale(layout):
    @T.prim_func
    def scale(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((M, N), "float32")
            T.annotate_layout({f: layout})
            T.copy(A[0, 0], f)
            for i, j in T.Parallel(M, N):
                f[i, j] = f[i, j] * 2.0 + 1.0
            T.copy(f, B[0, 0])

    return scale


@pytest.mark.parametrize("name, layout, thread_of_1_2", [
    # Column-cyclic: thread 32 q + j holds column j of rows q, q + 4, ...
    ("column-cyclic", T.Fragment((M, N), forward_thread_fn=lambda i, j: (i % 4) * 32 + j,
                                 forward_index_fn=lambda i, j: i // 4), 34),
    # Transposed: consecutive threads go down a column, 16 registers along the row.
    ("transposed", T.Fragment((M, N), forward_fn=lambda i, j: (i + 64 * (j // 16), j % 16)), 1),
])
def test_custom_layouts_compute_the_same_and_reach_the_ir(name, layout, thread_of_1_2, tmp_path):
    prim = _scale(layout)
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, N)).astype(np.float32)
    b = np.zeros_like(a)
    tlc.interpret(prim, a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)
    kernel = tlc.compile(prim, target="sm_80")
    f = kernel.layout("f")
    assert f.thread_and_register(1, 2)[0] == thread_of_1_2
    assert np.array_equal(table(f), table(layout.to_layout()))
    optimized = kernel.get_mlir("optimized")
    assert f"layout = #tile.layout<threads = 128, regs = 16, map = {f.map}>" in optimized
    b2 = np.zeros_like(a)
    tlc.interpret(optimized, a, b2)  # the IR after the passes, the layout on it
    np.testing.assert_array_equal(b2, b)
    ptxas.assemble(kernel.get_kernel_source(), "sm_80", tmp_path)


X_ROWS, X_WIDTH = 4, 512


@T.prim_func
def row_normalize(x: T.Tensor((X_ROWS, X_WIDTH), "float32"),
                  out: T.Tensor((X_ROWS, X_WIDTH), "float32")):
    with T.Kernel(1, threads=64):
        x_frag = T.alloc_fragment((X_ROWS, X_WIDTH), "float32")
        sums = T.alloc_fragment((X_ROWS,), "float32")
        T.annotate_layout({
            x_frag: T.Fragment(x_frag.shape, forward_fn=lambda i, j: (j // 8, i * 8 + j % 8)),
            sums: T.Fragment(sums.shape, forward_fn=lambda i, rep: (rep, i), replicate=64),
        })
        T.copy(x, x_frag)
        T.reduce_sum(x_frag, sums, dim=1)
        for i, j in T.Parallel(X_ROWS, X_WIDTH):
            out[i, j] = x_frag[i, j] / sums[i]


def test_reduction_over_annotated_fragments(tmp_path):
    rng = np.random.default_rng(8)
    x = rng.random((X_ROWS, X_WIDTH)).astype(np.float32)
    out = np.zeros_like(x)
    tlc.interpret(row_normalize, x, out)
    np.testing.assert_allclose(out, x / x.sum(axis=1, keepdims=True), rtol=1e-6)
    kernel = tlc.compile(row_normalize, target="sm_80")
    assert kernel.layout("sums").replication == 64
    assert kernel.layout("x_frag").element(3, 9) == (1, 25)
    ptxas.assemble(kernel.get_kernel_source(), "sm_80", tmp_path)


# A layout made outside the prim_func, as a factory would.
BLOCKED = T.Fragment((M, N), forward_thread_fn=lambda i, j: (i * N + j) // 16)


def test_a_fragment_made_outside_the_prim_func():
    assert "map = (d0, d1) -> (d0 floordiv 2, (d0 mod 2) * 16 + d1)" in \
        _scale(BLOCKED).script()


# -- (c) errors at the user's line --------------------------------------------------------


def check(prim, marker: str, at: str, message: str) -> None:
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    marked_lines.assert_error_at(e.value, THIS, LINES, marker, at, message)


@T.prim_func
def not_affine(A: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=32):
        f = T.alloc_fragment((32, 32), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, lambda i, j: ((i + j) % 32, i))})  # E:affine
        T.copy(A[0, 0], f)


@T.prim_func
def too_few_threads(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((M, N), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, lambda i, j: (j, i))})  # E:few
        T.copy(A[0, 0], f)


@T.prim_func
def too_many_threads(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((M, N), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, lambda i, j: (i * 4 + j // 8, j % 8))})  # E:many
        T.copy(A[0, 0], f)


@T.prim_func
def two_in_one_register(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((M, N), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, lambda i, j: (j * 4 + i % 4, i // 8))})  # E:twice
        T.copy(A[0, 0], f)


@T.prim_func
def empty_registers(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((M, N), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, lambda i, j: (j * 4 + i % 4, i // 2))})  # E:holes
        T.copy(A[0, 0], f)


@T.prim_func
def negative_thread(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((M, N), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, forward_thread_fn=lambda i, j: j - 1)})  # E:neg
        T.copy(A[0, 0], f)


@T.prim_func
def wrong_shape(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((M, N), "float32")
        T.annotate_layout({f: T.Fragment((N, M), forward_thread_fn=lambda i, j: j)})  # E:shape
        T.copy(A[0, 0], f)


@T.prim_func
def fragment_on_shared(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((M, N), "float32")
        T.annotate_layout({s: T.Fragment(s.shape, lambda i, j: (j * 4 + i % 4, i // 4))})  # E:shm
        T.copy(A[0, 0], s)


@T.prim_func
def swizzle_on_fragment(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((M, N), "float32")
        s = T.alloc_shared((M, N), "float32")
        T.annotate_layout({s: tlc.layout.make_swizzled_layout(s),
                           f: tlc.layout.make_swizzled_layout()})  # E:swz
        T.copy(A[0, 0], f)
        T.copy(f, s)


@T.prim_func
def lambda_reads_the_block_index(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((M, N), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, lambda i, j: (j + bx, i))})  # E:bx
        T.copy(A[0, 0], f)


@T.prim_func
def layout_function_fails(A: T.Tensor((M, N), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((M, N), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, lambda i, j: (j // i, 0))})  # E:raises
        T.copy(A[0, 0], f)


@pytest.mark.parametrize("prim, marker, at, message", [
    (not_affine, "affine", "T.Fragment",
     "the layout of 'f' is valid but not affine: tlc's #tile.layout needs each element index "
     "as a sum of terms ((thread floordiv a) mod b) * c"),
    (too_few_threads, "few", "T.Fragment",
     "the layout spreads 'f' over threads 0-31, but the kernel has 128 threads"),
    (too_many_threads, "many", "T.Fragment",
     "the layout puts element (32, 0) of 'f' on thread 128, but the kernel has 128 threads"),
    (two_in_one_register, "twice", "T.Fragment",
     "the layout puts both element (0, 0) and element (4, 0) of 'f' in register 0 of thread 0"),
    (empty_registers, "holes", "T.Fragment",
     "the layout leaves register 1 of thread 0 empty (local indices run to 31; thread 0 holds "
     "16 element(s)"),
    (negative_thread, "neg", "T.Fragment",
     "the thread of element (0, 0) is -1, a negative thread"),
    (wrong_shape, "shape", "T.Fragment",
     "the layout is for shape [32, 64], but 'f' has shape [64, 32]"),
    (fragment_on_shared, "shm", "T.Fragment",
     "a T.Fragment layout applies to fragments (T.alloc_fragment); 's' is shared"),
    (swizzle_on_fragment, "swz", "tlc.layout",
     "a swizzled layout applies to shared buffers; 'f' is fragment"),
    (lambda_reads_the_block_index, "bx", "bx",
     "a lambda in a prim_func runs at compile time; it cannot read 'bx', a run-time index"),
    (layout_function_fails, "raises", "T.Fragment",
     "forward_fn(0, 0) raised ZeroDivisionError"),
])
def test_layout_errors_name_the_line(prim, marker, at, message):
    check(prim, marker, at, message)


@T.prim_func
def gemm_accumulator_elsewhere(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"),
                               C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 32), "float16")
        b = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.annotate_layout({c: T.Fragment(c.shape, forward_thread_fn=lambda i, j: i * 2 + j // 32)})
        T.copy(A[0, 0], a)
        T.copy(B[0, 0], b)
        T.clear(c)
        T.gemm(a, b, c)  # E:gemm
        T.copy(c, C[0, 0])


def test_a_gemm_refuses_another_accumulator_layout():
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(gemm_accumulator_elsewhere, target="sm_80")
    marked_lines.assert_error_at(e.value, THIS, LINES, "gemm", "T.gemm",
                                 "needs C in the tensor-core accumulator layout, but C already "
                                 "has another layout (from another gemm or an annotation)")
