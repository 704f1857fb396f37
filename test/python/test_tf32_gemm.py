"""float32 gemms on tf32 tensor cores (mma.sync m16n8k8), TileLang's T.tfloat32 name: each
storage order of A and B, and A from registers, compile to the tf32 mma for sm_80 and sm_90a,
assemble with ptxas, and match float64 numpy to tf32's precision in the interpreter."""

import sys
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T

from ptxas import assemble

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import build_gemm_extras  # noqa: E402

CONFIGS = [(False, False, False), (False, True, False), (True, False, False), (True, True, False),
           (False, True, True), (False, False, True)]


def ids(config):
    ta, tb, regs = config
    return f"{'t' if ta else 'n'}{'t' if tb else 'n'}{'_regs' if regs else ''}"


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("config", CONFIGS, ids=ids)
def test_tf32_gemm_compiles_to_the_tf32_mma(config, target, tmp_path):
    kernel = tlc.compile(build_gemm_extras.gemm_tf32.factory(300, 200, 250, *config),
                         out_idx=[-1], target=target)
    ptx = kernel.get_kernel_source()
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx
    ta, tb, regs = config
    # ldmatrix where the 16-byte rows are the lane's own elements; element loads where tf32
    # would need a transposed ldmatrix (A stored K x M, B stored K x N).
    assert ("ldmatrix" in ptx) == ((not ta and not regs) or tb)
    assemble(ptx, target, tmp_path)


@pytest.mark.parametrize("config", CONFIGS, ids=ids)
def test_tf32_gemm_in_the_interpreter(config):
    ta, tb, regs = config
    m, n, k = 96, 80, 72
    rng = np.random.default_rng(3)
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    run = tlc.jit(lambda: build_gemm_extras.gemm_tf32.factory(m, n, k, *config), out_idx=[-1],
                  interpret=True)()
    c = run(a, b)
    ref = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    np.testing.assert_allclose(c, ref, atol=0.05, rtol=1e-2)


def test_tfloat32_is_float32():
    # TileLang's name: float32 values (tensor parameters take float32 tensors), gemms read
    # as tf32.
    assert T.tfloat32 == T.float32 == "float32"
