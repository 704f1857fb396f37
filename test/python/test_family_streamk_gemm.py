"""examples/families/streamk_gemm.py: the hand-written stream-K GEMM compiles for sm_90a
(wgmma, the partial tiles added with vector `red.global.add`) and sm_80 (mma.sync,
`atom.global.add`), on one block per SM, with cp.async-pipelined K loops and no spills;
in the interpreter (C zeroed first, as the caller must) it matches float64 numpy when
the stream-K pieces cross tile boundaries, with data-parallel waves beside them, and at
sizes no block divides."""

import numpy as np
import pytest

import tlc
from ptxas import assemble
import example_modules

ex = example_modules.load("families/streamk_gemm")


@pytest.mark.parametrize("M,N,K", [(256, 1024, 16384), (4096, 4096, 1024)])
@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_compiles(arch, M, N, K, tmp_path):
    sms = {"sm_90a": 132, "sm_80": 108}[arch]
    kernel = tlc.jit(ex.streamk_matmul.factory, target=arch, cache=False)(M, N, K, num_sms=sms)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    assert kernel.artifact["grid"] == [str(sms), "1", "1"]
    if arch == "sm_90a":
        # 128 x 128 blocks on two warpgroups: m64n128k16, 4 per 64-deep K step, one
        # K loop for the data-parallel tiles and the stream-K stretches alike.
        assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16") == 4
        # Partial tiles: each thread adds its accumulator pairs as 2-float vector reductions.
        assert ptx.count("red.global.add.v2.f32") == 128 * 128 // 256 // 2
        assert "mma.sync" not in ptx
    else:
        assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
        assert ptx.count("atom.global.add.f32") == 128 * 128 // 256
    # The K loop is pipelined: 3 stages of cp.async (16 bytes: 128 x 64 fp16 tiles of
    # A and B over 256 threads is 8 a stage; two stages ahead before the loop, one in it).
    assert ptx.count("cp.async.cg.shared.global") == 3 * 8 and "cp.async.wait_group" in ptx
    assemble(ptx, arch, tmp_path)


@pytest.mark.parametrize("M,N,K,sms,plan", [
    (128, 128, 1024, 3, (3, 0, 4, 32)),    # 4 tiles of 32 iterations, 42-43 per block
    (256, 128, 256, 3, (3, 3, 5, 8)),      # one data-parallel wave, 5 stream-K tiles
    (100, 90, 200, 4, (4, 4, 0, 7)),       # whole waves only; no block divides M, N, K
    (100, 90, 200, 3, (3, 0, 4, 7)),       # 28 iterations over 3 blocks, ragged edges
    (64, 64, 96, 5, (3, 0, 1, 3)),         # fewer iterations than SMs: one block each
])
def test_interpreter_matches_numpy(M, N, K, sms, plan):
    assert ex.streamk_plan(M, N, K, 64, 64, 32, sms) == plan
    kernel = tlc.jit(ex.streamk_matmul.factory, interpret=True)(
        M, N, K, block_M=64, block_N=64, block_K=32, threads=128, num_stages=2, num_sms=sms)
    rng = np.random.default_rng(M + N + K + sms)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float32)  # the kernel adds its partial tiles into C
    kernel(a, b, c)
    np.testing.assert_allclose(c, ex.reference(a, b), rtol=1e-5, atol=1e-4)
