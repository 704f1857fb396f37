"""@T.macro (TileLang's): a function of tile code whose body is built in place
of each call in a prim_func, its parameters bound to the call's arguments
(buffers, run-time values, compile-time Python values), a final `return value`
making the call an expression; macros calling macros, and one holding a whole
T.Kernel. Mistakes name the line: the call's for its arguments, the macro's
for its body."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def online_softmax_rows(n=32, blocks=4):
    """A row softmax over `blocks` column blocks of a [n, n * blocks] matrix, online
    (running max and sum), written with macros as TileLang's FlashAttention
    examples write theirs."""

    @T.macro
    def rescale(acc, m_old, m, width):
        for i, j in T.Parallel(n, width):
            acc[i, j] *= T.exp2(m_old[i] - m[i])

    @T.macro
    def block_max(s, m, m_old):
        T.copy(m, m_old)
        T.reduce_max(s, m, dim=1, clear=False)

    @T.macro
    def exp_and_sum(s, m, l, l_block, m_old):
        block_max(s, m, m_old)  # a macro calling a macro
        for i, j in T.Parallel(n, n):
            s[i, j] = T.exp2(s[i, j] - m[i])
        T.reduce_sum(s, l_block, dim=1)
        for i in T.Parallel(n):
            l[i] = l[i] * T.exp2(m_old[i] - m[i]) + l_block[i]

    @T.macro
    def log2_of(x):
        return T.log2(x)

    @T.prim_func
    def lse(X: T.Tensor((n, n * blocks), "float32"), L: T.Tensor((n,), "float32"),
            O: T.Tensor((n, n), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_fragment((n, n), "float32")
            m = T.alloc_fragment((n,), "float32")
            m_old = T.alloc_fragment((n,), "float32")
            l = T.alloc_fragment((n,), "float32")
            l_block = T.alloc_fragment((n,), "float32")
            o = T.alloc_fragment((n, n), "float32")  # the blocks' exponentials, summed
            T.fill(m, -T.infinity("float32"))
            T.fill(l, 0)
            T.fill(o, 0)
            for b in T.serial(blocks):
                T.copy(X[0, b * n], s)
                exp_and_sum(s, m, l, l_block, m_old)
                rescale(o, m_old, m, width=n)  # a keyword argument
                for i, j in T.Parallel(n, n):
                    o[i, j] += s[i, j]
            for i in T.Parallel(n):
                L[i] = log2_of(l[i]) + m[i]  # a macro's value
            T.copy(o, O)

    return lse


def test_macros_build_in_place_of_their_calls(tmp_path):
    prim = online_softmax_rows()
    x = np.random.default_rng(0).standard_normal((32, 128)).astype(np.float32)
    out, o = np.zeros(32, np.float32), np.zeros((32, 32), np.float32)
    tlc.interpret(prim, x, out, o)
    top = x.max(1, keepdims=True)
    expected = np.log2(np.exp2(x - top).sum(1)) + top[:, 0]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(o, np.exp2(x - top).reshape(32, 4, 32).sum(1), rtol=1e-5,
                               atol=1e-6)
    ir_text = str(prim.build_module())
    assert ir_text.count("tile.reduce ") == 2 and "call" not in ir_text
    assert ".entry" in tlc.compile(prim, target="sm_90a").get_kernel_source()


@T.macro
def combine_kernel(parts, out, n, chunks):
    """A whole kernel: a macro at the prim_func's top level."""
    with T.Kernel(1, threads=n):
        for j in T.Parallel(n):
            total = 0.0
            for c in chunks:
                total = total + parts[c, j]
            out[j] = total


