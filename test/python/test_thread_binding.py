"""T.get_thread_binding and threads=(x, y, z): per-thread code in a kernel.

Each program compiles for sm_90a and sm_80 and runs in the interpreter (the
threads as lanes) against numpy; what tlc cannot compile yet is an error at
the user's line. Lines that must fail end with a `# E:<name>` marker.
"""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.compiler import pipeline
from tlc.frontend.codegen import build_module
from tlc.interpreter import InterpreterError
from marked_lines import assert_error_at
import marked_lines

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


# -- programs -----------------------------------------------------------------------------


@T.prim_func
def scale_2d(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
    """A 32 x 4 block: each thread one element, the first half of each warp
    row adding one (a run-time `if` on the thread index)."""
    with T.Kernel(2, threads=(32, 4)) as bx:
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(dim=1)
        acc = T.alloc_var("float32")
        i = bx * 128 + ty * 32 + tx
        acc = A[i] * 2.0
        if tx < 16:
            acc += 1.0
        B[i] = acc


@T.prim_func
def indices_3d(B: T.Tensor((3, 60), "int32")):
    """threads=(4, 3, 5): the three indices of each of the 60 threads, and
    dimension 2 of a 1-D block (0)."""
    with T.Kernel(1, threads=(4, 3, 5)):
        tx = T.get_thread_binding(0)
        ty = T.get_thread_binding(1)
        tz = T.get_thread_binding(2)
        linear = tx + 4 * (ty + 3 * tz)
        B[0, linear] = tx
        B[1, linear] = ty
        B[2, linear] = tz


@T.prim_func
def zero_dims(B: T.Tensor((64,), "int32")):
    with T.Kernel(1, threads=64):
        tx = T.get_thread_binding()
        B[tx] = T.get_thread_binding(1) + T.get_thread_binding(2) + tx


@T.prim_func
def reverse_shared(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    """Threads exchange values through shared memory (the compiler places
    the barriers between the reads and the writes)."""
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((128,), "float32")
        T.copy(A, s)
        tx = T.get_thread_binding()
        s[tx] = s[127 - tx] + 1.0
        B[tx] = s[tx]


@T.prim_func
def strided_sums(A: T.Tensor((1000,), "float32"), B: T.Tensor((128,), "float32")):
    """Per-thread loops whose bounds depend on the thread: thread t sums
    A[t], A[t + 128], ... and then its first t % 4 elements once more."""
    with T.Kernel(1, threads=128):
        tx = T.get_thread_binding()
        acc = T.alloc_var("float32")
        for k in T.serial(tx, 1000, 128):
            acc += A[k]
        for k in T.serial(tx % 4):
            acc += A[k]
        B[tx] = acc


@T.prim_func
def count_threads(C: T.Tensor((2,), "int32")):
    """An atomic add outside T.Parallel is done by every thread."""
    with T.Kernel(3, threads=64):
        tx = T.get_thread_binding()
        T.atomic_add(C[0], 1)
        if tx < 5:
            T.atomic_add(C[1], 1)


@T.prim_func
def keeps_register_across_parallel(A: T.Tensor((128,), "float32"),
                                   B: T.Tensor((128,), "float32"),
                                   C: T.Tensor((128,), "float32")):
    """A per-thread variable keeps its value across a T.Parallel that does
    not use it."""
    with T.Kernel(1, threads=128):
        tx = T.get_thread_binding()
        mine = T.alloc_var("float32")
        mine = A[tx] + 1.0
        for i in T.Parallel(128):
            C[i] = A[i] * 3.0
        B[tx] = mine


def gemv(n: int, k: int, block_n: int = 32, tile_k: int = 8):
    """y = W @ x, one row per thread, T.vectorized loads of each thread's K chunk."""

    @T.prim_func
    def gemv_rows(W: T.Tensor((n, k), "float16"), x: T.Tensor((k,), "float16"),
                  y: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, block_n), threads=block_n) as bn:
            tn = T.get_thread_binding()
            w_local = T.alloc_local((tile_k,), "float16")
            x_local = T.alloc_local((tile_k,), "float16")
            acc = T.alloc_var("float32")
            for kb in T.serial(k // tile_k):
                for v in T.vectorized(tile_k):
                    w_local[v] = W[bn * block_n + tn, kb * tile_k + v]
                    x_local[v] = x[kb * tile_k + v]
                for v in T.serial(tile_k):
                    acc += T.cast(w_local[v], "float32") * T.cast(x_local[v], "float32")
            y[bn * block_n + tn] = acc

    return gemv_rows


@T.prim_func
def mask_outside_windows(L: T.Tensor((4, 1000), "float32"), lo: T.Tensor((4,), "int32"),
                         hi: T.Tensor((4,), "int32")):
    """TVM's spelling, T.thread_binding (as an expression and as a loop), in a
    T.Pipelined loop with no copies (a plain loop: its body runs per thread)."""
    with T.Kernel(4, threads=(128, 2)) as row:
        tx = T.thread_binding(0, 128, thread="threadIdx.x")
        for ty in T.thread_binding(2, thread="threadIdx.y"):
            for c in T.Pipelined(T.ceildiv(1000, 256)):
                n = c * 256 + ty * 128 + tx
                if n < 1000:
                    if n < lo[row] or n >= hi[row]:
                        L[row, n] = -T.infinity("float32")


@T.prim_func
def binding_not_whole(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        tx = T.thread_binding(0, 32, thread="threadIdx.x")  # E:binding-extent
        A[tx] = 1.0


@T.prim_func
def binding_of_blocks(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        tx = T.thread_binding(0, 64, thread="blockIdx.x")  # E:binding-axis
        A[tx] = 1.0


@T.prim_func
def shared_under_if(A: T.Tensor((64,), "float32")):
    """Shared memory written by half the threads: barriers before the `if`
    (against the copy in) and after it (before the copy out), none inside."""
    with T.Kernel(1, threads=64):
        s = T.alloc_shared((64,), "float32")
        T.copy(A, s)
        tx = T.get_thread_binding()
        if tx < 32:
            s[tx] = s[tx + 32]
        T.copy(s, A)


@T.prim_func
def shared_in_thread_loop(A: T.Tensor((64,), "float32")):
    """A per-thread `while` over shared memory (thread f, f + 32)."""
    with T.Kernel(1, threads=32):
        s = T.alloc_shared((64,), "float32")
        f = T.alloc_var("int32", init=T.get_thread_binding())
        while f < 64:
            s[f] = A[f] * 2.0
            f += 32
        T.copy(s, A)


@T.prim_func
def split_k_gemv(A: T.Tensor((256,), "float16"), B: T.Tensor((64, 256), "float16"),
                 C: T.Tensor((64,), "float32")):
    """TileLang's split-K GEMV: a 32 x 4 block, each row's four threads adding
    their partial dot products into a shared slot one of them cleared."""
    with T.Kernel(2, threads=(32, 4)) as bn:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        acc = T.alloc_local((1,), "float32")
        c_s = T.alloc_shared((32,), "float32")
        if tk == 0:
            c_s[tn] = 0
        T.clear(acc)
        for k in T.serial(64):
            acc[0] += A[tk * 64 + k].astype("float32") * \
                B[bn * 32 + tn, tk * 64 + k].astype("float32")
        T.atomic_add(c_s[tn], acc[0])
        C[bn * 32 + tn] = c_s[tn]


PROGRAMS = [scale_2d, indices_3d, zero_dims, reverse_shared, strided_sums, count_threads,
            keeps_register_across_parallel, gemv(64, 64), mask_outside_windows, shared_under_if,
            shared_in_thread_loop, split_k_gemv]


def test_shared_memory_in_code_only_some_threads_run():
    a = np.arange(64, dtype=np.float32)
    tlc.interpret(shared_under_if, a)
    np.testing.assert_array_equal(a, np.r_[np.arange(32, 64), np.arange(32, 64)].astype(np.float32))
    b = np.arange(64, dtype=np.float32)
    tlc.interpret(shared_in_thread_loop, b)
    np.testing.assert_array_equal(b, np.arange(64, dtype=np.float32) * 2)


def test_split_k_gemv():
    rng = np.random.default_rng(4)
    a = rng.standard_normal(256).astype(np.float16)
    b = rng.standard_normal((64, 256)).astype(np.float16)
    c = np.zeros(64, np.float32)
    tlc.interpret(split_k_gemv, a, b, c)
    np.testing.assert_allclose(c, b.astype(np.float32) @ a.astype(np.float32), rtol=1e-4,
                               atol=1e-3)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_barriers_go_around_divergent_code(arch):
    """The optimized IR: the `if` on the thread index is marked, a barrier
    precedes it and one follows it, none is inside."""
    text = pipeline.compile_module(build_module(shared_under_if), arch,
                                   keep_ir=True).stages["optimized"]
    lines = [line.strip() for line in text.splitlines()]
    at = next(i for i, line in enumerate(lines) if line.startswith("scf.if"))
    assert "tile.divergent" in text
    end = next(i for i in range(at, len(lines)) if lines[i] == "}" or
               lines[i].startswith("} {tile.divergent"))
    assert "gpu.barrier" in lines[at - 1], lines[at - 3:at + 1]
    assert not any("gpu.barrier" in line for line in lines[at:end + 1])
    assert any("gpu.barrier" in line for line in lines[end + 1:end + 4]), lines[end:end + 4]


def test_thread_binding_masks_rows():
    rng = np.random.default_rng(3)
    l = rng.standard_normal((4, 1000)).astype(np.float32)
    lo = np.array([0, 10, 500, 999], np.int32)
    hi = np.array([1000, 20, 700, 1000], np.int32)
    want = l.copy()
    for r in range(4):
        want[r, :lo[r]] = -np.inf
        want[r, hi[r]:] = -np.inf
    tlc.interpret(mask_outside_windows, l, lo, hi)
    np.testing.assert_array_equal(l, want)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("prim", PROGRAMS, ids=lambda p: p.name)
def test_compiles(prim, arch):
    ptx = pipeline.compile_module(build_module(prim), arch).ptx[prim.name]
    assert f".target {arch}" in ptx and "%tid.x" in ptx


def test_thread_ids_from_two_dimensions():
    a = np.arange(256, dtype=np.float32)
    b = np.zeros(256, np.float32)
    tlc.interpret(scale_2d, a, b)
    np.testing.assert_array_equal(b, a * 2 + (np.arange(256) % 32 < 16))


def test_three_dimensions_x_fastest():
    b = np.full((3, 60), -1, np.int32)
    tlc.interpret(indices_3d, b)
    t = np.arange(60)
    np.testing.assert_array_equal(b, np.stack([t % 4, t // 4 % 3, t // 12]))
    z = np.full(64, -1, np.int32)
    tlc.interpret(zero_dims, z)
    np.testing.assert_array_equal(z, np.arange(64))


def test_threads_exchange_through_shared_memory():
    a = np.arange(128, dtype=np.float32)
    b = np.zeros(128, np.float32)
    tlc.interpret(reverse_shared, a, b)
    np.testing.assert_array_equal(b, a[::-1] + 1)


def test_loops_with_per_thread_bounds():
    a = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    b = np.zeros(128, np.float32)
    tlc.interpret(strided_sums, a, b)
    ref = np.zeros(128, np.float32)
    for t in range(128):
        acc = np.float32(0)
        for k in range(t, 1000, 128):
            acc = np.float32(acc + a[k])
        for k in range(t % 4):
            acc = np.float32(acc + a[k])
        ref[t] = acc
    np.testing.assert_array_equal(b, ref)


def test_atomic_add_outside_parallel_counts_every_thread():
    c = np.zeros(2, np.int32)
    tlc.interpret(count_threads, c)
    assert c.tolist() == [3 * 64, 3 * 5]


def test_per_thread_variable_survives_a_parallel_loop():
    a = np.arange(128, dtype=np.float32)
    b, c = np.zeros(128, np.float32), np.zeros(128, np.float32)
    tlc.interpret(keeps_register_across_parallel, a, b, c)
    np.testing.assert_array_equal(b, a + 1)
    np.testing.assert_array_equal(c, a * 3)


def test_gemv_with_vectorized_loads():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((64, 64)).astype(np.float16)
    x = rng.standard_normal(64).astype(np.float16)
    y = np.zeros(64, np.float32)
    tlc.interpret(gemv(64, 64), w, x, y)
    np.testing.assert_allclose(y, w.astype(np.float32) @ x.astype(np.float32), rtol=1e-5,
                               atol=1e-5)


# -- mistakes, and what tlc cannot compile yet ---------------------------------------------


@T.prim_func
def binding_in_parallel(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        for i in T.Parallel(64):
            A[i] = T.get_thread_binding()  # E:in-parallel


@T.prim_func
def bad_dim(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        t = T.get_thread_binding(3)  # E:dim
        A[t] = 0.0


@T.prim_func
def zero_threads(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=(0, 4)):  # E:zero
        pass


@T.prim_func
def too_many_threads(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=(64, 32)):  # E:too-many
        pass


@T.prim_func
def copy_under_if(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        s = T.alloc_shared((64,), "float32")
        if T.get_thread_binding() < 16:  # part of a warp (whole warps: their body)
            T.copy(A, s)  # E:copy-if


@T.prim_func
def copy_at_thread(A: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=64):
        s = T.alloc_shared((8, 64), "float32")
        tx = T.get_thread_binding()
        T.copy(A[tx, 0], s)  # E:copy-thread
        T.copy(s, A[0, 0])


@T.prim_func
def parallel_reads_thread_value(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        v = T.alloc_var("float32")
        v = T.cast(T.get_thread_binding(), "float32")
        for i in T.Parallel(64):  # E:parallel-value
            A[i] = v


@T.prim_func
def parallel_reads_thread_index(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        tx = T.get_thread_binding()
        for i in T.Parallel(64):  # E:parallel-index
            A[i] = tx + i


@T.prim_func
def global_store_without_binding(A: T.Tensor((64,), "float32")):
    # A plain statement runs in every thread (TileLang's semantics): each stores 1.0.
    with T.Kernel(1, threads=64):
        A[0] = 1.0


def test_a_global_store_every_thread_makes_alike(tmp_path):
    from ptxas import assemble

    a = np.zeros(64, np.float32)
    tlc.interpret(global_store_without_binding, a)
    assert a[0] == 1.0 and not a[1:].any()
    assemble(tlc.compile(global_store_without_binding, target="sm_90a").get_kernel_source(),
             "sm_90a", tmp_path)


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


@pytest.mark.parametrize("prim,marker,at,message", [
    (binding_in_parallel, "in-parallel", "T.get_thread_binding",
     "T.get_thread_binding is not valid inside T.Parallel"),
    (bad_dim, "dim", "3)", "T.get_thread_binding's dim is 0, 1 or 2, got 3"),
    (zero_threads, "zero", "threads=", "threads=(x, y, z) takes 1 to 3 positive integers"),
    (too_many_threads, "too-many", "threads=", "is 2048 threads per block; a block has at "
                                               "most 1024"),
    (copy_under_if, "copy-if", "T.copy", "T.copy is work of the whole block, but only some "
                                         "threads reach it here (the `if` at line"),
    (copy_at_thread, "copy-thread", "T.copy", "T.copy reads a value that differs between the "
                                              "threads"),
    (parallel_reads_thread_value, "parallel-value", "for",
     "T.Parallel reads a value that differs between the threads"),
    (parallel_reads_thread_index, "parallel-index", "for",
     "T.Parallel reads a value that differs between the threads"),
    (binding_not_whole, "binding-extent", "T.thread_binding",
     "T.thread_binding(0, 32) of threadIdx.x must cover the 64 threads T.Kernel gives that "
     "dimension: T.thread_binding(0, 64, thread='threadIdx.x')"),
    (binding_of_blocks, "binding-axis", "\"blockIdx.x\"",
     "T.thread_binding binds threadIdx.x, .y or .z, got 'blockIdx.x' (block indices are "
     "T.Kernel's)"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 16 and " " not in v else None)
def test_errors_point_at_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        prim.build_module()
    assert_error_at(info.value, THIS, LINES, marker, at, message)


def test_interpreter_catches_ir_written_by_hand():
    """Tile IR from a file gets the same checks at run time."""
    text = """
    func.func @f(%a: memref<64xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      tile.kernel blocks(%bx) in (%c1) threads = 64 {
        %s = tile.alloc_shared : memref<64xf32, #gpu.address_space<workgroup>>
        %t = gpu.thread_id x
        %p = arith.cmpi ult, %t, %c32 : index
        scf.if %p {
          tile.copy %a[%c0] [64] to %s[%c0] [64] : memref<64xf32> to """ \
        """memref<64xf32, #gpu.address_space<workgroup>>
        }
      }
      return
    }
    """
    with pytest.raises(InterpreterError, match="only some threads reach it"):
        tlc.interpret(text, np.zeros(64, np.float32))
