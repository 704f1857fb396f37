"""examples/rmsnorm_silu.py: every channel count compiles for sm_90a and sm_80 to
16-byte global accesses that read each element of x once, whole rows in registers
reduced by thread groups the compiler chose (shuffles only within a warp); the interpreter
matches numpy, for whole rows and for chunks, also when the rows per block do not
divide N."""

import re

import numpy as np
import pytest
from ptxas import assemble

import tlc
import example_modules

CHANNELS = (160, 256, 320, 512, 640, 1024, 4096)


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("rmsnorm_silu")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("channels", CHANNELS)
def test_compiles_to_16_byte_accesses(ex, arch, channels, tmp_path):
    config = ex.default_config(channels)
    bm, bc, threads = config["block_M"], config["block_C"], config["threads"]
    kernel = tlc.jit(ex.rmsnorm_silu.factory, out_idx=[-1], target=arch, cache=False)(
        1003, channels)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    # x: each thread loads its share of the block's rows once; gamma: its columns once
    # (whole rows: a row's 16-byte pieces are dealt to a group of threads); y: stored
    # once. Every global access is 16 bytes wide.
    assert bc == channels
    x_vectors = bm * channels // (threads * 8)
    gamma_vectors = channels // 8 // ex._row_group(channels, threads)
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == x_vectors + gamma_vectors
    assert len(re.findall(r"ld\.global", ptx)) == x_vectors + gamma_vectors
    assert len(re.findall(r"st\.global\.v4\.b32", ptx)) == x_vectors
    assert len(re.findall(r"st\.global", ptx)) == x_vectors
    assert ".local" not in ptx
    if ex._row_group(channels, threads) <= 32:  # rows within a warp: reduced by shuffles
        assert ".shared" not in ptx and "bar.sync" not in ptx
    assert ptx.count("div.rn.f32") <= 1  # sum / C only: the default sigmoid divides nothing
    assemble(ptx, arch, tmp_path)


@pytest.mark.parametrize("arch,channels,options", [("sm_90a", 640, {}), ("sm_80", 4096, {}),
                                                   ("sm_90a", 320, {"block_C": 64}),
                                                   ("sm_90a", 288, {}), ("sm_80", 1056, {})])
def test_ieee_sigmoid_compiles(ex, arch, channels, options, tmp_path):
    kernel = tlc.jit(ex.rmsnorm_silu.factory, out_idx=[-1], target=arch, cache=False)(
        1003, channels, sigmoid="div", **options)
    ptx = kernel.get_kernel_source()
    assert "div.rn.f32" in ptx and ".local" not in ptx
    assemble(ptx, arch, tmp_path)


