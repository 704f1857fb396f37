"""The interpreter's arith semantics on signless integers, checked against
MLIR's definitions written out in Python, and its errors for what it cannot run."""

import numpy as np
import pytest

import tlc
from tlc.interpreter import InterpreterError

INTS = """
func.func @ints(%A: memref<8xi32> {tile.name = "A"}, %B: memref<8xi32> {tile.name = "B"},
                %O: memref<10x8xi32> {tile.name = "O"}, %F: memref<3x8xf32> {tile.name = "F"}) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    tile.parallel (%i) in [8] {
      %a = memref.load %A[%i] : memref<8xi32>
      %b = memref.load %B[%i] : memref<8xi32>
      %r0 = arith.divsi %a, %b : i32
      %r1 = arith.remsi %a, %b : i32
      %r2 = arith.floordivsi %a, %b : i32
      %r3 = arith.ceildivsi %a, %b : i32
      %r4 = arith.divui %a, %b : i32
      %c3 = arith.constant 3 : i32
      %r5 = arith.shrui %a, %c3 : i32
      %r6 = arith.shrsi %a, %c3 : i32
      %lt = arith.cmpi ult, %a, %b : i32
      %r7 = arith.extui %lt : i1 to i32
      %t8 = arith.trunci %a : i32 to i8
      %r8 = arith.extui %t8 : i8 to i32
      %r9 = arith.extsi %t8 : i8 to i32
      %k0 = arith.constant 0 : index
      %k1 = arith.constant 1 : index
      %k2 = arith.constant 2 : index
      %k3 = arith.constant 3 : index
      %k4 = arith.constant 4 : index
      %k5 = arith.constant 5 : index
      %k6 = arith.constant 6 : index
      %k7 = arith.constant 7 : index
      %k8 = arith.constant 8 : index
      %k9 = arith.constant 9 : index
      memref.store %r0, %O[%k0, %i] : memref<10x8xi32>
      memref.store %r1, %O[%k1, %i] : memref<10x8xi32>
      memref.store %r2, %O[%k2, %i] : memref<10x8xi32>
      memref.store %r3, %O[%k3, %i] : memref<10x8xi32>
      memref.store %r4, %O[%k4, %i] : memref<10x8xi32>
      memref.store %r5, %O[%k5, %i] : memref<10x8xi32>
      memref.store %r6, %O[%k6, %i] : memref<10x8xi32>
      memref.store %r7, %O[%k7, %i] : memref<10x8xi32>
      memref.store %r8, %O[%k8, %i] : memref<10x8xi32>
      memref.store %r9, %O[%k9, %i] : memref<10x8xi32>
      %fa = arith.sitofp %a : i32 to f32
      %fb = arith.uitofp %a : i32 to f32
      %big = arith.constant 1.0e10 : f32
      %prod = arith.mulf %fa, %big : f32
      %back = arith.fptosi %prod : f32 to i32
      %fback = arith.sitofp %back : i32 to f32
      memref.store %fa, %F[%k0, %i] : memref<3x8xf32>
      memref.store %fb, %F[%k1, %i] : memref<3x8xf32>
      memref.store %fback, %F[%k2, %i] : memref<3x8xf32>
    }
  }
  return
}
"""


def _u32(x):
    return x % 2 ** 32


def _i32(x):
    x %= 2 ** 32
    return x - 2 ** 32 if x >= 2 ** 31 else x


