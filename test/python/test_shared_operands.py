"""One shared tile read by wgmma two ways: as a K-major B (`k` in S = Q K^T)
and as an M-major A (`k` in H += K^T V), as TileLang's chunked linear
attention reads it. Its 64 columns are one 128-byte swizzle atom, so the
column blocks the M-major use asks for are the rows themselves."""

import numpy as np
import pytest

import tlc
import tlc.language as T
from ptxas import assemble


@T.prim_func
def two_ways(Q: T.Tensor((64, 64), "float16"), K: T.Tensor((64, 64), "float16"),
             V: T.Tensor((64, 64), "float16"), S: T.Tensor((64, 64), "float32"),
             H: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        q = T.alloc_shared((64, 64), "float16")
        k = T.alloc_shared((64, 64), "float16")
        v = T.alloc_shared((64, 64), "float16")
        s = T.alloc_fragment((64, 64), "float32")
        h = T.alloc_fragment((64, 64), "float32")
        T.copy(Q, q)
        T.copy(K, k)
        T.copy(V, v)
        T.gemm(q, k, s, clear_accum=True, transpose_B=True)
        T.gemm(k, v, h, clear_accum=True, transpose_A=True)
        T.copy(s, S)
        T.copy(h, H)


def test_interpreter():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((64, 64)).astype(np.float16) for _ in range(3))
    s, h = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    tlc.interpret(two_ways, q, k, v, s, h)
    f = lambda x: x.astype(np.float32)  # noqa: E731
    np.testing.assert_allclose(s, f(q) @ f(k).T, rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(h, f(k).T @ f(v), rtol=1e-3, atol=1e-2)


def test_both_gemms_run_on_wgmma(tmp_path):
    ptx = tlc.compile(two_ways, target="sm_90a").artifact["ptx"]
    assert ptx.count("wgmma.mma_async") == 8 and "mma.sync" not in ptx
    assemble(ptx, "sm_90a", tmp_path)
