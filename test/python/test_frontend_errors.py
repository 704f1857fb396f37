"""User mistakes in a @T.prim_func: each is a tlc.CompilationError that points
at the offending line of this file (file, line, column), says what was
expected, shows the source line with a caret, and carries no Python traceback
or MLIR operation dump.

The offending line of each program ends with a `# E:<name>` marker; the tests
find its line number from the marker.
"""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.frontend.prim_func import prim_func
import marked_lines

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()

M = T.dynamic("M")


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


def col_of(line: int, text: str) -> int:
    """The 1-based column of `text` in a line of this file."""
    col = LINES[line - 1].find(text)
    assert col >= 0, (line, text)
    return col + 1


def check_error(error: tlc.CompilationError, marker: str, at: str, *message: str):
    """The error points at the marked line, at the column of `at`, and says `message`."""
    line = line_of(marker)
    loc = error.location
    assert loc is not None, str(error)
    assert (loc.file, loc.line, loc.col) == (THIS, line, col_of(line, at)), str(error)
    text = str(error)
    for part in message:
        assert part in text, text
    first = text.splitlines()[0]
    assert first.startswith(f"{THIS}:{line}:{col_of(line, at)}: error: "), first
    # the source line, then a caret under the column
    lines = text.splitlines()
    assert lines[1] == "  " + LINES[line - 1], text
    assert lines[2] == "  " + " " * (col_of(line, at) - 1) + "^", text
    assert "Traceback" not in text and "see current operation" not in text, text
    assert "tlc cannot compile this" not in text, text  # not the catch-all


def build_error(prim) -> tlc.CompilationError:
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    return e.value


# -- names --------------------------------------------------------------------------------