def _divsi(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def test_integer_ops_follow_mlir():
    a = [7, -7, 7, -7, 300, -1, 0, 2 ** 31 - 1]
    b = [2, 2, -2, -2, 7, 3, 5, -1]
    out = np.zeros((10, 8), np.int32)
    floats = np.zeros((3, 8), np.float32)
    tlc.interpret(INTS, np.array(a, np.int32), np.array(b, np.int32), out, floats)
    rows = [
        [_divsi(x, y) for x, y in zip(a, b)],
        [x - y * _divsi(x, y) for x, y in zip(a, b)],
        [x // y for x, y in zip(a, b)],
        [-(-x // y) for x, y in zip(a, b)],
        [_i32(_u32(x) // _u32(y)) for x, y in zip(a, b)],
        [_u32(x) >> 3 for x in a],
        [x >> 3 for x in a],
        [int(_u32(x) < _u32(y)) for x, y in zip(a, b)],
        [x % 256 for x in a],
        [(x % 256) - 256 * ((x % 256) >= 128) for x in a],
    ]
    np.testing.assert_array_equal(out, np.array(rows))
    np.testing.assert_array_equal(floats[0], np.array(a, np.float32))
    np.testing.assert_array_equal(floats[1], np.array([_u32(x) for x in a], np.float32))
    # fptosi saturates (cvt.rzi.sat): +-7e10 -> INT32_MAX / INT32_MIN
    np.testing.assert_array_equal(floats[2], np.clip(np.array(a, np.float64) * 1e10,
                                                     -2 ** 31, 2 ** 31 - 1).astype(np.float32))


def test_unsupported_op_is_named_at_its_line():
    text = INTS.replace("%fa = arith.sitofp %a : i32 to f32",
                        "%fa0 = arith.sitofp %a : i32 to f32\n      %fa = math.erf %fa0 : f32")
    with pytest.raises(InterpreterError, match=r"^<tile>:\d+:\d+: error: math.erf: the "
                                               r"interpreter does not support this op"):
        tlc.interpret(text, *[np.zeros(s, d) for s, d in [(8, np.int32), (8, np.int32),
                                                           ((10, 8), np.int32),
                                                           ((3, 8), np.float32)]])


def test_integer_division_by_zero():
    b = np.array([1, 1, 1, 0, 1, 1, 1, 1], np.int32)
    with pytest.raises(InterpreterError, match="arith.divsi in block \\(0\\): integer "
                                               "division by zero"):
        tlc.interpret(INTS, np.ones(8, np.int32), b, np.zeros((10, 8), np.int32),
                      np.zeros((3, 8), np.float32))


LOOPS = """
func.func @loops(%X: memref<16xf32> {tile.name = "X"}, %O: memref<2x16xf32> {tile.name = "O"}) {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %X[%k] : memref<16xf32>
      %pos = arith.cmpf ogt, %x, %zero : f32
      %v = scf.if %pos -> (f32) {
        scf.yield %x : f32
      } else {
        %n = arith.negf %x : f32
        scf.yield %n : f32
      }
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    tile.parallel (%i) in [16] {
      %x = memref.load %X[%i] : memref<16xf32>
      %pos = arith.cmpf ogt, %x, %zero : f32
      %v = scf.if %pos -> (f32) {
        scf.yield %x : f32
      } else {
        %t = arith.mulf %x, %sum : f32
        scf.yield %t : f32
      }
      memref.store %v, %O[%c0, %i] : memref<2x16xf32>
      %r = scf.for %k = %c0 to %i step %c1 iter_args(%a = %zero) -> (f32) {
        %one = arith.constant 1.0 : f32
        %b = arith.addf %a, %one : f32
        scf.yield %b : f32
      }
      memref.store %r, %O[%c1, %i] : memref<2x16xf32>
    }
  }
  return
}
"""


def test_scf_values_and_per_lane_trip_counts():
    """scf.for iter_args and scf.if results, outside tile.parallel and inside it
    (where the `if` is per lane and the loop runs i times in lane i)."""
    x = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    out = np.zeros((2, 16), np.float32)
    tlc.interpret(LOOPS, x, out)
    total = np.float32(0)
    for v in x:
        total = np.float32(total + abs(v))
    np.testing.assert_array_equal(out[0], np.where(x > 0, x, x * total))
    np.testing.assert_array_equal(out[1], np.arange(16, dtype=np.float32))
