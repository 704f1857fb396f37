"""TileLang's per-thread copies (T.access_ptr, T.ptx_cp_async,
T.cp_async_barrier_noinc): interpreted against numpy, compiled for sm_90a and
sm_80, and the mistakes reported at the user's line."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at
import ptxas

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


@T.prim_func
def rows_by_thread(X: T.Tensor((64, 64), "float16"), Y: T.Tensor((64, 64), "float16")):
    # Each thread copies 16-byte pieces of rows (8 halves) into shared memory,
    # rows 60 and on as zeros, then arrives once they have landed.
    with T.Kernel(1, threads=128):
        buf = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        tx = T.get_thread_binding()
        for r in T.serial(4):
            row = r * 16 + tx // 8
            T.ptx_cp_async(T.access_ptr(buf[row, tx % 8 * 8], "w", 8),
                           T.access_ptr(X[row, tx % 8 * 8], "r", 8), 8, predicate=row < 60)
        T.cp_async_barrier_noinc(full)
        T.barrier_wait(full, 0)
        T.copy(buf, Y)


def test_rows_by_thread_interpreted():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float16)
    y = np.zeros_like(x)
    tlc.interpret(rows_by_thread, x, y)
    want = x.copy()
    want[60:] = 0
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_rows_by_thread_compiles(arch, tmp_path):
    ptxas.assemble(tlc.compile(rows_by_thread, target=arch).get_kernel_source(), arch, tmp_path)


@T.prim_func
def into_global(X: T.Tensor((64,), "float16"), Y: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=8):
        tx = T.get_thread_binding()
        T.ptx_cp_async(T.access_ptr(Y[tx * 8], "w", 8),  # E:global
                       T.access_ptr(X[tx * 8], "r", 8), 8)


@T.prim_func
def odd_bytes(X: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=8):
        s = T.alloc_shared((64,), "float16")
        tx = T.get_thread_binding()
        T.ptx_cp_async(T.access_ptr(s[tx * 8], "w"), T.access_ptr(X[tx * 8], "r"),
                       3)  # E:bytes


@T.prim_func
def past_extent(X: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=8):
        s = T.alloc_shared((64,), "float16")
        tx = T.get_thread_binding()
        T.ptx_cp_async(T.access_ptr(s[tx * 8], "w", 4),  # E:extent
                       T.access_ptr(X[tx * 8], "r", 8), 8)


@T.prim_func
def read_only(X: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=8):
        s = T.alloc_shared((64,), "float16")
        tx = T.get_thread_binding()
        T.ptx_cp_async(T.access_ptr(s[tx * 8], "r", 8),  # E:mode
                       T.access_ptr(X[tx * 8], "r", 8), 8)


@T.prim_func
def not_a_pointer(X: T.Tensor((64,), "float16")):
    with T.Kernel(1, threads=8):
        s = T.alloc_shared((64,), "float16")
        tx = T.get_thread_binding()
        T.ptx_cp_async(s, T.access_ptr(X[tx * 8], "r", 8), 8)  # E:pointer


@pytest.mark.parametrize("prim, marker, at, message", [
    (into_global, "global", "T.access_ptr",
     "T.ptx_cp_async copies global memory into shared memory: its destination is"),
    (odd_bytes, "bytes", "3", "T.ptx_cp_async moves 4, 8 or 16 bytes; 3 float16 elements are 6"),
    (past_extent, "extent", "T.access_ptr",
     "T.ptx_cp_async copies 8 elements, past the destination pointer's extent of 4"),
    (read_only, "mode", "T.access_ptr",
     "T.ptx_cp_async writes through its destination, a T.access_ptr made for reading only"),
    (not_a_pointer, "pointer", "s,", "T.ptx_cp_async's destination is a T.access_ptr"),
])
def test_mistakes_point_at_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(prim, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, at, message)


@T.prim_func
def staged_column_halves(X: T.Tensor((4, 32, 128), "float16"), Q: T.Tensor((64, 128), "float16"),
                         S: T.Tensor((4, 64, 32), "float32"), E: T.Tensor((4, 32, 128), "float16")):
    # TileLang's MLA-decode producer, shrunk: the threads copy each step's 32 x 128
    # tile into one stage of a two-stage buffer piece by piece, and two gemms read
    # the stage's column halves (`kv[stage, :, :64]`): the buffer is allocated as
    # one buffer per half, each element copy landing in its column's half.
    with T.Kernel(1, threads=128):
        kv = T.alloc_shared((2, 32, 128), "float16")
        q = T.alloc_shared((64, 128), "float16")
        s = T.alloc_fragment((64, 32), "float32")
        full = T.alloc_barrier([128, 128])
        tx = T.get_thread_binding()
        T.copy(Q, q)
        for step in T.serial(4):
            stage = step % 2
            for r in T.serial(4):
                piece = r * 128 + tx
                T.ptx_cp_async(T.access_ptr(kv[stage, piece // 16, piece % 16 * 8], "w", 8),
                               T.access_ptr(X[step, piece // 16, piece % 16 * 8], "r", 8), 8)
            T.cp_async_barrier_noinc(full[stage])
            T.barrier_wait(full[stage], (step // 2) % 2)
            T.clear(s)
            T.gemm(q[:, :64], kv[stage, :, :64], s, transpose_B=True)
            T.gemm(q[:, 64:], kv[stage, :, 64:], s, transpose_B=True)
            T.copy(s, S[step, :, :])
            for i, j in T.Parallel(32, 128):
                E[step, i, j] = kv[stage, i, j]


def test_staged_column_halves_interpreted():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 32, 128)).astype(np.float16)
    q = rng.standard_normal((64, 128)).astype(np.float16)
    s = np.zeros((4, 64, 32), np.float32)
    e = np.zeros_like(x)
    tlc.interpret(staged_column_halves, x, q, s, e)
    np.testing.assert_array_equal(e, x)
    ref = np.einsum("md,snd->smn", q.astype(np.float32), x.astype(np.float32))
    assert np.abs(s - ref).max() < 1e-2
    ir_text = str(staged_column_halves.build_module())
    # kv as two buffers of 2 x 32 x 64, each in two stages.
    assert ir_text.count("#tile.shared<stages = 2>") == 2 and "memref<2x32x64xf16" in ir_text


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_staged_column_halves_compiles(arch, tmp_path):
    ptx = tlc.compile(staged_column_halves, target=arch).get_kernel_source()
    assert ("wgmma.mma_async" in ptx) == (arch == "sm_90a")
    ptxas.assemble(ptx, arch, tmp_path)


@T.prim_func
def producer_warpgroup(X: T.Tensor((64, 64), "float16"), Y: T.Tensor((64, 64), "float16")):
    # Per-thread copies in a warpgroup body: its threads compute their own rows.
    with T.Kernel(1, threads=256):
        buf = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        tx = T.get_thread_binding()
        with T.ws(1):
            for r in T.serial(4):
                row = r * 16 + (tx - 128) // 8
                T.ptx_cp_async(T.access_ptr(buf[row, tx % 8 * 8], "w", 8),
                               T.access_ptr(X[row, tx % 8 * 8], "r", 8), 8)
            T.cp_async_barrier_noinc(full)
        with T.ws(0):
            T.barrier_wait(full, 0)
            T.copy(buf, Y)


@T.prim_func
def tile_work_on_a_thread_value(X: T.Tensor((64, 64), "float16"),
                                Y: T.Tensor((64, 128), "float16")):
    with T.Kernel(1, threads=256):
        f = T.alloc_fragment((128,), "float16")
        tx = T.get_thread_binding()
        with T.ws(1):
            T.fill(f, tx)  # E:divergent
            T.copy(f, Y[0, 0:128])


def test_per_thread_copies_in_a_warpgroup_body_interpreted():
    # The body's code runs per thread on its 128 lanes; its tile ops are its work.
    x = np.random.default_rng(2).standard_normal((64, 64)).astype(np.float16)
    y = np.zeros_like(x)
    tlc.interpret(producer_warpgroup, x, y)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_per_thread_copies_in_a_warpgroup_body_compile(arch, tmp_path):
    ptxas.assemble(tlc.compile(producer_warpgroup, target=arch).get_kernel_source(), arch,
                   tmp_path)
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(tile_work_on_a_thread_value, target=arch)
    assert_error_at(info.value, THIS, LINES, "divergent", "T.fill",
                    "reads a value that differs between the threads")


@T.prim_func
def staged_per_thread_producer(X: T.Tensor((6, 32, 64), "float16"),
                               Y: T.Tensor((6, 32, 64), "float16")):
    # A loop of T.ws bodies written for one stage, its producer copying thread by
    # thread: the tile its T.access_ptr writes is staged like a T.copy destination.
    with T.Kernel(1, threads=256):
        tile = T.alloc_shared((32, 64), "float16")
        loaded = T.alloc_barrier(128)
        consumed = T.alloc_barrier(128)
        tx = T.get_thread_binding()
        for k in T.Pipelined(6, num_stages=2):
            with T.ws(1):
                T.barrier_wait(consumed, (k + 1) % 2)
                for r in T.serial(2):
                    piece = r * 128 + tx - 128
                    T.ptx_cp_async(T.access_ptr(tile[piece // 8, piece % 8 * 8], "w", 8),
                                   T.access_ptr(X[k, piece // 8, piece % 8 * 8], "r", 8), 8)
                T.cp_async_barrier_noinc(loaded)
            with T.ws(0):
                T.barrier_wait(loaded, k % 2)
                T.copy(tile, Y[k, :, :])
                T.barrier_arrive(consumed)


def test_a_per_thread_producer_is_staged():
    assert "#tile.shared<stages = 2>" in str(staged_per_thread_producer.build_module())
    x = np.random.default_rng(3).standard_normal((6, 32, 64)).astype(np.float16)
    y = np.zeros_like(x)
    tlc.interpret(staged_per_thread_producer, x, y)
    np.testing.assert_array_equal(y, x)