@T.prim_func
def unknown_t_name(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        T.copyy(A[0], f)  # E:unknown-T


def test_unknown_t_name():
    check_error(build_error(unknown_t_name), "unknown-T", "T.copyy",
                "T.copyy is not part of the tile language")


@T.prim_func
def unknown_name(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        T.copy(A[0], g)  # E:unknown-name


def test_unknown_name():
    check_error(build_error(unknown_name), "unknown-name", "g)", "name 'g' is not defined")


# -- intrinsic arguments ------------------------------------------------------------------


@T.prim_func
def fill_missing(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        T.fill(f)  # E:fill-missing


@T.prim_func
def clear_too_many(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        T.clear(f, 0, 1)  # E:clear-many


@T.prim_func
def copy_keyword(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        T.copy(A[0], f, mask=True)  # E:copy-kw


@T.prim_func
def exp_two_args(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        for i in T.Parallel(64):
            f[i] = T.exp(f[i], 2.0)  # E:exp-two


@T.prim_func
def gemm_twice(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        a = T.alloc_shared((64, 32), "float16")
        b = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.gemm(a, b, c, False, transpose_A=True)  # E:gemm-twice


@T.prim_func
def bad_dtype(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "floaty")  # E:bad-dtype


@T.prim_func
def bad_policy(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        a = T.alloc_shared((64, 32), "float16")
        b = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.gemm(a, b, c, policy="square")  # E:bad-policy


@T.prim_func
def bad_reduce_dim(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        s = T.alloc_fragment((64, 32), "float32")
        r = T.alloc_fragment((64,), "float32")
        T.reduce_max(s, r, dim=2)  # E:reduce-dim


@T.prim_func
def bad_swizzle_order(A: T.Tensor((64,), "float32")):
    with T.Kernel(4, 4):
        T.use_swizzle(4, order="diagonal")  # E:swizzle-order


BLOCKS = 4


@T.prim_func
def star_of_a_number(A: T.Tensor((64,), "float32")):
    with T.Kernel(*BLOCKS, threads=32):  # E:star-number
        T.fill(A, 0)


@T.prim_func
def star_of_too_many(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=32):
        T.clear(A, *(0, 1))  # E:star-many


@pytest.mark.parametrize("prim,marker,at,message", [
    (star_of_a_number, "star-number", "*BLOCKS", "`*` here unpacks a tuple or list, got 4"),
    (star_of_too_many, "star-many", "T.clear", "T.clear takes at most 2 arguments, got 3"),
    (fill_missing, "fill-missing", "T.fill", "T.fill is missing 'value'"),
    (clear_too_many, "clear-many", "T.clear", "T.clear takes at most 2 arguments, got 3"),
    (copy_keyword, "copy-kw", "mask=", "T.copy has no parameter 'mask' (parameters: src, dst"),
    (exp_two_args, "exp-two", "T.exp", "T.exp takes at most 1 arguments, got 2"),
    (gemm_twice, "gemm-twice", "transpose_A=", "T.gemm got 'transpose_A' twice"),
    (bad_dtype, "bad-dtype", '"floaty"', "unknown dtype 'floaty'"),
    (bad_policy, "bad-policy", '"square"', "policy must be a T.GemmWarpPolicy, got 'square'"),
    (bad_reduce_dim, "reduce-dim", "2)", "dim 2 is out of range for the 2-d 's'"),
    (bad_swizzle_order, "swizzle-order", '"diagonal"', 'order must be "row" or "col"'),
], ids=lambda v: v if isinstance(v, str) and "-" in v else None)
def test_intrinsic_arguments(prim, marker, at, message):
    check_error(build_error(prim), marker, at, message)


# -- T.copy -----------------------------------------------------------------------------------


@T.prim_func
def copy_shape_mismatch(A: T.Tensor((128, 128), "float16")):
    with T.Kernel(1):
        s = T.alloc_shared((64, 32), "float16")
        f = T.alloc_fragment((32, 64), "float32")
        T.copy(s, f)  # E:copy-shape


@T.prim_func
def copy_slice_mismatch(A: T.Tensor((2, 128, 8, 64), "float16")):
    with T.Kernel(1):
        s = T.alloc_shared((64, 64), "float16")
        T.copy(A[0, 0:32, 1, :], s)  # E:copy-slice


@T.prim_func
def copy_dynamic_slice(A: T.Tensor((128, 128), "float16"), n: T.int32):
    with T.Kernel(2) as bx:
        s = T.alloc_shared((64, 64), "float16")
        T.copy(A[bx * 64:n, 0:64], s)  # E:copy-dyn-slice


@T.prim_func
def copy_rank(A: T.Tensor((128, 128), "float16")):
    with T.Kernel(1):
        s = T.alloc_shared((64, 64), "float16")
        T.copy(A[0, 0, 0], s)  # E:copy-rank


@T.prim_func
def copy_in_parallel(A: T.Tensor((128,), "float16")):
    with T.Kernel(1):
        s = T.alloc_shared((64,), "float16")
        for i in T.Parallel(64):
            T.copy(A[0], s)  # E:copy-parallel


@pytest.mark.parametrize("prim,marker,at,message", [
    (copy_shape_mismatch, "copy-shape", "T.copy",
     "T.copy shapes differ: source region 64x32 vs destination region 32x64"),
    (copy_slice_mismatch, "copy-slice", "T.copy",
     "T.copy shapes differ: source region 1x32x1x64 vs destination region 64x64"),
    (copy_dynamic_slice, "copy-dyn-slice", "bx * 64:n",
     "the extent of this slice of 'A' must be a compile-time constant"),
    (copy_rank, "copy-rank", "A[0, 0, 0]", "'A' has 2 dimension(s) but the region names 3"),
    (copy_in_parallel, "copy-parallel", "T.copy", "T.copy cannot be inside T.Parallel"),
], ids=lambda v: v if isinstance(v, str) and "-" in v else None)
def test_copy_errors(prim, marker, at, message):
    check_error(build_error(prim), marker, at, message)


# -- element access -------------------------------------------------------------------------


@T.prim_func
def global_store_outside_parallel(A: T.Tensor((64,), "float32")):
    # Every thread runs a plain statement (as in TileLang): A[1] = 1.0 is every
    # thread storing 1.0; here each stores its own index, a race.
    with T.Kernel(1, threads=128):
        tx = T.get_thread_binding()
        A[1] = 1.0
        A[0] = T.float32(tx)  # E:global-store


@T.prim_func
def accumulator_read_outside_parallel(A: T.Tensor((64, 64), "float16"),
                                      B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        first = T.alloc_var("float32")
        T.copy(A, a)
        T.gemm(a, a, acc, clear_accum=True)
        first = acc[0, 0]  # E:fragment-read
        for i in T.Parallel(64):
            B[i] = first


@T.prim_func
def reduced_write_outside_parallel(A: T.Tensor((64, 64), "float32"),
                                   B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((64, 64), "float32")
        rows = T.alloc_fragment((64,), "float32")
        T.copy(A, f)
        T.reduce_sum(f, rows, dim=1)
        rows[0] = 1.0  # E:fragment-write
        T.copy(rows, B)


@T.prim_func
def wrong_index_count(A: T.Tensor((64, 64), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64, 64), "float32")
        for i in T.Parallel(64):
            f[i] = 0.0  # E:index-count


@T.prim_func
def float_index(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        for i in T.Parallel(64):
            f[i] = A[f[i]]  # E:float-index


@pytest.mark.parametrize("prim,marker,at,message", [
    (global_store_outside_parallel, "global-store", "A[0]",
     "every thread stores to this global element (the index is the same for all), each a "
     "value that differs between the threads"),
    (wrong_index_count, "index-count", "f[i]", "'f' has 2 dimension(s) but is indexed with 1"),
    (float_index, "float-index", "f[i]]", "an index must be an integer, got a run-time float32"),
], ids=lambda v: v if isinstance(v, str) and "-" in v else None)
def test_element_access_errors(prim, marker, at, message):
    check_error(build_error(prim), marker, at, message)


# A fragment's element outside T.Parallel is every thread's own copy: fine for a fragment every
# thread holds whole, an error for one the threads share out (a gemm's accumulator, a reduction's
# rows), reported at the access when the kernel is compiled.
@pytest.mark.parametrize("prim,marker,at", [
    (accumulator_read_outside_parallel, "fragment-read", "acc[0, 0]"),
    (reduced_write_outside_parallel, "fragment-write", "rows[0]"),
], ids=["read", "write"])
def test_spread_fragment_element_outside_parallel(prim, marker, at):
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(prim, target="sm_90a")
    check_error(e.value, marker, at,
                "an element of a fragment outside T.Parallel, where every thread runs it on its "
                "own copy, but the fragment is spread over the threads")


# -- constants where needed ---------------------------------------------------------------------


@T.prim_func
def dynamic_parallel_extent(A: T.Tensor((M,), "float32")):
    with T.Kernel(1):
        for i in T.Parallel(M):  # E:parallel-extent
            A[i] = 0.0


@T.prim_func
def dynamic_alloc_shape(A: T.Tensor((M,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((M, 4), "float32")  # E:alloc-shape


@T.prim_func
def float_alloc_shape(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_shared((64 / 2,), "float32")  # E:alloc-float


@T.prim_func
def dynamic_num_stages(A: T.Tensor((M,), "float32"), n: T.int32):
    with T.Kernel(1):
        for k in T.Pipelined(4, num_stages=n):  # E:num-stages
            pass


@T.prim_func
def float_loop_bound(A: T.Tensor((64,), "float32"), x: T.float32):
    with T.Kernel(1):
        for k in T.Pipelined(x):  # E:float-bound
            pass


@T.prim_func
def float_grid(A: T.Tensor((64,), "float32")):
    with T.Kernel(64 / 8):  # E:float-grid
        pass


@pytest.mark.parametrize("prim,marker,at,message", [
    (dynamic_parallel_extent, "parallel-extent", "M)",
     "a T.Parallel extent must be a compile-time integer, got a run-time index"),
    (dynamic_alloc_shape, "alloc-shape", "(M, 4)",
     "a fragment buffer needs a static shape of positive ints, got (a run-time index, 4)"),
    (float_alloc_shape, "alloc-float", "(64 / 2,)",
     "a shared buffer needs a static shape of positive ints, got (32.0,)"),
    (dynamic_num_stages, "num-stages", "n)",
     "num_stages must be a compile-time integer, got a run-time int32 value"),
    (float_loop_bound, "float-bound", "x)",
     "a bound of T.Pipelined must be an integer, got a run-time float32 value"),
    (float_grid, "float-grid", "64 / 8", "a grid size must be an integer, got 8.0"),
], ids=lambda v: v if isinstance(v, str) and "-" in v else None)
def test_constant_needed(prim, marker, at, message):
    check_error(build_error(prim), marker, at, message)


# -- values and run-time control flow ----------------------------------------------------------


@T.prim_func
def name_from_runtime_if(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        acc = T.alloc_local((1,), "float32")
        if A[0] > 0:
            x = 2.0
        acc[0] = x  # E:if-name


@T.prim_func
def stale_name_after_runtime_if(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        acc = T.alloc_local((1,), "float32")
        x = 1.0
        if A[0] > 0:
            x = 2.0
        acc[0] = x  # E:if-stale


@T.prim_func
def loop_carried_name(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        acc = T.alloc_local((1,), "float32")
        s = 0.0
        for k in T.serial(64):
            s += A[k]  # E:loop-carried
        acc[0] = s


@T.prim_func
def loop_var_after_loop(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        acc = T.alloc_local((1,), "float32")
        for k in T.serial(64):
            acc[0] += A[k]
        acc[0] = k  # E:loop-var


@T.prim_func
def buffer_condition(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        if A:  # E:buffer-cond
            pass


@pytest.mark.parametrize("prim,marker,at,messages", [
    (name_from_runtime_if, "if-name", "x ",
     ("'x' was assigned inside a run-time `if` (line", "`a if cond else b` (T.if_then_else)",
      "store into a T.alloc_var declared before it")),
    (stale_name_after_runtime_if, "if-stale", "x ", ("'x' was assigned inside a run-time `if`",)),
    (loop_carried_name, "loop-carried", "s +=",
     ("'s' is defined outside this run-time loop", "keep the value in a T.alloc_var")),
    (loop_var_after_loop, "loop-var", "k ", ("'k' is the variable of the run-time loop at line",)),
    (buffer_condition, "buffer-cond", "A:",
     ("an `if` needs a compile-time or boolean condition, got buffer 'A'",)),
], ids=lambda v: v if isinstance(v, str) and "-" in v else None)
def test_runtime_values_do_not_flow(prim, marker, at, messages):
    check_error(build_error(prim), marker, at, *messages)


def test_runtime_if_line_is_named():
    e = build_error(name_from_runtime_if)
    assert f"(line {line_of('if-name') - 2})" in str(e)


# -- T.Kernel -------------------------------------------------------------------------------


@T.prim_func
def too_many_threads(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=2048):  # E:threads-big
        pass


@T.prim_func
def zero_threads(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=0):  # E:threads-zero
        pass


@T.prim_func
def four_grid_dims(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, 2, 3, 4):  # E:grid-4
        pass


@T.prim_func
def wrong_block_names(A: T.Tensor((64,), "float32")):
    with T.Kernel(4, 4) as (bx, by, bz):  # E:block-names
        pass


@T.prim_func
def nested_kernel(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        with T.Kernel(1):  # E:nested-kernel
            pass


@T.prim_func
def after_kernel(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        pass
    for i in T.Parallel(64):  # E:after-kernel
        A[i] = 0.0


@T.prim_func
def alloc_before_kernel(A: T.Tensor((64,), "float32")):
    f = T.alloc_fragment((64,), "float32")  # E:before-kernel
    with T.Kernel(1):
        pass


@T.prim_func
def kernel_keyword(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, thread=64):  # E:kernel-kw
        pass


@T.prim_func
def no_kernel(A: T.Tensor((64,), "float32")):  # E:no-kernel
    f = 1


@pytest.mark.parametrize("prim,marker,at,message", [
    (too_many_threads, "threads-big", "threads=",
     "threads must be an integer in [1, 1024], got 2048"),
    (zero_threads, "threads-zero", "threads=", "threads must be an integer in [1, 1024], got 0"),
    (four_grid_dims, "grid-4", "T.Kernel", "T.Kernel takes 1 to 3 grid sizes, got 4"),
    (wrong_block_names, "block-names", "(bx, by, bz)",
     "T.Kernel with 2 grid size(s) gives 2 block indices"),
    (nested_kernel, "nested-kernel", "T.Kernel", "T.Kernel cannot be nested in another T.Kernel"),
    (after_kernel, "after-kernel", "for", "T.Parallel must be inside `with T.Kernel(...)`"),
    (alloc_before_kernel, "before-kernel", "T.alloc_fragment",
     "T.alloc_fragment must be inside `with T.Kernel(...)`"),
    (kernel_keyword, "kernel-kw", "thread=", "T.Kernel has no parameter 'thread'"),
    (no_kernel, "no-kernel", "def", "'no_kernel' has no `with T.Kernel(...)`"),
], ids=lambda v: v if isinstance(v, str) and "-" in v else None)
def test_kernel_errors(prim, marker, at, message):
    check_error(build_error(prim), marker, at, message)


# -- statements ------------------------------------------------------------------------------


@T.prim_func
def while_loop(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        while True:  # E:while
            pass


@T.prim_func
def for_else(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        acc = T.alloc_local((1,), "float32")
        for k in T.serial(4):
            acc[0] = 1.0
        else:
            acc[0] = 2.0  # E:for-else


@T.prim_func
def early_return(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        return  # E:early-return


@T.prim_func
def return_value(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        pass
    return A  # E:return-value


@T.prim_func
def bare_expression(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        A  # E:bare-expr


@T.prim_func
def other_with(A: T.Tensor((64,), "float32")):
    with open("x"):  # E:other-with
        pass


@T.prim_func
def lambda_on_a_runtime_value(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        double = lambda x: x * 2  # noqa: E731 (a helper of the body's, built in place)
        for i in T.Parallel(64):
            f[i] = double(A[i])
        T.copy(f, B)


def test_a_lambda_of_the_body_on_run_time_values():
    a = np.arange(64, dtype=np.float32)
    b = np.zeros(64, np.float32)
    tlc.interpret(lambda_on_a_runtime_value, a, b)
    np.testing.assert_array_equal(b, 2 * a)


@T.prim_func
def runtime_python_call(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        f = T.alloc_fragment((64,), "float32")
        for i in T.Parallel(64):
            f[i] = float(A[i])  # E:python-call


@T.prim_func
def parallel_as_expression(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        x = T.Parallel(4)  # E:parallel-expr


@T.prim_func
def missing_annotation(A):  # E:no-annotation
    with T.Kernel(1):
        pass


@T.prim_func
def default_value(A: T.Tensor((64,), "float32"), n: T.int32 = 4):  # E:default-value
    with T.Kernel(1):
        pass


@pytest.mark.parametrize("prim,marker,at,message", [
    (default_value, "default-value", "4)", "prim_func parameters cannot have default values"),
    (while_loop, "while", "True", "a `while` needs a run-time condition"),
    (for_else, "for-else", "acc[0] = 2.0", "`for ... else` is not supported"),
    (early_return, "early-return", "return", "`return` may only end a prim_func"),
    (return_value, "return-value", "return", "a prim_func returns nothing"),
    (bare_expression, "bare-expr", "A ", "an expression statement must be a call"),
    (other_with, "other-with", "open(",
     "the only `with` blocks in a prim_func are `with T.Kernel(...) as ...:` and "
     "`with T.ws(...):`"),
    (runtime_python_call, "python-call", "float(",
     "'float' is ordinary Python: it runs at compile time and cannot take run-time values"),
    (parallel_as_expression, "parallel-expr", "T.Parallel(4)",
     "T.Parallel is used as `for i, j in T.Parallel(...):`"),
    (missing_annotation, "no-annotation", "A)", "parameter 'A' needs an annotation"),
], ids=lambda v: v if isinstance(v, str) and "-" in v else None)
def test_statement_errors(prim, marker, at, message):
    check_error(build_error(prim), marker, at, message)


# -- errors from MLIR and from the compiler --------------------------------------------------


@T.prim_func
def gemm_k_mismatch(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        a = T.alloc_shared((64, 32), "float16")
        b = T.alloc_shared((16, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.gemm(a, b,  # E:gemm-k
               c)


def test_verifier_error_at_the_gemm_line():
    # building verifies: the error surfaces whatever is done with the IR
    check_error(build_error(gemm_k_mismatch), "gemm-k", "T.gemm",
                "'tile.gemm' op A has K = 32 but B has K = 16")
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(gemm_k_mismatch)
    check_error(e.value, "gemm-k", "T.gemm", "A has K = 32 but B has K = 16")


@T.prim_func
def shared_over_budget(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):  # E:smem-kernel
        a = T.alloc_shared((256, 256), "float16")  # E:smem-a
        b = T.alloc_shared((256, 256), "float16")
        T.clear(a)
        T.clear(b)
        T.copy(a, b)  # both in use at once: they cannot share bytes


def test_shared_memory_over_budget():
    shared_over_budget.build_module()  # the IR is valid; only the budget is exceeded
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(shared_over_budget)
    check_error(e.value, "smem-kernel", "T.Kernel",
                "the kernel needs 262144 bytes of shared memory but the target allows "
                "232448 per block")
    note = e.value.diagnostics[0].notes[0]
    assert note.severity == "note" and "131072 bytes for this" in note.message
    assert (note.location.file, note.location.line) == (THIS, line_of("smem-a"))
    assert f"{THIS}:{line_of('smem-a')}:13: note: 131072 bytes" in str(e.value)
    # sm_80 allows less: the same program with a smaller second buffer
    with pytest.raises(tlc.CompilationError, match="allows 166912 per block"):
        tlc.compile(shared_over_budget, target="sm_80")


@T.prim_func
def shared_unused(A: T.Tensor((64, 512), "float16"), B: T.Tensor((64, 512), "float16")):
    with T.Kernel(1, threads=128):
        T.alloc_shared((200, 512), "float16")  # allocated, never used: 204800 bytes
        a = T.alloc_shared((64, 512), "float16")
        T.copy(A, a)
        T.copy(a, B)


def test_unused_shared_buffer_takes_no_bytes():
    # A buffer nothing reads or writes (say, one used only on a compile-time branch not
    # taken) is dropped by the frontend instead of pushing the kernel over the budget.
    assert shared_unused.script().count("tile.alloc_shared") == 1
    assert tlc.compile(shared_unused, target="sm_90a").artifact["shared_bytes"] == 65536


def test_gemm_compiles_or_names_its_line():
    @T.prim_func
    def gemm_ok(A: T.Tensor((64, 32), "float16")):
        with T.Kernel(1):
            a = T.alloc_shared((64, 32), "float16")
            b = T.alloc_shared((32, 64), "float16")
            c = T.alloc_fragment((64, 64), "float32")
            T.gemm(a, b, c)  # E:gemm-unlowered

    gemm_ok.build_module()
    try:
        kernel = tlc.compile(gemm_ok)
    except tlc.CompilationError as e:  # until tile.gemm lowers
        check_error(e, "gemm-unlowered", "T.gemm", "'tile.gemm' op is not lowered")
    else:
        assert ".visible .entry gemm_ok(" in kernel.get_kernel_source()


@T.prim_func
def gemm_k_pack(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1):
        a = T.alloc_shared((64, 64), "float16")
        b = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.gemm(a, b, c, k_pack=2)  # E:k-pack


@T.prim_func
def gemm_bad_wait(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1):
        a = T.alloc_shared((64, 64), "float16")
        b = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.gemm(a, b, c, wg_wait=-2)  # E:wg-wait-neg


@T.prim_func
def wait_wgmma_negative(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1):
        T.wait_wgmma(-1)  # E:wait-neg


@T.prim_func
def gemm_never_waited(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 64), "float16")
        b = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.gemm(a, b, c, wg_wait=-1)  # E:never-waited


@T.prim_func
def gemm_read_before_wait(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 64), "float16")
        b = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a)
        T.copy(A, b)
        T.gemm(a, b, acc, wg_wait=-1)
        T.copy(acc, C)  # E:read-early
        T.wait_wgmma(0)


@T.prim_func
def gemm_operand_overwritten(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 64), "float16")
        b = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a)
        T.copy(A, b)
        T.gemm(a, b, acc, clear_accum=True, wg_wait=-1)
        T.wait_wgmma(1)
        T.copy(A, b)  # E:operand-written
        T.wait_wgmma(0)
        T.copy(acc, C)


@T.prim_func
def gemm_pending(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1):
        a = T.alloc_shared((64, 64), "float16")
        b = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.gemm(a, b, c, wg_wait=1)  # E:wg-wait-1


def test_gemm_k_pack_and_wg_wait_take_effect_or_fail():
    check_error(build_error(gemm_k_pack), "k-pack", "2",
                "k_pack packs K for AMD's MFMA instructions; on NVIDIA GPUs it must be 1")
    check_error(build_error(gemm_bad_wait), "wg-wait-neg", "-2",
                "wg_wait must be -1 (wait for none: a later T.wait_wgmma completes the gemm) "
                "or more, got -2")
    check_error(build_error(wait_wgmma_negative), "wait-neg", "-1",
                "T.wait_wgmma's id (the wgmma groups left running) must be non-negative, got -1")
    # wg_wait=-1: the program must wait before touching the gemm's operands, on
    # every target (mma.sync completes in order, but the program would race on
    # sm_90a).
    for target in ("sm_90a", "sm_80"):
        with pytest.raises(tlc.CompilationError) as e:
            tlc.compile(gemm_never_waited, target=target)
        check_error(e.value, "never-waited", "T.gemm",
                    "this gemm (wg_wait = -1) is never waited for: add T.wait_wgmma(0)")
        with pytest.raises(tlc.CompilationError) as e:
            tlc.compile(gemm_read_before_wait, target=target)
        check_error(e.value, "read-early", "T.copy",
                    "touches the accumulator 'acc' while the wgmma of the gemm issued with "
                    "wg_wait = -1 (or left pending) may still be running")
        with pytest.raises(tlc.CompilationError) as e:
            tlc.compile(gemm_operand_overwritten, target=target)
        check_error(e.value, "operand-written", "T.copy", "writes the operand 'b' while")
    # wg_wait reaches the IR; tile-select-mma says what it cannot honour, at the line.
    assert "wg_wait = 1 : i64" in str(gemm_pending.build_module())
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(gemm_pending, target="sm_90a")
    check_error(e.value, "wg-wait-1", "T.gemm",
                "wg_wait = 1 cannot be honoured: at most 0 wgmma groups can stay pending "
                "here (it is not directly in a T.Pipelined loop)")
    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(gemm_pending, target="sm_80")
    check_error(e.value, "wg-wait-1", "T.gemm", "wg_wait = 1 needs a gemm that runs on wgmma")


# -- outside a prim_func -----------------------------------------------------------------------


def test_intrinsic_called_as_python():
    with pytest.raises(RuntimeError, match="T.copy can only be used inside a @T.prim_func"):
        T.copy(1, 2)
    with pytest.raises(RuntimeError, match="is a @T.prim_func: compile it"):
        no_kernel()


def test_source_not_available():
    namespace = {"T": T}
    exec("def f(A: T.Tensor((4,), 'float32')):\n    pass\n", namespace)
    with pytest.raises(tlc.CompilationError, match="cannot read the source of 'f'"):
        prim_func(namespace["f"])


def test_bad_tensor_annotations_fail_at_def():
    # Python evaluates annotations when it runs `def`, before tlc sees them.
    with pytest.raises(ValueError, match=r"tensor sizes must be positive ints or "
                                         r"T.dynamic\(...\), got -1"):
        T.Tensor((64, -1), "float32")
    with pytest.raises(ValueError, match="got 'M'"):
        T.Tensor(("M", 4), "float32")


def test_unknown_dtype_in_annotation():
    with pytest.raises(ValueError, match="unknown dtype 'f32x'"):
        T.Tensor((4,), "f32x")
