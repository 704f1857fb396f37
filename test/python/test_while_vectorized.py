"""`while` loops with run-time conditions and T.vectorized loops.

Each program compiles for sm_90a and sm_80 and runs in the interpreter
against numpy; mistakes are errors at the user's line (lines that must fail
end with a `# E:<name>` marker).
"""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.compiler import pipeline
from tlc.frontend.codegen import build_module
from marked_lines import assert_error_at
import marked_lines

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


# -- programs -----------------------------------------------------------------------------


@T.prim_func
def collatz_steps(A: T.Tensor((128,), "int32"), B: T.Tensor((128,), "int32")):
    """A `while` per T.Parallel iteration, its condition on a T.alloc_var the
    body updates (each iteration leaves the loop at its own time)."""
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            x = T.alloc_var("int32", init=A[i])
            steps = T.alloc_var("int32")
            while x > 1:
                if x % 2 == 0:
                    x = x // 2
                else:
                    x = 3 * x + 1
                steps += 1
            B[i] = steps


@T.prim_func
def repeat_accumulate(A: T.Tensor((64, 64), "float32"), n: T.int32,
                      B: T.Tensor((64, 64), "float32")):
    """Shared-memory copies and a T.Parallel inside a kernel-level `while`."""
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((64, 64), "float32")
        f = T.alloc_fragment((64, 64), "float32")
        k = T.alloc_var("int32")
        T.clear(f)
        while k < n:
            T.copy(A, s)
            for i, j in T.Parallel(64, 64):
                f[i, j] += s[i, j] * 0.5
            k += 1
        T.copy(f, B)


@T.prim_func
def gemm_rounds(A: T.Tensor((128, 256), "float16"), B: T.Tensor((256, 128), "float16"),
                n: T.int32, C: T.Tensor((128, 128), "float32")):
    """A pipelined gemm loop inside a `while`: C = n * A @ B."""
    with T.Kernel(1, threads=128):
        a_s = T.alloc_shared((128, 64), "float16")
        b_s = T.alloc_shared((64, 128), "float16")
        acc = T.alloc_fragment((128, 128), "float32")
        r = T.alloc_var("int32")
        T.clear(acc)
        while r < n:
            for k in T.Pipelined(4, num_stages=2):
                T.copy(A[0, k * 64], a_s)
                T.copy(B[k * 64, 0], b_s)
                T.gemm(a_s, b_s, acc)
            r += 1
        T.copy(acc, C)


@T.prim_func
def first_above(A: T.Tensor((256,), "float32"), limit: T.float32, B: T.Tensor((2,), "int32")):
    """A search whose condition reads a buffer element and a variable: the
    first index whose running sum passes `limit` (or 256)."""
    with T.Kernel(1, threads=32):
        s = T.alloc_shared((256,), "float32")
        T.copy(A, s)
        i = T.alloc_var("int32")
        total = T.alloc_var("float32")
        while i < 256 and total + s[T.min(i, 255)] <= limit:
            total += s[i]
            i += 1
        for k in T.Parallel(2):
            B[k] = i if k == 0 else T.cast(total, "int32")


@T.prim_func
def per_thread_while(A: T.Tensor((128,), "int32"), B: T.Tensor((128,), "int32")):
    """A kernel-level `while` whose condition differs per thread."""
    with T.Kernel(1, threads=128):
        tx = T.get_thread_binding()
        x = T.alloc_var("int32", init=A[tx])
        bits = T.alloc_var("int32")
        while x > 0:
            bits += x % 2
            x = x // 2
        B[tx] = bits


@T.prim_func
def scaled_rows(A: T.Tensor((64, 32), "float16"), B: T.Tensor((64, 32), "float16")):
    """T.vectorized inside T.Parallel, and the (start, stop) form."""
    with T.Kernel(1, threads=64):
        for i in T.Parallel(64):
            for v in T.vectorized(16):
                B[i, v] = A[i, v] * 2.0
            for v in T.vectorized(16, 32):
                B[i, v] = A[i, v] + 1.0


