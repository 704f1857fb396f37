"""Unsigned integers (uint8 to uint64): the language's operators treat their
bits as unsigned numbers (division, remainder, right shift and comparisons
are the unsigned ops, in the interpreter and in the PTX), and uint64 tensors
pass through the interpreter and the compiler like the other dtypes."""

import re

import numpy as np
import pytest

import tlc
import tlc.language as T

from ptxas import assemble


def _ops(dtype):
    @T.prim_func
    def unsigned_ops(A: T.Tensor((256,), dtype), B: T.Tensor((256,), dtype),
                     C: T.Tensor((5, 256), dtype)):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(128):
                a = A[bx * 128 + i]
                b = B[bx * 128 + i]
                C[0, bx * 128 + i] = a // (b % 7 + 1)
                C[1, bx * 128 + i] = a % 1000
                C[2, bx * 128 + i] = a >> 3
                C[3, bx * 128 + i] = T.if_then_else(a > b, a, b)
                C[4, bx * 128 + i] = (a / 3) ^ T.max(a, b)

    return unsigned_ops


def _expect(a, b):
    return np.stack([a // (b % 7 + 1), a % 1000, a >> 3, np.where(a > b, a, b),
                     (a // 3) ^ np.maximum(a, b)])


@pytest.mark.parametrize("dtype, bits", [("uint32", 32), ("uint64", 64)])
def test_unsigned_operators(dtype, bits, tmp_path):
    top = 2 ** bits - 1
    rng = np.random.default_rng(bits)
    a = rng.integers(0, top, 256, dtype=dtype, endpoint=True)
    b = rng.integers(0, top, 256, dtype=dtype, endpoint=True)
    a[:4] = [top, 2 ** (bits - 1), 7, 0]  # the high bit set: negative if read as signed
    b[:4] = [5, 2 ** (bits - 1) + 1, top, 3]
    out = np.zeros((5, 256), dtype)
    tlc.interpret(_ops(dtype), a, b, out)
    np.testing.assert_array_equal(out, _expect(a, b))
    ptx = tlc.compile(_ops(dtype), target="sm_90a").get_kernel_source()
    assert f"div.u{bits}" in ptx and f"shr.u{bits}" in ptx
    for op in ("div", "rem", "shr"):  # (LLVM may turn a remainder into div, mul and sub)
        assert f"{op}.s{bits}" not in ptx, op
    assert re.search(rf"(setp\.[gl][te]|max|min)\.u{bits}", ptx)  # the unsigned comparison
    assemble(ptx, "sm_90a", tmp_path)


def test_uint64_scalar_parameter():
    @T.prim_func
    def add_scalar(A: T.Tensor((128,), "uint64"), s: T.uint64, C: T.Tensor((128,), "uint64")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(128):
                C[i] = A[i] + s

    a = np.arange(128, dtype=np.uint64) + np.uint64(2 ** 63)
    out = np.zeros(128, np.uint64)
    tlc.interpret(add_scalar, a, np.uint64(2 ** 62 + 5), out)
    np.testing.assert_array_equal(out, a + np.uint64(2 ** 62 + 5))


@T.prim_func
def unsigned_with_indices(B: T.Tensor((128,), "uint8"), C: T.Tensor((128,), "int32"),
                          D: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            C[i] = B[i] >> (i % 2)  # a uint8 meeting an index
            D[i] = B[i] + i


def test_unsigned_values_meeting_indices_keep_their_value(tmp_path):
    # A uint8 of 128 or more is 128 or more as an index too (zero-extended); it was
    # sign-extended, so 200 >> 0 gave -56.
    b = (np.arange(128) + 128).astype(np.uint8)
    c, d = np.zeros(128, np.int32), np.zeros(128, np.int32)
    tlc.interpret(unsigned_with_indices, b, c, d)
    i = np.arange(128)
    np.testing.assert_array_equal(c, b.astype(np.int32) >> (i % 2))
    np.testing.assert_array_equal(d, b.astype(np.int32) + i)
    ir_text = str(unsigned_with_indices.build_module())
    assert "arith.index_castui" in ir_text
    for target in ("sm_80", "sm_90a"):
        assemble(tlc.compile(unsigned_with_indices, target=target).get_kernel_source(), target,
                 tmp_path)
