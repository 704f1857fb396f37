"""examples/families/dequant_gemm.py: the int4 weight-only GEMM compiles for sm_90a
(wgmma) and sm_80 (mma.sync) with its tiles loaded by cp.async and the weights unpacked
in registers, assembles without spills, and in the interpreter matches a float64 numpy
reference, also where no block divides M or N and with M dynamic."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import tlc.language as T
import example_modules


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/dequant_gemm")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("M", [16, 4096])
def test_compiles(ex, arch, M, tmp_path):
    kernel = tlc.jit(ex.dequant_gemm.factory, out_idx=[-1], target=arch, cache=False)(
        M, 4096, 4096, **ex.default_config(M))
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    if arch == "sm_90a":
        assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx
        # the two weight tiles let a step's wgmma stay pending while the next unpacks
        waits = [line.split()[-1] for line in ptx.splitlines() if "wgmma.wait_group" in line]
        assert waits == ["1;", "0;"], waits
    else:
        assert "mma.sync" in ptx and "wgmma" not in ptx
    # A, the packed weights and the scales are all loaded by cp.async (16 bytes each),
    # nothing synchronously from global memory; the weights unpacked to fp16 in
    # registers (int -> fp16 conversions, scaled two at a time) and stored to shared
    # memory 16 bytes at a time.
    assert "cp.async.cg.shared.global" in ptx and "ld.global" not in ptx
    assert "cvt.rn.f16.s16" in ptx and "mul.rn.f16x2" in ptx
    assert "st.shared.v4.b32" in ptx
    assemble(ptx, arch, tmp_path)


def _inputs(M, N, K, group_size, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    wq = rng.integers(0, 256, (N, K // 2), dtype=np.uint8)
    scales = (rng.random((K // group_size, N)) * 0.05 + 0.005).astype(np.float16)
    return a, wq, scales


SMALL = dict(block_M=64, block_N=64, threads=128)


@pytest.mark.parametrize("M,N,K,options", [
    (64, 128, 256, dict(SMALL, block_K=64)),                    # group spans 2 K steps
    (50, 72, 256, dict(SMALL, block_K=128)),                    # M, N no block divides
    (33, 64, 512, dict(SMALL, block_K=256)),                    # 2 groups a K step
    (20, 64, 256, dict(SMALL, block_K=64, group_size=32)),      # groups of 32
    (40, 64, 256, dict(SMALL, block_K=64, out_dtype="float32")),
])
def test_interpreter_matches_numpy(ex, M, N, K, options):
    group_size = options.get("group_size", 128)
    a, wq, scales = _inputs(M, N, K, group_size, M + N)
    kernel = tlc.jit(ex.dequant_gemm.factory, out_idx=[-1], interpret=True)(M, N, K, **options)
    c = kernel(a, wq, scales)
    assert c.dtype == np.dtype(options.get("out_dtype", "float16")) and c.shape == (M, N)
    ref = ex.reference(a, wq, scales, group_size)
    # weights rounded to fp16 once, fp32 sums, the fp16 output's own rounding
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3,
                               atol=1e-3 * np.abs(ref).max())


def test_dynamic_m(ex):
    kernel = tlc.jit(ex.dequant_gemm.factory, out_idx=[-1], interpret=True)(
        T.dynamic("M"), 64, 256, **SMALL)
    for M in (3, 70):
        a, wq, scales = _inputs(M, 64, 256, 128, M)
        c = kernel(a, wq, scales)
        ref = ex.reference(a, wq, scales)
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3,
                                   atol=1e-3 * np.abs(ref).max())


def test_pack_round_trip(ex):
    codes = np.random.default_rng(0).integers(0, 16, (8, 32))
    assert (ex.unpack_int4(ex.pack_int4(codes)) == codes).all()


def test_bad_group_size(ex):
    with pytest.raises(ValueError, match="must divide one another"):
        ex.dequant_gemm.factory(64, 64, 384, group_size=128, block_K=96)


def test_optimized_ir_interprets(ex):
    """sm_80's IR after the layout (the packed loop split), pipelining, shared-memory
    and barrier passes."""
    M, N, K = 50, 72, 512
    a, wq, scales = _inputs(M, N, K, 128, 9)
    kernel = tlc.jit(ex.dequant_gemm.factory, out_idx=[-1], target="sm_80", cache=False)(
        M, N, K, **SMALL)
    c = np.full((M, N), np.nan, np.float16)
    tlc.interpret(kernel.get_mlir("optimized"), a, wq, scales, c)
    ref = ex.reference(a, wq, scales)
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2e-3,
                               atol=1e-3 * np.abs(ref).max())
