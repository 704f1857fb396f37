"""int8 x int8 -> int32 gemms: on sm_90a wgmma m64nNk32 (s32.s8.s8) with both
operands in shared memory, else mma.sync m16n8k32, A from shared memory or
from registers (the 16-byte operand layout: four registers of four bytes
along K), B stored N x K. They compile for sm_80 and sm_90a, assemble with
ptxas and match numpy exactly in the interpreter; an operand stored M-major
is an error."""

import sys
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from ptxas import assemble

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import build_gemm_extras  # noqa: E402


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("a_registers", [False, True])
def test_int8_gemm_compiles_to_the_int8_mma(a_registers, target, tmp_path):
    kernel = tlc.compile(build_gemm_extras.gemm_int8(300, 200, 256, a_registers),
                         target=target)
    ptx = kernel.get_kernel_source()
    if target == "sm_90a" and not a_registers:
        assert "kind = wgmma, m = 64, n = 64, k = 32" in kernel.get_mlir("optimized")
        assert "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8" in ptx
    else:
        assert "kind = mma_sync, m = 16, n = 8, k = 32" in kernel.get_mlir("optimized")
        assert "mma.sync.aligned.m16n8k32.row.col" in ptx and ".s32.s8.s8.s32" in ptx
        assert "ldmatrix" in ptx
    assert ".local" not in ptx
    assemble(ptx, target, tmp_path)


@pytest.mark.parametrize("a_registers", [False, True])
def test_int8_gemm_in_the_interpreter(a_registers):
    rng = np.random.default_rng(7)
    a = rng.integers(-128, 128, (300, 256), dtype=np.int8)
    b = rng.integers(-128, 128, (200, 256), dtype=np.int8)
    c = np.zeros((300, 200), np.int32)
    tlc.interpret(build_gemm_extras.gemm_int8(300, 200, 256, a_registers), a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.astype(np.int64).T)


@T.prim_func
def int8_n_major_b(A: T.Tensor((64, 64), "int8"), B: T.Tensor((64, 64), "int8"),
                   C: T.Tensor((64, 64), "int32")):
    with T.Kernel(1, threads=128):
        a_s = T.alloc_shared((64, 64), "int8")
        b_s = T.alloc_shared((64, 64), "int8")
        acc = T.alloc_fragment((64, 64), "int32")
        T.copy(A, a_s)
        T.copy(B, b_s)
        T.gemm(a_s, b_s, acc, clear_accum=True)  # B stored K x N
        T.copy(acc, C)


def test_int8_operands_are_read_k_major():
    with pytest.raises(tlc.CompilationError, match="int8 gemms read both operands K-major"):
        tlc.compile(int8_n_major_b, target="sm_80")
