"""T.alloc_var: per-thread scalar variables read and assigned by name.

Each is a one-element local buffer: it compiles to a register (no local
memory in the PTX), the interpreter runs it with one copy per thread, and a
misuse is an error at the user's line. Lines that must fail end with a
`# E:<name>` marker.
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
def row_sum(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        acc = T.alloc_var("float32")
        for i in T.Parallel(128):
            acc = 0.0  # each thread's own copy, set per row
            for j in T.serial(64):
                acc += A[i, j]
            B[i] = acc


@T.prim_func
def compact_rows(A: T.Tensor((16, 32), "float32"), B: T.Tensor((16, 32), "float32"),
                 C: T.Tensor((16, 2), "int32")):
    """Per row: the positive values moved to the front (an int32 variable as
    the index they are stored at), and the counts of positives and others."""
    with T.Kernel(1, threads=16):
        pos = T.alloc_var("int32")
        other = T.alloc_var(T.int32, init=0)
        for i in T.Parallel(16):
            pos = 0
            other = 0
            for k in T.serial(32):
                if A[i, k] > 0:
                    B[i, pos] = A[i, k]
                    pos += 1
                else:
                    other = other + 1
            C[i, 0] = pos
            C[i, 1] = other


@T.prim_func
def uniform_scale(A: T.Tensor((64,), "float32"), W: T.Tensor((8,), "float32"), n: T.int32,
                  B: T.Tensor((64,), "float32")):
    """Variables outside T.Parallel: summed over a run-time loop, chosen by a
    run-time if/else, transformed (T.exp), then read in a T.Parallel."""
    with T.Kernel(1, threads=64):
        s = T.alloc_var("float32")
        sign = T.alloc_var("float32", init=0.5)
        for k in T.serial(n):
            s += W[k]
        if n > 3:
            sign = 1.0
        else:
            sign = -sign
        s = T.exp(s) * sign
        for i in T.Parallel(64):
            B[i] = A[i] * s


@T.prim_func
def conversions(A: T.Tensor((4,), "float32"), n: T.int32, O: T.Tensor((8,), "float32")):
    """Stores convert to the variable's dtype; init forms; bool; x[0]; read
    before any write."""
    with T.Kernel(1, threads=32):
        t = T.alloc_var("int32")  # never written: zero
        q = T.alloc_var("int32", 7)
        h = T.alloc_var("float16", A[0])
        b = T.alloc_var("bool", "local.var")
        r = T.alloc_var("float32", n, "local.var")
        u = T.alloc_var("uint8", scope="local.var", init=250)
        q = A[1]  # float32 -> int32: toward zero
        b = A[2]  # nonzero -> True
        r[0] += 0.5
        u += 10  # wraps
        for i in T.Parallel(8):
            O[i] = T.if_then_else(i == 0, t, T.if_then_else(i == 1, q, T.if_then_else(
                i == 2, h, T.if_then_else(i == 3, b, T.if_then_else(i == 4, r, u)))))


@T.prim_func
def tail_sum(A: T.Tensor((64,), "float32"), n: T.int32, B: T.Tensor((2,), "float32")):
    """An int32 variable (first value a run-time scalar) as a loop bound and
    as an index; `x.dtype` names a variable's dtype."""
    with T.Kernel(1, threads=32):
        s = T.alloc_shared((64,), "float32")
        T.copy(A, s)
        stop = T.alloc_var("int32", init=n)
        if stop > 64:
            stop = 64
        acc = T.alloc_var("float32")
        for k in T.serial(stop):
            acc += s[k]
        last = T.alloc_var(stop.dtype, stop - 1)
        for i in T.Parallel(2):
            B[i] = T.if_then_else(i == 0, acc, s[last])


@T.prim_func
def row_max(A: T.Tensor((16, 8), "float32"), B: T.Tensor((16,), "float32")):
    """A variable declared in a T.Parallel body: one per iteration."""
    with T.Kernel(1, threads=16):
        for i in T.Parallel(16):
            m = T.alloc_var("float32", init=A[i, 0])
            for k in T.serial(1, 8):
                m = T.max(m, A[i, k])
            B[i] = m


@T.prim_func
def last_row_value(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=16):
        last = T.alloc_var("float32")
        for i in T.Parallel(16):
            last = A[i]
        for i in T.Parallel(16):
            B[i] = last  # which iteration's value a thread holds depends on the layout


