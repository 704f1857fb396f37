"""`break` and `continue` in `while` loops and run-time T.serial / range loops
(tlc.frontend.loop_exits), in the kernel's code and in T.Parallel bodies:
interpreted against Python's own loops, compiled and assembled; elsewhere
an error at the statement."""

import numpy as np
import pytest

import tlc
import tlc.language as T
from bad_programs import assert_line_error
from test_compile import ptxas_ok


@T.prim_func
def exits(X: T.Tensor((128, 64), "int32"), First: T.Tensor((128,), "int32"),
          Sums: T.Tensor((128,), "int32"), Count: T.Tensor((128,), "int32"),
          Until: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128):
        t = T.get_thread_binding()
        first = T.alloc_var("int32", -1)
        for j in T.serial(64):
            if X[t, j] < 0:
                first = j
                break
        First[t] = first
        total = T.alloc_var("int32", 0)
        for j in range(64):
            if X[t, j] % 3 == 0:
                continue
            total += X[t, j]
        Sums[t] = total
        k = T.alloc_var("int32", 0)
        n = T.alloc_var("int32", 0)
        while k < 64:
            k += 1
            if X[t, k - 1] == 7:
                continue
            if X[t, k - 1] > 90:
                T.loop_break()  # TileLang's spelling
            n += 1
        Count[t] = n
        for i in T.Parallel(128):  # a while loop in each iteration of a T.Parallel
            m = T.alloc_var("int32", 0)
            while m < 64:
                if X[i, m] > 95:
                    break
                m += 1
            Until[i] = m


def _python(x):
    first, sums, count, until = [], [], [], []
    for r in x:
        first.append(next((j for j, v in enumerate(r) if v < 0), -1))
        sums.append(sum(int(v) for v in r if v % 3 != 0))
        n = 0
        for v in r:
            if v == 7:
                continue
            if v > 90:
                break
            n += 1
        count.append(n)
        until.append(next((j for j, v in enumerate(r) if v > 95), 64))
    return [np.array(a, np.int32) for a in (first, sums, count, until)]


def test_break_and_continue(tmp_path):
    x = np.random.default_rng(0).integers(-5, 100, (128, 64)).astype(np.int32)
    x[5] = np.abs(x[5])  # a row with no negative value: the loop runs out
    outs = [np.zeros(128, np.int32) for _ in range(4)]
    tlc.interpret(exits, x, *outs)
    for got, want in zip(outs, _python(x)):
        np.testing.assert_array_equal(got, want)
    assert outs[0][5] == -1
    ptxas_ok(tlc.compile(exits, target="sm_90a").get_kernel_source(), tmp_path)


@pytest.mark.parametrize("body, message", [
    ("for i in T.Parallel(64):\n            if X[i] > 0:\n                break",
     "`break` leaves only a `while` loop or a run-time T.serial / range loop"),
    ("for i in T.unroll(4):\n            for j in T.Parallel(64):\n                Y[j] = X[j]\n"
     "            if i > 1:\n                continue", "`continue` leaves only a `while` loop"),
    ("for k in T.serial(4):\n            for i in T.Parallel(64):\n                if X[i] > k:\n"
     "                    break", "`break` leaves only a `while` loop"),
])
def test_exits_elsewhere_are_errors(body, message, tmp_path):
    assert_line_error(tmp_path, "X: T.Tensor((64,), 'float32'), Y: T.Tensor((64,), 'float32')",
                      body, message)