@T.prim_func
def two_kernels(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
    parts = T.alloc_global((3, 64), "float32")
    with T.Kernel(3, threads=64) as c:
        for j in T.Parallel(64):
            parts[c, j] = X[j] * (c + 1)
    combine_kernel(parts, Y, 64, [0, 1, 2])


def test_a_macro_holds_a_kernel():
    x = np.arange(64, dtype=np.float32)
    y = np.zeros(64, np.float32)
    tlc.interpret(two_kernels, x, y)
    np.testing.assert_allclose(y, 6 * x)
    assert len(tlc.compile(two_kernels, target="sm_90a").artifact["kernels"]) == 2


@T.macro
def recursive(x):
    recursive(x)  # E:recurse


@T.macro
def fill_with(x, value):
    T.fill(x, value)
    T.no_such_op(x)  # E:inbody


@T.macro
def returns_early(x):
    return x
    T.fill(x, 0)  # E:early


@T.macro
def returns_at_run_time(x, n):
    if n > 3:  # E:runtime
        return x[0]
    return x[1]


@T.prim_func
def calls_returns_at_run_time(A: T.Tensor((64,), "float32"), n: T.int32):
    with T.Kernel(1, threads=64):
        A[2] = returns_at_run_time(A, n)


@T.prim_func
def calls_recursive(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        recursive(A)


@T.prim_func
def calls_with_a_missing_argument(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        f = T.alloc_fragment((64,), "float32")
        fill_with(f)  # E:missing


@T.prim_func
def calls_a_bad_body(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        f = T.alloc_fragment((64,), "float32")
        fill_with(f, 1.0)


@T.prim_func
def calls_returns_early(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        f = T.alloc_fragment((64,), "float32")
        returns_early(f)


@T.macro
def scaled_rows(src: T.SharedBuffer((32, 32), "float32"),
                acc: T.FragmentBuffer((32, 32), "float32"),
                scale: T.LocalBuffer((1,), "float32")):
    # TileLang's buffer annotations of macro parameters: checked at each call.
    for i, j in T.Parallel(32, 32):
        acc[i, j] = src[i, j] * scale[0]


@T.prim_func
def annotated_macro(X: T.Tensor((32, 32), "float32"), Y: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((32, 32), "float32")
        f = T.alloc_fragment((32, 32), "float32")
        k = T.alloc_local((1,), "float32")
        k[0] = 3.0
        T.copy(X, s)
        scaled_rows(s, f, k)
        T.copy(f, Y)


def test_buffer_annotations_of_macro_parameters():
    x = np.random.default_rng(1).standard_normal((32, 32)).astype(np.float32)
    y = np.zeros_like(x)
    tlc.interpret(annotated_macro, x, y)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)
    assert repr(T.SharedBuffer[(4, 8), "float16"]) == "T.SharedBuffer((4, 8), T.float16)"
    with pytest.raises(tlc.CompilationError, match="SharedBuffer's 'strides'"):
        T.SharedBuffer((4, 8), "float16", strides=(8, 1))


@T.prim_func
def macro_gets_a_fragment_for_shared(X: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((32, 32), "float32")
        k = T.alloc_local((1,), "float32")
        scaled_rows(f, f, k)  # E:place


@T.prim_func
def macro_gets_another_shape(X: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((32, 32), "float32")
        f = T.alloc_fragment((32, 16), "float32")
        k = T.alloc_local((1,), "float32")
        scaled_rows(s, f, k)  # E:shape


@T.prim_func
def macro_gets_a_number(X: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((32, 32), "float32")
        f = T.alloc_fragment((32, 32), "float32")
        scaled_rows(s, f, 2.0)  # E:number


@pytest.mark.parametrize("prim, marker, at, message", [
    (calls_recursive, "recurse", "recursive(x)",
     "the T.macro 'recursive' calls itself: a macro's body is built in place of each call"),
    (calls_with_a_missing_argument, "missing", "fill_with(f)",
     "T.macro 'fill_with': missing a required argument: 'value'"),
    (calls_a_bad_body, "inbody", "T.no_such_op", "no_such_op"),
    (calls_returns_early, "early", "T.fill", "this statement follows the macro's `return`: "
                                             "it would never run"),
    (macro_gets_a_fragment_for_shared, "place", "scaled_rows(f, f, k)",
     "T.macro 'scaled_rows': parameter 'src' is T.SharedBuffer([32, 32], float32), got the "
     "fragment buffer 'f' ([32, 32], float32)"),
    (macro_gets_another_shape, "shape", "scaled_rows(s, f, k)",
     "parameter 'acc' is T.FragmentBuffer([32, 32], float32), got the fragment buffer 'f' "
     "([32, 16], float32)"),
    (macro_gets_a_number, "number", "scaled_rows(s, f, 2.0)",
     "parameter 'scale' is T.LocalBuffer([1], float32), got "),
    (calls_returns_at_run_time, "runtime", "n > 3",
     "a `return` in the T.macro 'returns_at_run_time' may only sit in an `if` on a "
     "compile-time value"),
])
def test_macro_mistakes_name_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(prim, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, at, message)


def test_a_macro_is_not_called_as_python():
    with pytest.raises(RuntimeError, match="'fill_with' is a @T.macro: call it inside a "
                                           "@T.prim_func"):
        fill_with(None, 0)
    with pytest.raises(NotImplementedError, match="hygienic=False"):
        T.macro(hygienic=False)


def scaled(v, mode):
    """A plain helper (an implicit macro) returning from a branch chosen at
    compile time; the statements after that branch are never built."""
    if mode == "double":
        return v * 2.0
    elif mode == "negate":
        w = -v
        return w
    T.no_such_op(v)  # never reached for the modes above
    return v


def scaling_kernel(mode):
    @T.prim_func
    def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                B[i] = scaled(A[i], mode)
    return k


@pytest.mark.parametrize("mode, expect", [("double", 2.0), ("negate", -1.0)])
def test_a_return_in_a_compile_time_branch_ends_the_macro(mode, expect):
    a = np.arange(64, dtype=np.float32)
    b = np.zeros(64, np.float32)
    tlc.interpret(scaling_kernel(mode), a, b)
    np.testing.assert_allclose(b, expect * a)
    assert "st.global" in tlc.compile(scaling_kernel(mode), target="sm_90a").get_kernel_source()


def test_the_fall_through_branch_is_built():
    with pytest.raises(tlc.CompilationError, match="no_such_op"):
        tlc.compile(scaling_kernel("other"), target="sm_90a")


OPS = {
    "max": lambda a, b: T.max(a, b),
    "min": lambda a, b: T.min(a, b),
    "clamp": lambda a, b: T.clamp(a - b, -1.0, 1.0),
}
first_of_two, second_of_two = (lambda a, b: a * 2), (lambda a, b: b * 3)


def lambda_kernel(op: str):
    @T.prim_func
    def apply(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"),
              C: T.Tensor((128,), "float32"), D: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(128):
                C[i] = OPS[op](A[i], B[i])  # a lambda of the program, built in place
                D[i] = first_of_two(A[i], B[i]) + second_of_two(A[i], B[i])

    return apply


@pytest.mark.parametrize("op", sorted(OPS))
def test_lambdas_are_built_in_place(op):
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(128).astype(np.float32) for _ in range(2))
    c, d = np.zeros(128, np.float32), np.zeros(128, np.float32)
    tlc.interpret(lambda_kernel(op), a, b, c, d)
    expect = {"max": np.maximum(a, b), "min": np.minimum(a, b),
              "clamp": np.clip(a - b, -1.0, 1.0)}[op]
    np.testing.assert_allclose(c, expect, rtol=1e-6)
    # Two lambdas alike on one line are told apart by where their code starts.
    np.testing.assert_allclose(d, 2 * a + 3 * b, rtol=1e-6)