def gemm_steps(steps):
    """A pipelined GEMM that counts its steps in a variable and divides by it."""
    K = 32 * steps

    @T.prim_func
    def gemm_mean(A: T.Tensor((64, K), "float16"), B: T.Tensor((K, 64), "float16"),
                  C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_shared((64, 32), "float16")
            b = T.alloc_shared((32, 64), "float16")
            c = T.alloc_fragment((64, 64), "float32")
            count = T.alloc_var("int32")
            T.clear(c)
            for k in T.Pipelined(steps, num_stages=2):
                T.copy(A[0, k * 32], a)
                T.copy(B[k * 32, 0], b)
                T.gemm(a, b, c)
                count += 1
            for i, j in T.Parallel(64, 64):
                c[i, j] = c[i, j] / count
            T.copy(c, C)

    return gemm_mean


@T.prim_func
def old_spelling(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        acc = T.alloc_local((1,), "float32")
        for i in T.Parallel(128):
            acc[0] = 0.0
            for j in T.serial(64):
                acc[0] += A[i, j]
            B[i] = acc[0]


# -- the GPU code ---------------------------------------------------------------------------


# compact_rows: convert-gpu-to-nvvm would merge the blocks of an if/else whose
# ends differ only in the variable they update (`pos += 1` / `other += 1`), the
# merged block reaching the variable through a choice of two allocas that LLVM
# cannot promote; mem2reg right after convert-scf-to-cf promotes them first.


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("prim", [row_sum, uniform_scale, conversions, tail_sum, row_max,
                                  gemm_steps(4),
                                  compact_rows])
def test_variables_live_in_registers(prim, arch):
    compiled = pipeline.compile_module(build_module(prim), arch)
    ptx = compiled.ptx[prim.name]
    assert f".target {arch}" in ptx
    # convert-tile-to-gpu makes each variable an alloca; LLVM promotes it
    assert "ld.local" not in ptx and "st.local" not in ptx and ".local" not in ptx


def test_same_code_as_a_one_element_local_buffer():
    """A variable is a T.alloc_local((1,)) read and written at [0], plus the
    store of its first value where it is declared."""
    def gpu_ir(prim):
        compiled = pipeline.compile_module(build_module(prim), "sm_90a", stop_after="gpu",
                                           keep_ir=True)
        text = compiled.stages["gpu"]
        return text[text.index("gpu.module"):].replace(prim.name, "F")

    assert "tile.alloc_local : memref<1xf32, #tile.space<local>>" in str(build_module(row_sum))
    declared = "      memref.store %cst, %alloca[%c0] : memref<1xf32>\n"
    var_ir, local_ir = gpu_ir(row_sum), gpu_ir(old_spelling)
    assert var_ir.count("memref.alloca() {alignment = 16 : i64} : memref<1xf32>") == 1
    assert var_ir.count(declared) == 2 and local_ir.count(declared) == 1
    assert var_ir.replace(declared, "", 1) == local_ir


# -- values, in the interpreter -------------------------------------------------------------


def test_row_sum_accumulates_per_thread():
    a = np.random.default_rng(1).standard_normal((128, 64)).astype(np.float32)
    b = np.zeros(128, np.float32)
    tlc.interpret(row_sum, a, b)
    ref = np.zeros(128, np.float32)
    for j in range(64):
        ref = ref + a[:, j]
    np.testing.assert_array_equal(b, ref)
    c = np.zeros(128, np.float32)
    tlc.interpret(old_spelling, a, c)
    np.testing.assert_array_equal(c, b)


def test_integer_variable_as_index_under_if_else():
    a = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)
    b, c = np.zeros((16, 32), np.float32), np.zeros((16, 2), np.int32)
    tlc.interpret(compact_rows, a, b, c)
    for i in range(16):
        positives = a[i][a[i] > 0]
        assert c[i].tolist() == [len(positives), 32 - len(positives)]
        np.testing.assert_array_equal(b[i, :len(positives)], positives)
        assert not b[i, len(positives):].any()


@pytest.mark.parametrize("n", [2, 5])
def test_variables_across_loops_and_branches(n):
    a = np.arange(64, dtype=np.float32)
    w = np.linspace(0.1, 0.8, 8, dtype=np.float32)
    b = np.zeros(64, np.float32)
    tlc.interpret(uniform_scale, a, w, n, b)
    s = np.float32(0)
    for k in range(n):
        s = np.float32(s + w[k])
    scale = np.exp(s) * (1.0 if n > 3 else -0.5)
    np.testing.assert_allclose(b, a * np.float32(scale), rtol=1e-6)


def test_conversions_and_init_forms():
    o = np.zeros(8, np.float32)
    tlc.interpret(conversions, np.array([1 / 3, -2.7, 0.25, 0], np.float32), 4, o)
    assert o[:6].tolist() == [0.0, -2.0, float(np.float16(1 / 3)), 1.0, 4.5, 4.0]
    assert o[6:].tolist() == [4.0, 4.0]


def test_variable_declared_in_parallel_is_per_iteration():
    a = np.random.default_rng(5).standard_normal((16, 8)).astype(np.float32)
    b = np.zeros(16, np.float32)
    tlc.interpret(row_max, a, b)
    np.testing.assert_array_equal(b, a.max(axis=1))
    tile_ir = str(build_module(row_max))
    assert tile_ir.index("tile.alloc_local") < tile_ir.index("tile.parallel")


def test_each_thread_has_its_own_copy():
    """After a T.Parallel that leaves a different value in each thread's copy,
    reading the variable is reported (its value depends on the thread)."""
    with pytest.raises(InterpreterError) as info:
        tlc.interpret(last_row_value, np.arange(16, dtype=np.float32), np.zeros(16, np.float32))
    message = str(info.value)
    assert "reads local buffer 'last' (1 float32) at index [0]" in message, message
    assert "left holding a different value in each thread" in message, message
    line = next(n for n, text in enumerate(LINES, 1) if "B[i] = last  #" in text)
    assert message.startswith(f"{THIS}:{line}:"), message


@pytest.mark.parametrize("n,acc,last", [(10, 10, 9), (100, 64, 63)])
def test_integer_variable_as_loop_bound_and_index(n, acc, last):
    a = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    b = np.zeros(2, np.float32)
    tlc.interpret(tail_sum, a, n, b)
    ref = np.float32(0)
    for k in range(acc):
        ref = np.float32(ref + a[k])
    assert b.tolist() == [ref, a[last]]


def test_variable_in_a_pipelined_loop_under_jit_interpret():
    kernel = tlc.jit(gemm_steps, out_idx=[2], interpret=True)(4)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((64, 128)).astype(np.float16)
    b = rng.standard_normal((128, 64)).astype(np.float16)
    c = kernel(a, b)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32) / 4, rtol=1e-5,
                               atol=1e-5)


