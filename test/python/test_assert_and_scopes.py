"""Python `assert` in a prim_func (TileLang's eager kernels assert on their
parameters): a compile-time condition is checked while the kernel is built and
fails at its line; a run-time one is an error. TileLang's
`T.alloc_fragment(shape, dtype, "local")` is a per-thread buffer (T.alloc_local)."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def scaled(n, transpose):
    @T.prim_func
    def k(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        assert n % 64 == 0, f"n = {n} is not a multiple of 64"  # E:msg
        assert not transpose  # E:plain
        with T.Kernel(n // 64, threads=64) as b:
            total = T.alloc_fragment((1,), "float32", "local")  # TileLang's local scope
            for i in T.Parallel(64):
                total[0] = X[b * 64 + i] * 2.0
                Y[b * 64 + i] = total[0]

    return k


def test_a_true_assert_builds_nothing():
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    tlc.interpret(scaled(128, False), x, y)
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("args,marker,at,message", [
    ((96, False), "msg", "assert n % 64", "assertion failed: n = 96 is not a multiple of 64"),
    ((128, True), "plain", "assert not transpose", "assertion failed: not transpose"),
])
def test_a_false_assert_fails_at_its_line(args, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(scaled(*args), target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, at, message)


@T.prim_func
def asserts_at_run_time(X: T.Tensor((64,), "float32"), n: T.int32):
    with T.Kernel(1, threads=64):
        assert n > 0  # E:runtime
        for i in T.Parallel(64):
            X[i] = 0.0


def test_a_run_time_assert_is_an_error():
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(asserts_at_run_time, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, "runtime", "n > 0",
                    "an `assert` in a prim_func checks a compile-time condition")
    assert "check it on the GPU with T.device_assert(cond, msg)" in str(info.value)


def test_local_scope_fragment_is_a_local_buffer():
    ir_text = str(tlc.compile(scaled(64, False), target="sm_90a").get_mlir("tile"))
    assert "tile.alloc_local" in ir_text and "1xf32" in ir_text



@T.prim_func
def formats_a_run_time_value(X: T.Tensor((64,), "float32"), n: T.int32):
    with T.Kernel(1, threads=64):
        assert 0 > 1, f"{n} rows"  # E:fstring
        for i in T.Parallel(64):
            X[i] = 0.0


def test_f_strings_format_compile_time_values_only():
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(formats_a_run_time_value, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, "fstring", "n} rows",
                    "an f-string in a prim_func formats compile-time values")
