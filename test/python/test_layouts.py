"""The layouts the compiler chose, read back: kernel.layouts(), FragmentLayout
(which thread and register hold each element), SharedLayout (each element's
address and bank), and the buffer names the frontend carries to the snapshot."""

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.layout import FragmentLayout, LayoutError, SharedLayout, layouts_from_ir
from tlc.layout.affine import evaluate

# One warp's m16n8 mma accumulator, as the PTX ISA draws it: lane l holds
# c0, c1 at row l/4, columns 2*(l%4) + {0, 1}, and c2, c3 eight rows below.
MMA_M16N8 = "(d0, d1) -> (d0 floordiv 4 + (d1 floordiv 2) * 8, (d0 mod 4) * 2 + d1 mod 2)"


def _gemm(M=128, N=128, K=64, block=64, block_K=32):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(N // block, M // block, threads=128) as (bx, by):
            A_shared = T.alloc_shared((block, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block), "float16")
            C_local = T.alloc_fragment((block, block), "float32")
            T.clear(C_local)
            for k in T.Pipelined(K // block_K, num_stages=2):
                T.copy(A[by * block, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block, bx * block])

    return gemm


@pytest.fixture(scope="module")
def gemm_kernel():
    return tlc.compile(_gemm(), target="sm_80")


def test_affine_evaluation_follows_mlir_semantics():
    # floordiv rounds down, mod is never negative, ceildiv rounds up.
    fl, md, cd = evaluate("(d0) -> (d0 floordiv 4, d0 mod 4, d0 ceildiv 4)", np.array([-5, 5]))
    assert fl.tolist() == [-2, 1] and md.tolist() == [3, 1] and cd.tolist() == [-1, 2]
    (diff,) = evaluate("(d0, d1) -> (d0 * 3 - d1)", 2, np.arange(3))
    assert diff.tolist() == [6, 5, 4]
    with pytest.raises(LayoutError, match="symbols"):
        evaluate("(d0)[s0] -> (d0 + s0)", 1)
    with pytest.raises(LayoutError, match="not an affine map"):
        evaluate("(d0) -> (d0 +)", 1)


def test_mma_accumulator_pattern():
    c = FragmentLayout((16, 8), threads=32, regs=4, map=MMA_M16N8)
    assert [c.element(0, r) for r in range(4)] == [(0, 0), (0, 1), (8, 0), (8, 1)]
    assert [c.element(5, r) for r in range(4)] == [(1, 2), (1, 3), (9, 2), (9, 3)]
    assert c.thread_and_register(9, 3) == (5, 3)
    assert c.thread_and_register(15, 7) == (31, 3)
    assert c.replication == 1


def test_worked_example_of_the_layout_attribute():
    # The table in TileAttrs.td (#tile.layout): a 4x8 tile, 4 threads of 8 registers.
    b = FragmentLayout((4, 8), 4, 8, "(d0, d1) -> ((d1 floordiv 4) * 2 + d0 floordiv 2, "
                                     "(d0 mod 2) * 4 + d1 mod 4)")
    assert b.thread_and_register(0, 4) == (1, 0)
    assert b.thread_and_register(2, 3) == (0, 7)
    assert b.thread_and_register(3, 7) == (3, 7)
    threads, regs = b.owner_grids()
    assert threads[1].tolist() == [2, 2, 2, 2, 3, 3, 3, 3]
    assert regs[2].tolist() == [4, 5, 6, 7, 4, 5, 6, 7]


def test_replicated_layout_lists_every_holder():
    # A row vector of 16 rows over 64 threads: each row held by 4 threads.
    v = FragmentLayout((16,), 64, 1, "(d0, d1) -> (d0 floordiv 4 + d1)")
    assert v.replication == 4
    assert v.holders(3) == [(12, 0), (13, 0), (14, 0), (15, 0)]
    assert v.thread_and_register(3) == (12, 0)


def test_fragment_layout_errors():
    with pytest.raises(LayoutError, match=r"outside \(16, 8\)"):
        FragmentLayout((16, 8), 32, 4, "(d0, d1) -> (d0, d1)")
    with pytest.raises(LayoutError, match="equally often"):
        FragmentLayout((4,), 4, 1, "(d0, d1) -> (d0 floordiv 2)")
    with pytest.raises(LayoutError, match="gives 1 indices"):
        FragmentLayout((4, 4), 4, 4, "(d0, d1) -> (d0)")
    c = FragmentLayout((16, 8), 32, 4, MMA_M16N8)
    with pytest.raises(LayoutError, match="outside 0..7"):
        c.thread_and_register(0, 8)
    with pytest.raises(LayoutError, match="2 indices, got 1"):
        c.thread_and_register(0)
    with pytest.raises(LayoutError, match="thread 32 is outside"):
        c.element(32, 0)


def test_banks_of_an_unswizzled_tile_conflict_in_a_column():
    # 64x64 f16: 128-byte rows, so a column lies in one bank.
    s = SharedLayout((64, 64), "float16")
    assert {s.bank(r, 0) for r in range(8)} == {0}
    assert [s.bank(0, c) for c in range(0, 64, 2)] == list(range(32))
    assert s.address(1, 3) == 128 + 6


def test_swizzle_spreads_a_column_over_the_banks():
    s = SharedLayout((64, 64), "float16", swizzle=(3, 4, 3))
    # Row r stores its 16-byte chunk c at chunk c ^ (r % 8) (the TileAttrs.td table).
    assert [s.bank(r, 0) for r in range(8)] == [0, 4, 8, 12, 16, 20, 24, 28]
    assert s.address(1, 8) == 128 + 0  # row 1, chunk 1 -> chunk 0
    assert s.address(7, 0) == 7 * 128 + 7 * 16
    # A permutation of the bytes: every element has its own address.
    addresses = s.addresses()
    assert sorted(addresses.ravel().tolist()) == list(range(0, 64 * 64 * 2, 2))
    # ldmatrix reads 8 rows of one 16-byte chunk: 8 different 16-byte groups.
    for r0, chunk in itertools.product(range(0, 64, 8), range(8)):
        groups = {(s.address(r0 + i, chunk * 8) % 128) // 16 for i in range(8)}
        assert len(groups) == 8


def test_stages_and_column_blocks_and_offset():
    # Two stages of 8x8 f16 (128 bytes each): less than the swizzle's 1024-byte
    # period, so the compiler swizzles the stage's base with the element.
    s = SharedLayout((8, 8), "float16", swizzle=(3, 4, 3), stages=2, offset=1024)
    assert s.address(0, 0, stage=1) == 1024 + (128 ^ 16)
    both = np.concatenate([s.addresses(0).ravel(), s.addresses(1).ravel()])
    assert sorted(both.tolist()) == list(range(1024, 1024 + 256, 2))
    with pytest.raises(LayoutError, match="stage 2 is outside"):
        s.bank(0, 0, stage=2)
    # wgmma's column blocks: (r, c) at ((c / 64) * rows + r) * 64 + c % 64.
    b = SharedLayout((32, 128), "float16", column_block=64)
    assert b.address(0, 64) == 32 * 64 * 2
    assert b.address(1, 65) == (32 * 64 + 64 + 1) * 2
    with pytest.raises(LayoutError, match="column blocks"):
        SharedLayout((32, 96), "float16", column_block=64)


SNAPSHOT = """\
    tile.kernel blocks(%arg3) in (%c2) threads = 32 {
      %0 = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3, \
base = 4, shift = 3>>, offset = 512 : i64, tile.name = "S"} : memref<2x64x64xf16, #gpu.address_space<workgroup>>
      %1 = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 4, map = \
(d0, d1) -> (d0 floordiv 4 + (d1 floordiv 2) * 8, (d0 mod 4) * 2 + d1 mod 2)>, \
tile.name = "acc"} : memref<16x8xf32, #tile.space<fragment>>
      %2 = tile.alloc_fragment {layout = #tile.layout<threads = 32, regs = 4, map = \
(d0, d1) -> ((d0 mod 4) * 4 + d1, d0 floordiv 4)>, tile.name = "acc"} \
: memref<16x8xf32, #tile.space<fragment>>
      %3 = tile.alloc_shared {offset = 66048 : i64} : memref<2xi64, #gpu.address_space<workgroup>>
      %4 = tile.alloc_shared {layout = #tile.shared<stages = 3, column_block = 64, swizzle = \
#tile.swizzle<bits = 3, base = 4, shift = 3>>, offset = 0 : i64, tile.name = "B"} \
: memref<3x64x128xf16, #gpu.address_space<workgroup>>
      %5 = tile.alloc_shared {layout = #tile.shared<column_block = 64>, tile.name = "B2"} \
: memref<64x128xf16, #gpu.address_space<workgroup>>
"""


def test_layouts_from_snapshot_text():
    found = layouts_from_ir(SNAPSHOT)
    assert list(found) == ["S", "acc", "acc#2", "%3", "B", "B2"]
    s = found["S"]
    assert (s.shape, s.stages, s.swizzle, s.offset, s.dtype) == \
        ((64, 64), 2, (3, 4, 3), 512, "float16")
    assert found["acc"].element(0, 2) == (8, 0)
    assert found["acc#2"].element(5, 3) == (7, 1)  # a converted copy: its own layout
    assert (found["%3"].shape, found["%3"].element_bytes) == ((2,), 8)
    b = found["B"]
    assert (b.shape, b.stages, b.column_block, b.swizzle) == ((64, 128), 3, 64, (3, 4, 3))
    b2 = found["B2"]
    assert (b2.shape, b2.stages, b2.column_block, b2.swizzle) == ((64, 128), 1, 64, None)


def test_kernel_layouts_by_the_programs_names(gemm_kernel):
    found = gemm_kernel.layouts()
    assert {"A_shared", "B_shared", "C_local"} <= set(found)
    c = gemm_kernel.layout("C_local")
    assert isinstance(c, FragmentLayout) and c.shape == (64, 64) and c.threads == 128
    # A bijection between (thread, register) pairs and the 64x64 elements...
    assert c.replication == 1 and c.threads * c.regs == 64 * 64
    for thread, reg in itertools.product(range(0, 128, 7), range(c.regs)):
        assert c.thread_and_register(*c.element(thread, reg)) == (thread, reg)
    # ... that is the mma accumulator's: thread 0 starts with (0,0) (0,1) (8,0) (8,1).
    assert [c.element(0, r) for r in range(4)] == [(0, 0), (0, 1), (8, 0), (8, 1)]
    a = found["A_shared"]
    assert isinstance(a, SharedLayout) and a.shape == (64, 32) and a.stages == 2
    # The swizzle the compiler chose makes ldmatrix's 8-row reads conflict-free.
    for stage, r0, chunk in itertools.product(range(2), range(0, 64, 8), range(4)):
        groups = {(a.address(r0 + i, chunk * 8, stage=stage) % 128) // 16 for i in range(8)}
        assert len(groups) == 8


def test_names_reach_the_optimized_snapshot_only(gemm_kernel):
    assert 'tile.name = "C_local"' in gemm_kernel.get_mlir("optimized")
    assert "tile.name = \"C_local\"" not in gemm_kernel.get_mlir("tile")


def test_layout_errors_name_the_buffers(gemm_kernel):
    with pytest.raises(LayoutError, match=r"no fragment or shared buffer named 'C'.*C_local"):
        gemm_kernel.layout("C")

    class Bare:
        name, stages, artifact = "k", {"tile": "module {}"}, {}

    with pytest.raises(LayoutError, match="no 'optimized' IR snapshot"):
        tlc.layout.kernel_layouts(Bare())
    with pytest.raises(LayoutError, match="not a compiled kernel"):
        tlc.layout.kernel_layouts(object())


# The programs bench/build_reduce.py (and build_gemm_extras.py) also build for the GPU checks.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import build_gemm_extras  # noqa: E402
import build_language_checks  # noqa: E402
import build_reduce  # noqa: E402


def _mix_rows():
    return build_reduce.mix_rows.factory(4, 512)


def _scale_rows_by_max():
    return build_reduce.scale_rows_by_max.factory(64, 256, 8)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_row_vector_placed_otherwise_is_converted(target):
    # mx comes from a 64 x 8 tile (each row in two threads); the loop over the 64 x 256 tile
    # holds its rows elsewhere: the compiler converts mx for the loop (through shared memory)
    # instead of refusing the program.
    kernel = tlc.compile(_scale_rows_by_max(), out_idx=[2], target=target)
    optimized = kernel.get_mlir("optimized")
    assert optimized.count("tile.staging_offset") >= 1  # the conversion's shared bytes
    assert "ld.shared" in kernel.get_kernel_source()
    rng = np.random.default_rng(3)
    a = rng.standard_normal((64, 8)).astype(np.float32)
    b = rng.standard_normal((64, 256)).astype(np.float32)
    out = tlc.jit(lambda: _scale_rows_by_max(), out_idx=[2], interpret=True)()(a, b)
    np.testing.assert_allclose(out, b * a.max(axis=1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_row_vector_in_its_warp_is_converted_by_shuffles(target, dtype):
    # One warp: mx (from a 16 x 32 tile, each row in 8 lanes) and the 16 x 64 loop (each row in
    # 16 lanes) keep every row in the warp, so the conversion is a shuffle per register:
    # no shared memory, no barrier.
    factory = build_reduce.scale_rows_by_max.factory(16, 64, 32, dtype, 32)
    kernel = tlc.compile(factory, out_idx=[2], target=target)
    assert "tile.staging_offset" not in kernel.get_mlir("optimized")
    ptx = kernel.get_kernel_source()
    assert "shfl.sync.idx" in ptx
    assert "ld.shared" not in ptx and "bar.sync" not in ptx and "barrier.sync" not in ptx
    rng = np.random.default_rng(4)
    a = rng.standard_normal((16, 32)).astype(dtype)
    b = rng.standard_normal((16, 64)).astype(dtype)
    out = tlc.jit(lambda: factory, out_idx=[2], interpret=True)()(a, b)
    np.testing.assert_allclose(out, b * a.max(axis=1, keepdims=True), rtol=1e-3)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_fragment_indexed_by_a_serial_index_beside_the_loops(target):
    # m[k, j] and x[k, h] leave out one of the loop's dimensions each and take the other from
    # the serial loop inside it: every thread holds all k for its elements, placed so by the
    # loop (no conversion, no shared memory) and indexed in registers (no local memory).
    kernel = tlc.compile(_mix_rows(), out_idx=[4], target=target)
    assert "tile.staging_offset" not in kernel.get_mlir("optimized")
    ptx = kernel.get_kernel_source()
    assert ".shared" not in ptx and ".local" not in ptx
    rng = np.random.default_rng(5)
    m = rng.standard_normal((4, 4)).astype(np.float32)
    x = rng.standard_normal((4, 512)).astype(np.float32)
    c = rng.standard_normal(4).astype(np.float32)
    d = rng.standard_normal(512).astype(np.float32)
    y = tlc.jit(lambda: _mix_rows(), out_idx=[4], interpret=True)()(m, x, c, d)
    # The kernel reads X and d as bfloat16 and writes Y as bfloat16: round the reference's
    # inputs the same way (to nearest even on the top 16 bits), compare to Y's precision.
    def bf16(a):
        bits = a.astype(np.float32).view(np.uint32)
        return ((bits + 0x7FFF + (bits >> 16 & 1)) & 0xFFFF0000).view(np.float32)

    ref = m.T.astype(np.float64) @ bf16(x) + c[:, None] * bf16(d)[None, :]
    np.testing.assert_allclose(y, ref, rtol=1e-2, atol=1e-2)


def _scaled_row_sums(scale_first):
    @T.prim_func
    def scaled_row_sums(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"),
                        S: T.Tensor((64,), "float32"), O: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_shared((64, 64), "float16")
            b = T.alloc_shared((64, 64), "float16")
            scale = T.alloc_shared((64,), "float32")
            acc = T.alloc_fragment((64, 64), "float32")
            l = T.alloc_fragment((64,), "float32")
            sums = T.alloc_fragment((64,), "float32")
            T.copy(A, a)
            T.copy(B, b)
            T.copy(S, scale)
            T.fill(l, 1)
            T.gemm(a, b, acc, clear_accum=True)
            if scale_first:
                for r in T.Parallel(64):
                    l[r] *= scale[r]
            T.reduce_sum(acc, sums, dim=1)
            for r in T.Parallel(64):
                l[r] += sums[r]
            if not scale_first:
                for r in T.Parallel(64):
                    l[r] *= scale[r]
            for r, j in T.Parallel(64, 64):
                acc[r, j] /= l[r]
            T.copy(acc, O)

    return scaled_row_sums


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_row_vector_placed_by_its_later_loops(target):
    # l is first touched in a loop of its own (l[r] *= scale[r]); it still takes the layout of
    # the reduction's row sums it is added to, so neither later loop converts it: the program
    # compiles to the same shared-memory copies and barriers as with the loops swapped.
    first = tlc.compile(_scaled_row_sums(True), target=target)
    last = tlc.compile(_scaled_row_sums(False), target=target)
    assert (first.get_mlir("optimized").count("tile.staging_offset")
            == last.get_mlir("optimized").count("tile.staging_offset"))
    assert (first.get_kernel_source().count("bar.sync")
            == last.get_kernel_source().count("bar.sync"))


def _shared_reductions():
    return build_reduce.shared_reductions.factory(64, 128)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_reductions_of_and_into_shared_buffers(target):
    # The shared source is reduced through a fragment copy of it; the shared destination is
    # loaded into a fragment (the reduction accumulates onto it) and stored back.
    kernel = tlc.compile(_shared_reductions(), out_idx=[1, 2], target=target)
    optimized = kernel.get_mlir("optimized")
    assert optimized.count("tile.reduce %") == 2
    assert "bar.sync" in kernel.get_kernel_source()
    rng = np.random.default_rng(4)
    a = rng.standard_normal((64, 128)).astype(np.float32)
    mx, s = tlc.jit(lambda: _shared_reductions(), out_idx=[1, 2], interpret=True)()(a)
    np.testing.assert_allclose(mx, a.max(axis=1), rtol=1e-6)
    np.testing.assert_allclose(s, 1 + a.sum(axis=0), rtol=1e-5)


# TileLang programs keep a scalar in a one-element fragment, written and read outside
# T.Parallel by every thread (each on its own copy) and read inside it.
_scaled_by_a_scalar_fragment = build_language_checks.scalar_fragment


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_scalar_fragment_outside_parallel(target):
    # Every thread holds the whole fragment (its one register), so the element accesses outside
    # the loop are the thread's own register: no shared memory, no barrier.
    kernel = tlc.compile(_scaled_by_a_scalar_fragment, out_idx=[2], target=target)
    assert "regs = 1, map = (d0, d1) -> (0)" in kernel.get_mlir("optimized")
    ptx = kernel.get_kernel_source()
    assert ".shared" not in ptx and "bar.sync" not in ptx and ".local" not in ptx
    rng = np.random.default_rng(6)
    x = np.abs(rng.standard_normal(8)).astype(np.float32)
    a = rng.standard_normal(256).astype(np.float32)
    y = tlc.jit(lambda: _scaled_by_a_scalar_fragment, out_idx=[2], interpret=True)()(x, a)
    np.testing.assert_allclose(y, a / np.sqrt(x.sum() / 8 + 1e-6), rtol=1e-5)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_fragment_read_in_chunks_of_the_loop(target):
    # x[i, kk * 4 + j] in a loop over (i, j) of 4 columns inside a serial loop over kk: the
    # column dimension is seen as (kk, j), so each thread holds every chunk of its columns,
    # placed by the loop (no conversion). The serial loop is unrolled, so kk picks registers by
    # constants: no local memory.
    factory = build_reduce.chunked_sqsum.factory(32, 256)
    kernel = tlc.compile(factory, out_idx=[1], target=target)
    optimized = kernel.get_mlir("optimized")
    assert "tile.staging_offset" not in optimized
    assert "regs = 64" in optimized  # x: 64 chunks of one column a thread
    assert ".local" not in kernel.get_kernel_source()
    x = np.random.default_rng(7).standard_normal((32, 256)).astype(np.float32)
    s = tlc.jit(lambda: factory, out_idx=[1], interpret=True)()(x)
    np.testing.assert_allclose(s, (x.astype(np.float64) ** 2).sum(1), rtol=1e-5)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_reductions_from_two_layouts_into_one_vector(target, tmp_path):
    # The 64 x 32 tile and the 64 x 128 tile slice to different row layouts: the second
    # reduction goes into a converted copy of the vector (which it accumulates into).
    from ptxas import assemble

    factory = build_reduce.two_reductions.factory(64, 32, 128)
    kernel = tlc.compile(factory, out_idx=[2], target=target)
    assert "tile.staging_offset" in kernel.get_mlir("optimized")  # the conversions
    assemble(kernel.get_kernel_source(), target, tmp_path)
    rng = np.random.default_rng(8)
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((64, 128)).astype(np.float32)
    s = tlc.jit(lambda: factory, out_idx=[2], interpret=True)()(a, b)
    np.testing.assert_allclose(s, a.sum(1) + b.sum(1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [64, 8])
@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_reductions_of_a_vector_held_in_copies(n, target, tmp_path):
    # 128 threads hold an n-vector in 128 / n copies: the sum adds each element once (it
    # combines lanes and warps holding different elements, not copies), which was an error.
    from ptxas import assemble

    factory = build_reduce.small_softmax.factory(n)
    kernel = tlc.compile(factory, out_idx=[1], target=target)
    ptx = kernel.get_kernel_source()
    assemble(ptx, target, tmp_path)
    distinct = min(n, 32).bit_length() - 1  # lane bits between different elements
    assert ptx.count("shfl.sync.bfly") == 2 * distinct  # a max and a sum
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    y = tlc.jit(lambda: factory, out_idx=[1], interpret=True)()(x)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(y, e / e.sum(), rtol=1e-5, atol=1e-7)


int4_gemm = build_gemm_extras.int4_gemm


def _int4_inputs(M=64, N=64, K=128):
    rng = np.random.default_rng(12)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.integers(0, 256, (N, K // 2), dtype=np.uint8)
    nib = np.stack([b & 15, b >> 4], axis=-1).reshape(N, K).astype(np.int16)
    w = np.where(nib >= 8, nib - 16, nib).astype(np.float32)
    return a, b, a.astype(np.float32) @ w.T


def test_a_packed_operand_splits_its_loop(tmp_path):
    # B_packed[n, j // 2] beside B_f[n, j]: tile-infer-layout splits j into (j // 2, j % 2),
    # B_packed becoming a row vector of the split loop (no conversion), B_f a view. The IR it
    # leaves runs in the interpreter like the program.
    from ptxas import assemble
    from tlc.compiler.pipeline import run_pipeline, set_target

    prim = int4_gemm()
    a, b, expect = _int4_inputs()
    c = np.zeros((64, 64), np.float32)
    tlc.interpret(prim, a, b, c)
    np.testing.assert_allclose(c, expect, rtol=1e-3, atol=1e-2)
    module = prim.build_module()
    set_target(module, "sm_90a")
    with module.context:
        run_pipeline(module, "builtin.module(tile-select-mma,tile-infer-layout)", "optimized")
    text = str(module)
    assert "to memref<64x32x2xf16, #tile.space<fragment>>" in text  # B_f's view
    assert "in [64, 32, 2]" in text and "tile.staging_offset" not in text
    c = np.zeros((64, 64), np.float32)
    tlc.interpret(text, a, b, c)
    np.testing.assert_allclose(c, expect, rtol=1e-3, atol=1e-2)
    for target in ("sm_80", "sm_90a"):
        kernel = tlc.compile(prim, target=target)
        assemble(kernel.get_kernel_source(), target, tmp_path)


# A row of a fragment picked by a T.Pipelined loop's index, copied out (T.copy of part of a
# fragment into another: an element loop) and read in T.Parallel beside it, as TileLang's
# flash decoding combines its splits.
_rows_through_a_pipeline = build_language_checks.partial_fragment_rows


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_fragment_rows_picked_by_a_pipelined_index(target, tmp_path):
    from ptxas import assemble

    # Compiling once crashed: the pipelined loop's index was a block argument of a block
    # the conversion had already detached. Its registers are indexed at run time: a stack.
    kernel = tlc.compile(_rows_through_a_pipeline, out_idx=[1], target=target)
    assemble(kernel.get_kernel_source(), target, tmp_path, stack=True)
    x = np.random.default_rng(10).standard_normal((4, 128)).astype(np.float32)
    s = tlc.jit(lambda: _rows_through_a_pipeline, out_idx=[1], interpret=True)()(x)
    np.testing.assert_allclose(s, (x * x).sum(0), rtol=1e-5, atol=1e-5)


def composable_copy(M=256, N=256, block_M=32, block_N=64):
    """B = A flattened, through a 1-d fragment written at i * block_N + j (TileLang's
    composable indices) and read back in a loop over its own index."""

    @T.prim_func
    def flatten(A: T.Tensor((M, N), "float16"), B: T.Tensor((M * N,), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a = T.alloc_fragment([block_M, block_N], "float16")
            flat = T.alloc_fragment([block_M * block_N], "float16")
            T.copy(A[by * block_M, bx * block_N], a)
            for i, j in T.Parallel(block_M, block_N):
                flat[i * block_N + j] = a[i, j]
            for i in T.Parallel(block_M * block_N):
                B[(by * block_M + i // block_N) * N + bx * block_N + i % block_N] = flat[i]

    return flatten


def test_a_fragment_at_a_linear_index_of_the_loop(tmp_path):
    from ptxas import assemble

    prim = composable_copy()
    a = np.random.default_rng(6).standard_normal((256, 256)).astype(np.float16)
    b = np.zeros(256 * 256, np.float16)
    tlc.interpret(prim, a, b)
    np.testing.assert_array_equal(b, a.reshape(-1))
    from tlc.compiler.pipeline import run_pipeline, set_target

    module = prim.build_module()  # the IR tile-infer-layout leaves runs alike
    set_target(module, "sm_90a")
    with module.context:
        run_pipeline(module, "builtin.module(tile-infer-layout)", "optimized")
    b = np.zeros(256 * 256, np.float16)
    tlc.interpret(str(module), a, b)
    np.testing.assert_array_equal(b, a.reshape(-1))
    for target in ("sm_80", "sm_90a"):
        kernel = tlc.compile(prim, target=target)
        assert "to memref<32x64xf16, #tile.space<fragment>>" in kernel.get_mlir("optimized")
        assemble(kernel.get_kernel_source(), target, tmp_path)
