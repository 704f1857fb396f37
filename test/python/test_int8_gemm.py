"""int8 x int8 -> int32 gemms: on sm_90a wgmma m64nNk32 (s32.s8.s8) with both
operands K-major in shared memory, else mma.sync m16n8k32, A from shared
memory or from registers (the 16-byte operand layout: four registers of four
bytes along K). Operands stored M- / N-major (A K x M, B K x N), which neither
ldmatrix nor 8-bit wgmma can transpose, are loaded by mma.sync element by
element. They compile for sm_80 and sm_90a, assemble with ptxas and match
numpy exactly in the interpreter."""

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


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("layout", ["NN", "TN", "TT"])
def test_int8_operands_stored_m_or_n_major(layout, target, tmp_path):
    kernel = tlc.compile(build_gemm_extras.gemm_int8(300, 200, 256, layout=layout),
                         target=target)
    assert "kind = mma_sync, m = 16, n = 8, k = 32" in kernel.get_mlir("optimized")
    ptx = kernel.get_kernel_source()
    assert "mma.sync.aligned.m16n8k32.row.col" in ptx
    assert ("ld.shared.b8" in ptx or "ld.shared.u8" in ptx or "ld.shared.s8" in ptx)
    # a K-major operand (A stored M x K, B stored N x K) is still read by ldmatrix
    assert ("ldmatrix" in ptx) == (layout[0] == "N" or layout[1] == "T")
    assert ".local" not in ptx
    assemble(ptx, target, tmp_path)
    rng = np.random.default_rng(11)
    a = rng.integers(-128, 128, (256, 300) if layout[0] == "T" else (300, 256), dtype=np.int8)
    b = rng.integers(-128, 128, (200, 256) if layout[1] == "T" else (256, 200), dtype=np.int8)
    c = np.zeros((300, 200), np.int32)
    tlc.interpret(build_gemm_extras.gemm_int8(300, 200, 256, layout=layout), a, b, c)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    want = (a64.T if layout[0] == "T" else a64) @ (b64.T if layout[1] == "T" else b64)
    np.testing.assert_array_equal(c, want)
