"""A hand double-buffered gemm operand (`w_s[k % 2, :, :]`, TileLang's dequantizing GEMMs)
is the program's own staging whether the stage index is named once (`slot = k % 2`) or
spelled at each use: the same index expression is one index, so sm_90a's wgmma stays one
group pending (`wgmma.wait_group 1` in the loop) and `wg_wait=1` is honoured; the
interpreter gives the same result either way."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import tlc.language as T


def program(named: bool, wg_wait):
    @T.prim_func
    def staged(A: T.Tensor((128, 512), "float16"), W: T.Tensor((128, 512), "float16"),
               C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared((128, 64), "float16")
            w_f = T.alloc_fragment((128, 64), "float16")
            w_s = T.alloc_shared((2, 128, 64), "float16")
            acc = T.alloc_fragment((128, 128), "float32")
            T.clear(acc)
            for k in T.Pipelined(8, num_stages=4):
                T.copy(A[0, k * 64], a_s)
                T.copy(W[0, k * 64], w_f)
                for i, j in T.Parallel(128, 64):
                    w_f[i, j] = w_f[i, j] * 2
                if named:
                    slot = k % 2
                    T.copy(w_f, w_s[slot, :, :])
                    if wg_wait is None:
                        T.gemm(a_s, w_s[slot, :, :], acc, transpose_B=True)
                    else:
                        T.gemm(a_s, w_s[slot, :, :], acc, transpose_B=True, wg_wait=wg_wait)
                else:
                    T.copy(w_f, w_s[k % 2, :, :])
                    if wg_wait is None:
                        T.gemm(a_s, w_s[k % 2, :, :], acc, transpose_B=True)
                    else:
                        T.gemm(a_s, w_s[k % 2, :, :], acc, transpose_B=True, wg_wait=wg_wait)
            T.copy(acc, C)

    return staged


@pytest.mark.parametrize("named", [True, False])
@pytest.mark.parametrize("wg_wait", [None, 1])
def test_one_group_stays_pending(named, wg_wait, tmp_path):
    ptx = tlc.compile(program(named, wg_wait), target="sm_90a").get_kernel_source()
    waits = [line.split()[-1] for line in ptx.splitlines() if "wgmma.wait_group" in line]
    assert waits == ["1;", "0;"], waits
    assemble(ptx, "sm_90a", tmp_path)


def test_both_spellings_compute_the_same():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 512)).astype(np.float16)
    w = rng.standard_normal((128, 512)).astype(np.float16)
    want = a.astype(np.float32) @ (2 * w.astype(np.float32)).T
    for named in (True, False):
        c = np.zeros((128, 128), np.float32)
        tlc.interpret(program(named, None), a, w, c)
        np.testing.assert_allclose(c, want, rtol=1e-3, atol=1e-2)