@T.prim_func
def per_thread_vectors(A: T.Tensor((1024,), "float16"), B: T.Tensor((1024,), "float16")):
    """Each thread loads 8 contiguous elements into registers and stores them doubled."""
    with T.Kernel(1, threads=128):
        tx = T.get_thread_binding()
        regs = T.alloc_local((8,), "float16")
        for v in T.vectorized(8):
            regs[v] = A[tx * 8 + v]
        for v in T.vectorized(8):
            B[tx * 8 + v] = regs[v] * 2.0


@T.prim_func
def drain(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    """The condition reads shared memory the body's T.Parallel writes: the
    compiler meets the block before each evaluation and each body."""
    with T.Kernel(1, threads=64):
        s = T.alloc_shared((64,), "float32")
        T.copy(A, s)
        while s[63] > 0:
            for j in T.Parallel(64):
                s[j] = s[j] - 1.0
        T.copy(s, B)


PROGRAMS = [collatz_steps, repeat_accumulate, gemm_rounds, first_above, per_thread_while,
            scaled_rows, per_thread_vectors, drain]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("prim", PROGRAMS, ids=lambda p: p.name)
def test_compiles(prim, arch):
    ptx = pipeline.compile_module(build_module(prim), arch).ptx[prim.name]
    assert f".target {arch}" in ptx


def test_while_ir_is_scf_while():
    text = str(build_module(repeat_accumulate))
    assert "scf.while" in text and "scf.condition" in text


def test_barriers_around_a_shared_condition():
    text = pipeline.compile_module(build_module(drain), "sm_80", stop_after="gpu",
                                   keep_ir=True).stages["gpu"]
    before, after = text.split("scf.while")[1].split("} do {")
    assert before.split("scf.condition")[0].count("gpu.barrier") == 1
    assert after.split("memref.load")[0].count("gpu.barrier") == 1
    a = np.arange(64, dtype=np.float32) * 0.5
    b = np.zeros(64, np.float32)
    tlc.interpret(drain, a, b)
    rounds = int(np.ceil(a[63]))
    np.testing.assert_array_equal(b, a - rounds)


def _collatz(x: int) -> int:
    steps = 0
    while x > 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


def test_while_per_parallel_iteration():
    a = np.arange(1, 129, dtype=np.int32)
    b = np.zeros(128, np.int32)
    tlc.interpret(collatz_steps, a, b)
    assert b.tolist() == [_collatz(int(x)) for x in a]


@pytest.mark.parametrize("n", [0, 3])
def test_while_around_copies(n):
    a = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    b = np.zeros((64, 64), np.float32)
    tlc.interpret(repeat_accumulate, a, n, b)
    ref = np.zeros_like(a)
    for _ in range(n):
        ref += a * np.float32(0.5)
    np.testing.assert_array_equal(b, ref)


def test_while_around_a_pipelined_gemm():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 256)).astype(np.float16)
    b = rng.standard_normal((256, 128)).astype(np.float16)
    c = np.zeros((128, 128), np.float32)
    tlc.interpret(gemm_rounds, a, b, 2, c)
    np.testing.assert_allclose(c, 2 * (a.astype(np.float32) @ b.astype(np.float32)),
                               rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("limit", [-1.0, 10.0, 1e9])
def test_while_condition_reads_buffer_and_variable(limit):
    a = np.abs(np.random.default_rng(2).standard_normal(256)).astype(np.float32)
    b = np.zeros(2, np.int32)
    tlc.interpret(first_above, a, limit, b)
    i, total = 0, np.float32(0)
    while i < 256 and total + a[min(i, 255)] <= limit:
        total = np.float32(total + a[i])
        i += 1
    assert b.tolist() == [i, int(total)]


def test_while_per_thread_condition():
    a = np.random.default_rng(3).integers(0, 2**20, 128).astype(np.int32)
    b = np.zeros(128, np.int32)
    tlc.interpret(per_thread_while, a, b)
    assert b.tolist() == [bin(int(x)).count("1") for x in a]


def test_vectorized_loops():
    a = np.random.default_rng(4).standard_normal((64, 32)).astype(np.float16)
    b = np.zeros_like(a)
    tlc.interpret(scaled_rows, a, b)
    np.testing.assert_array_equal(b[:, :16], a[:, :16] * np.float16(2))
    np.testing.assert_array_equal(b[:, 16:], a[:, 16:] + np.float16(1))
    x = np.random.default_rng(5).standard_normal(1024).astype(np.float16)
    y = np.zeros_like(x)
    tlc.interpret(per_thread_vectors, x, y)
    np.testing.assert_array_equal(y, x * np.float16(2))


def test_vectorized_is_unrolled():
    text = str(build_module(per_thread_vectors))
    assert "scf.for" not in text and text.count("memref.load %arg0") == 8


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_vectorized_accesses_become_vector_loads(target):
    """The eight unrolled fp16 accesses of each T.vectorized loop are one
    16-byte access: tensor parameters are 16-byte aligned (the runtime's
    contract, stated by tile-assume-param-alignment)."""
    ptx = tlc.compile(per_thread_vectors, target=target).get_kernel_source()
    assert "memref.assume_alignment" not in ptx
    assert ptx.count("ld.global.v4.b32") == 1 and "ld.global.b16" not in ptx
    assert ptx.count("st.global.v4.b32") == 1 and "st.global.b16" not in ptx


# -- mistakes ----------------------------------------------------------------------------


@T.prim_func
def constant_condition(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        while 1 < 2:  # E:constant
            pass


@T.prim_func
def break_in_parallel(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        i = T.alloc_var("int32")
        while i < 4:
            i += 1
            for j in T.Parallel(64):
                if A[j] > 0:
                    break  # E:break


@T.prim_func
def while_else(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        i = T.alloc_var("int32")
        while i < 4:
            i += 1
        else:
            i = 0  # E:else


@T.prim_func
def name_from_while(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        i = T.alloc_var("int32")
        while i < 4:
            i += 1
            last = i
        i = last  # E:after


@T.prim_func
def runtime_vector_extent(A: T.Tensor((64,), "float32"), n: T.int32):
    with T.Kernel(1):
        for i in T.Parallel(64):
            for v in T.vectorized(n):  # E:extent
                A[i] = 0.0


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


@pytest.mark.parametrize("prim,marker,at,message", [
    (constant_condition, "constant", "1 < 2", "a `while` needs a run-time condition"),
    (break_in_parallel, "break", "break", "`break` leaves only a `while` loop or a run-time "
                                          "T.serial / range loop (not T.Parallel"),
    (while_else, "else", "i = 0", "`while ... else` is not supported"),
    (name_from_while, "after", "last",
     "'last' was assigned inside a run-time loop (line"),
    (runtime_vector_extent, "extent", "n)", "T.vectorized needs compile-time integer bounds"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 16 and " " not in v else None)
def test_errors_point_at_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        prim.build_module()
    assert_error_at(info.value, THIS, LINES, marker, at, message)


@T.prim_func
def strided_in_parallel(A: T.Tensor((256,), "float32"), B: T.Tensor((16,), "float32")):
    """A T.serial loop whose start differs per T.Parallel iteration (the
    interpreter runs the n-th iteration of every lane together)."""
    with T.Kernel(1, threads=16):
        for i in T.Parallel(16):
            acc = T.alloc_var("float32")
            for k in T.serial(i, 256, 16):
                acc += A[k]
            B[i] = acc


def test_loop_bounds_per_parallel_iteration():
    a = np.random.default_rng(6).standard_normal(256).astype(np.float32)
    b = np.zeros(16, np.float32)
    tlc.interpret(strided_in_parallel, a, b)
    ref = [np.float32(0)] * 16
    for i in range(16):
        for k in range(i, 256, 16):
            ref[i] = np.float32(ref[i] + a[k])
    np.testing.assert_array_equal(b, np.array(ref, np.float32))
