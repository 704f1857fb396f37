"""examples/families/layer_norm.py: LayerNorm over rows held in registers
compiles for sm_90a and sm_80 to 16-byte global loads and stores that touch x
and y once, fp32 statistics reduced by warp shuffles, assembles without
spills, and matches float64 numpy in the interpreter (fp16 and bf16, row
counts no block divides)."""

import re

import numpy as np
import pytest
from ptxas import assemble

import tlc
import example_modules

OUT = [-3, -2, -1]


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/layer_norm")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("C,dtype", [(1024, "float16"), (4096, "bfloat16"), (8192, "float16")])
def test_compiles_to_16_byte_accesses(ex, arch, C, dtype, tmp_path):
    kernel = tlc.jit(ex.layer_norm.factory, out_idx=OUT, target=arch, cache=False)(
        4099, C, dtype=dtype)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    config = ex.default_config(C)
    x_vectors = config["block_M"] * C // (config["threads"] * 8)
    # x, gamma and beta arrive by 16-byte loads only; y leaves by 16-byte stores,
    # each element once (mean and rstd are the only scalar stores)
    loads = re.findall(r"ld\.global\.\S+", ptx)
    assert loads and all(op == "ld.global.v4.b32" for op in loads), set(loads)
    assert len(loads) >= x_vectors + 2
    assert ptx.count("st.global.v4.b32") == x_vectors
    assert "shfl.sync.bfly" in ptx and "rsqrt" in ptx
    assert ".local" not in ptx
    assemble(ptx, arch, tmp_path)


@pytest.mark.parametrize("C,config", [(1024, {"block_M": 4, "threads": 128}),
                                      (768, {"block_M": 4, "threads": 128}),
                                      (4096, {"block_M": 1, "threads": 128}),
                                      (8192, {"block_M": 1, "threads": 256}),
                                      (16384, {"block_M": 1, "threads": 512})])
def test_default_config(ex, C, config):
    assert ex.default_config(C) == config


@pytest.mark.parametrize("C,options,message", [
    (1000, {}, "block_M * C = 4000 must be a multiple of threads = 128"),
    (100, {}, "C must be a positive multiple of 8"),
    (1024, {"threads": 96}, "threads must be a power of two >= 32, got 96"),
])
def test_bad_configs_say_why(ex, C, options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ex.layer_norm(64, C, **options)


def bf16(a):
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("M,C,dtype,options", [
    (37, 1024, "float16", {}),                      # 4 rows a block: a partial last block
    (6, 768, "bfloat16", {}),                       # 4 rows a block, bf16
    (3, 4096, "float16", {}),                       # one row a block
    (5, 512, "bfloat16", {"block_M": 2, "threads": 64}),
])
def test_interpreter_matches_numpy(ex, M, C, dtype, options):
    rng = np.random.default_rng(M * C)
    x = rng.standard_normal((M, C)) * 3 + 1
    gamma = rng.standard_normal(C)
    beta = rng.standard_normal(C)
    if dtype == "float16":
        x, gamma, beta = (a.astype(np.float16) for a in (x, gamma, beta))
        ulp = 2.0 ** -11
    else:  # bfloat16 is passed as float32 arrays holding bf16 values
        x, gamma, beta = (bf16(a) for a in (x, gamma, beta))
        ulp = 2.0 ** -8
    kernel = tlc.jit(ex.layer_norm.factory, out_idx=OUT, interpret=True)(
        M, C, dtype=dtype, **options)
    y, mean, rstd = kernel(x, gamma, beta)
    ref_y, ref_mean, ref_rstd = ex.reference(x, gamma, beta)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-5)
    err = np.abs(y.astype(np.float64) - ref_y)
    tol = ulp * np.abs(ref_y) + 1e-5 * (np.abs(gamma.astype(np.float64)) + 1)
    assert (err <= tol).all(), err.max()


def test_optimized_ir_interprets_to_the_same_result(ex):
    """sm_80's IR after the layout, shared-memory and barrier passes."""
    rng = np.random.default_rng(7)
    M, C = 9, 1024
    x = (rng.standard_normal((M, C)) * 2).astype(np.float16)
    gamma = rng.standard_normal(C).astype(np.float16)
    beta = rng.standard_normal(C).astype(np.float16)
    y = np.full((M, C), np.nan, np.float16)
    mean = np.full(M, np.nan, np.float32)
    rstd = np.full(M, np.nan, np.float32)
    kernel = tlc.jit(ex.layer_norm.factory, out_idx=OUT, target="sm_80", cache=False)(M, C)
    tlc.interpret(kernel.get_mlir("optimized"), x, gamma, beta, y, mean, rstd)
    ref_y, ref_mean, ref_rstd = ex.reference(x, gamma, beta)
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-5)
    np.testing.assert_allclose(y.astype(np.float64), ref_y, rtol=2 ** -10, atol=1e-4)