@pytest.mark.parametrize("channels", CHANNELS)
def test_default_config_fills_each_thread(ex, channels):
    c = ex.default_config(channels)
    assert c["block_C"] == channels  # whole rows
    group = ex._row_group(channels, c["threads"])
    assert (channels // 8) % group == 0 and group & (group - 1) == 0
    assert c["block_M"] % (c["threads"] // group) == 0
    assert c["threads"] * 32 <= c["block_M"] * channels <= c["threads"] * 64


@pytest.mark.parametrize("channels,threads", [(8192, 256), (65536, 1024), (96, 64), (2048, 64),
                                              (4096, 128)])
def test_default_config_wide_and_narrow_rows(ex, channels, threads):
    c = ex.default_config(channels)
    assert c["threads"] == threads and c["block_C"] == channels
    assert c["block_M"] * channels // threads in (32, 48, 64)


@pytest.mark.parametrize("channels,block_M,block_C", [(288, 16, 32), (576, 8, 64),
                                                    (1056, 16, 32), (2080, 16, 32)])
def test_rows_with_few_factors_of_two_take_chunks(ex, channels, block_M, block_C):
    # 36 pieces a row of 288 go to groups of 4 threads: whole rows would give a
    # thread 72 elements, so power-of-two chunks through shared memory instead
    assert ex.default_config(channels) == {"block_M": block_M, "block_C": block_C,
                                           "threads": 64}


def test_default_config_names_rows_that_do_not_fit(ex):
    with pytest.raises(ValueError, match="C = 4128: 32-column chunks of one 16-byte vector "
                                         "per thread need 32 rows a block = 264192 bytes of "
                                         "shared memory"):
        ex.default_config(4128)


def numpy_reference(x, gamma, eps=1e-6):
    xf = x.astype(np.float64)
    v = xf / np.sqrt((xf * xf).mean(axis=1, keepdims=True) + eps) * gamma.astype(np.float64)
    return v / (1 + np.exp(-v))


def assert_fp16_rounding(y, ref):
    """y is an fp16 rounding of an fp32 computation of ref: within one fp16 ulp."""
    err = np.abs(y.astype(np.float64) - ref)
    assert (err <= 2.0 ** -10 * np.abs(ref) + 2.0 ** -24).all(), err.max()


@pytest.mark.parametrize("n,channels,options", [
    (37, 160, {}),                                 # 32 rows per block: a partial last block
    (5, 4096, {}),                                 # whole rows of 4096
    (5, 4096, {"block_C": 1024}),                  # 4 chunks of 1024 columns
    (21, 160, {"block_C": 32}),                    # 5 chunks of 32
    (19, 320, {"sigmoid": "div"}),
    (3, 256, {"block_M": 8, "block_C": 128}),      # 2 chunks, 3 of 8 rows real
    (21, 288, {}),                                 # chunks by default, through registers
    (17, 1056, {}),                                # chunks, loaded straight to shared
])
def test_interpreter_matches_numpy(ex, n, channels, options):
    rng = np.random.default_rng(channels)
    x = (rng.standard_normal((n, channels)) * 3).astype(np.float16)
    gamma = rng.standard_normal(channels).astype(np.float16)
    kernel = tlc.jit(ex.rmsnorm_silu.factory, out_idx=[-1], interpret=True)(n, channels,
                                                                            **options)
    y = kernel(x, gamma)
    assert y.dtype == np.float16 and y.shape == (n, channels)
    assert_fp16_rounding(y, numpy_reference(x, gamma))


@pytest.mark.parametrize("channels,options,message", [
    (100, {}, "C must be a positive multiple of 32, got 100"),
    (256, {"threads": 96}, "threads must be a power of two >= 32, got 96"),
    (320, {"block_C": 128}, "block_C must be C or a power of two >= 32 dividing C = 320, "
                            "got 128"),
    (256, {"block_M": 2, "block_C": 128, "threads": 128},
     "block_M * block_C = 256 must be a multiple of threads * 8 = 1024"),
    (320, {"block_M": 7, "threads": 128}, "block_M must be a multiple of 16 for whole rows of C = 320 on 128 "
                          "threads (8 threads a row), got 7"),
    (256, {"sigmoid": "tanh"}, "sigmoid must be one of ('rsqrt', 'div'), got 'tanh'"),
])
def test_bad_configs_say_which_parameter(ex, channels, options, message):
    with pytest.raises(ValueError) as e:
        ex.rmsnorm_silu(64, channels, **options)
    assert message in str(e.value)


def test_optimized_ir_interprets_to_the_same_result(ex):
    """The IR after the layout, shared-memory and barrier passes, interpreted."""
    rng = np.random.default_rng(5)
    n, channels = 37, 640
    x = (rng.standard_normal((n, channels)) * 3).astype(np.float16)
    gamma = rng.standard_normal(channels).astype(np.float16)
    y = np.full((n, channels), np.nan, np.float16)
    kernel = tlc.jit(ex.rmsnorm_silu.factory, out_idx=[-1], cache=False)(n, channels,
                                                                        threads=64)
    tlc.interpret(kernel.get_mlir("optimized"), x, gamma, y)
    assert_fp16_rounding(y, numpy_reference(x, gamma))