# -- mistakes -------------------------------------------------------------------------------


@T.prim_func
def assign_tile(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float32")
        x = T.alloc_var("float32")
        x = s  # E:tile


@T.prim_func
def slice_of_var(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float32")
        for i in T.Parallel(64):
            A[i] = x[0:1]  # E:slice


@T.prim_func
def copy_into_var(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float32")
        T.copy(A[0:1], x)  # E:copy


@T.prim_func
def index_past_var(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float32")
        x[1] = 2.0  # E:index


@T.prim_func
def unknown_dtype(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float13")  # E:dtype


@T.prim_func
def outside_kernel(A: T.Tensor((64,), "float32")):
    x = T.alloc_var("float32")  # E:outside
    with T.Kernel(1):
        pass


@T.prim_func
def bad_scope(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float32", scope="shared")  # E:scope


@T.prim_func
def init_twice(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float32", 1.0, init=2.0)  # E:twice


@T.prim_func
def too_many(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float32", 1.0, "local.var", "x")  # E:many


@T.prim_func
def float_into_int(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("int32")
        x = 1.5  # E:float


@T.prim_func
def declared_in_loop(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        for k in T.serial(4):
            x = T.alloc_var("float32")
        for i in T.Parallel(64):
            A[i] = x  # E:after-loop


@T.prim_func
def declared_again_in_loop(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float32")
        for k in T.serial(4):
            x = T.alloc_var("float32")  # E:again


@T.prim_func
def var_attribute(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.alloc_var("float32")
        y = x.shape  # E:attribute


@T.prim_func
def var_as_value(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        y = T.alloc_var("float32") * 2.0  # E:value


@T.prim_func
def var_as_argument(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        y = T.alloc_var("float32")
        y = T.exp(T.alloc_var("float32"))  # E:argument


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


@pytest.mark.parametrize("prim,marker,at,message", [
    (assign_tile, "tile", "x = s",
     "'x' is a T.alloc_var float32 scalar: assign it a value, not buffer 's'"),
    (slice_of_var, "slice", "x[0:1]", "'x' is a T.alloc_var scalar: it has no slices"),
    (copy_into_var, "copy", "x)",
     "a T.copy operand must be a buffer; 'x' is a T.alloc_var scalar"),
    (index_past_var, "index", "1]", "index 1 is outside dimension 0 of 'x' (shape [1], local)"),
    (unknown_dtype, "dtype", '"float13"', "float13"),
    (outside_kernel, "outside", "T.alloc_var",
     "T.alloc_var must be inside `with T.Kernel(...)`"),
    (bad_scope, "scope", '"shared"', "T.alloc_var takes scope 'local.var', got 'shared'"),
    (init_twice, "twice", "1.0", "T.alloc_var got 'init' twice"),
    (too_many, "many", '"x"', "T.alloc_var takes at most 3 positional arguments"),
    (float_into_int, "float", "x = 1.5", "cannot use the float 1.5 as a int32 value"),
    (declared_in_loop, "after-loop", "x  #",
     "'x' is a T.alloc_var declared inside a run-time loop (line"),
    (declared_again_in_loop, "again", "x =",
     "'x' is a T.alloc_var declared outside this run-time loop (line"),
    (var_attribute, "attribute", "x.shape",
     "'x' is a T.alloc_var scalar: it has .dtype, not .shape"),
    (var_as_value, "value", "T.alloc_var",
     "cannot compute a T.alloc_var declaration (not a value: assign it to a name"),
    (var_as_argument, "argument", "T.exp", "got a T.alloc_var declaration (not a value"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 12 and " " not in v else None)
def test_mistakes_point_at_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        prim.build_module()
    assert_error_at(info.value, THIS, LINES, marker, at, message)
    assert "tlc cannot compile this" not in str(info.value), str(info.value)


# -- .tile files and the tlc command ----------------------------------------------------------

RUNNING_SUM = '''
N = 256

@T.prim_func
def running_sum(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
    with T.Kernel(1, threads=32):
        s = T.alloc_shared((N,), "float32")
        T.copy(A, s)
        total = T.alloc_var("float32")
        for i in T.serial(N):
            total += s[i]
            s[i] = total
        T.copy(s, B)
'''


def test_tile_file_compiles_and_runs(tmp_path, capsys):
    from tlc.cli import main

    path = tmp_path / "running_sum.tile"
    path.write_text(RUNNING_SUM)
    assert main([str(path), "--arch", "sm_80", "-o", str(tmp_path / "k.ptx")]) == 0
    ptx = (tmp_path / "k.ptx").read_text()
    assert ".entry running_sum(" in ptx and ".local" not in ptx
    assert main(["run", str(path), "-D", "N=64", "--save", str(tmp_path / "o.npz")]) == 0
    assert "interpreted running_sum" in capsys.readouterr().out
    saved = np.load(tmp_path / "o.npz")
    ref, total = [], np.float32(0)
    for x in saved["A"]:
        total = np.float32(total + x)
        ref.append(total)
    np.testing.assert_array_equal(saved["B"], np.array(ref, np.float32))
    assert saved["B"].shape == (64,)


@T.prim_func
def slice_at_a_variable(X: T.Tensor((64, 16), "float32"), sizes: T.Tensor((4,), "int32"),
                        Y: T.Tensor((8, 16), "float32")):
    # TileLang's grouped fp8 cast: a group's rows start at the sum of the
    # sizes before it, a T.alloc_var read by both bounds of the slice.
    with T.Kernel(1, threads=128):
        off = T.alloc_var("int32")
        f = T.alloc_fragment((8, 16), "float32")
        off = 0
        for i in T.serial(3):
            off += sizes[i]
        T.copy(X[off:off + 8, 0:16], f)
        T.copy(f, Y)


def test_slice_bounds_share_the_variable_read():
    x = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    sizes = np.array([3, 10, 7, 1], np.int32)
    y = np.zeros((8, 16), np.float32)
    tlc.interpret(slice_at_a_variable, x, sizes, y)
    np.testing.assert_array_equal(y, x[20:28])
    text = str(slice_at_a_variable.build_module())
    assert "[8, 16]" in text  # the copy's extent is known


@T.prim_func
def clear_a_variable(X: T.Tensor((4,), "float32"), Y: T.Tensor((2,), "float32")):
    # TileLang's MLA decode clears its log-sum-exp scalar with T.clear.
    with T.Kernel(1, threads=32):
        total = T.alloc_var("float32")
        best = T.alloc_var("float32")
        T.clear(total)
        T.fill(best, -1.0)
        for i in T.serial(4):
            total += X[i]
            best = T.max(best, X[i])
        t = T.get_thread_binding()
        if t == 0:
            Y[0] = total
            Y[1] = best


def test_clear_and_fill_of_a_variable():
    x = np.array([0.5, -3.0, 2.0, -4.0], np.float32)
    y = np.zeros(2, np.float32)
    tlc.interpret(clear_a_variable, x, y)
    np.testing.assert_array_equal(y, [x.sum(), 2.0])
