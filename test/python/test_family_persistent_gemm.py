"""examples/families/persistent_gemm.py: the persistent GEMM (T.Persistent and the
hand-written loop over waves) compiles for sm_90a (wgmma, the fp16 epilogue stored by
TMA) and sm_80 (mma.sync), launches one block per SM, assembles without spills, and
in the interpreter matches float64 numpy, sizes no block divides included."""

import numpy as np
import pytest

import tlc
from ptxas import assemble
import example_modules

ex = example_modules.load("families/persistent_gemm")

# sm_80's A100 has 163 KB of shared memory: a 128 x 128 x 32 tile with 3 stages, on
# 8 warps (on 4, the 128 accumulator registers a thread plus the persistent loop's
# state go past 255 registers and spill ~110 bytes).
CONFIGS = {
    "sm_90a": {},
    "sm_80": {"block_N": 128, "block_K": 32, "threads": 256},
}


def compiled(arch, *args, **kwargs):
    return tlc.jit(ex.persistent_matmul.factory, out_idx=[-1], target=arch, cache=False)(
        *args, **kwargs)


@pytest.mark.parametrize("prim", [True, False], ids=["T.Persistent", "loop"])
@pytest.mark.parametrize("trans_B", [True, False], ids=["NT", "NN"])
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_compiles(arch, trans_B, prim, tmp_path):
    kernel = compiled(arch, 4096, 4096, 4096, num_sms=132, trans_B=trans_B,
                      use_persistent_primitive=prim, **CONFIGS[arch])
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    # One block per SM, whatever the tile count (512 or 1024 tiles here).
    assert kernel.artifact["grid"] == ["132", "1", "1"]
    if arch == "sm_90a":
        # 128 x 256 per block: each warpgroup m64n256; fp16 tile stored with TMA.
        assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in ptx
        assert "mma.sync" not in ptx
        assert "cp.async.bulk.tensor.2d.global.shared" in ptx
    else:
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
        assert "wgmma" not in ptx
    assert "cp.async.cg.shared.global" in ptx  # the pipelined A and B copies
    assemble(ptx, arch, tmp_path)


@pytest.mark.parametrize("M,N,K,blocks,trans_B,prim", [
    (128, 192, 96, 3, True, True),      # 2 x 3 tiles over 3 blocks: whole waves
    (120, 192, 96, 4, False, True),     # a partial last wave; M not a multiple of 64
    (100, 150, 72, 3, True, False),     # no block divides M, N or K (hand-written loop)
    (160, 200, 40, 5, False, False),    # narrower last band of tile columns
])
def test_interpreter_matches_numpy(M, N, K, blocks, trans_B, prim):
    kernel = tlc.jit(ex.persistent_matmul.factory, out_idx=[-1], interpret=True)(
        M, N, K, block_M=64, block_N=64, block_K=32, threads=128, num_stages=2,
        num_sms=blocks, group_size=2, trans_B=trans_B, use_persistent_primitive=prim)
    rng = np.random.default_rng(M * N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K) if trans_B else (K, N)).astype(np.float16)
    c = kernel(a, b)
    assert c.dtype == np.float16 and c.shape == (M, N)
    np.testing.assert_allclose(c.astype(np.float64), ex.reference(a, b, trans_B),
                               rtol=2e-3, atol=2e-2)
