"""examples/families/fp8_quant.py: per-token and per-1x128-group fp8 e4m3
quantization compiles for sm_90a and sm_89 (the hardware's fp8 cvt; sm_80
converts in integer arithmetic) to 16-byte loads, saturating
round-to-nearest-even conversions (cvt.rn.satfinite.e4m3x2) and shuffle
reductions of |x|, assembles without spills, and in the interpreter gives
scales and fp8 values bit-exact against numpy (fp16 and bf16; row counts and
a K no group divides)."""

import re

import numpy as np
import pytest
from ptxas import assemble

import tlc
import example_modules

OUT = [-2, -1]


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/fp8_quant")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_89"])
@pytest.mark.parametrize("M,K,G,dtype", [(4096, 7168, None, "bfloat16"),
                                         (4096, 4096, None, "float16"),
                                         (4096, 7168, 128, "bfloat16")])
def test_compiles_to_saturating_fp8_conversions(ex, arch, M, K, G, dtype, tmp_path):
    kernel = tlc.jit(ex.fp8_quant.factory, out_idx=OUT, target=arch, cache=False)(
        M, K, group_size=G, dtype=dtype)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    config = ex.default_config(K, G)
    elements = config["block_M"] * (K if G is None else G) // config["threads"]
    # x arrives by 16-byte loads only, each element once
    loads = re.findall(r"ld\.global\.\S+", ptx)
    assert loads and set(loads) == {"ld.global.v4.b32"} and len(loads) == elements // 8
    # every element of a thread goes through a saturating, round-to-nearest-even
    # fp8 conversion, after an IEEE division by its row's scale
    assert ptx.count("cvt.rn.satfinite.e4m3x2.f32") * 2 >= elements
    assert "div.rn.f32" in ptx
    assert "shfl.sync.bfly" in ptx and "abs" in ptx
    assert ".local" not in ptx
    assemble(ptx, arch, tmp_path)


def test_sm_80_converts_in_software(ex, tmp_path):
    # fp8 cvt is an instruction of sm_89 and later: on sm_80 tlc converts in
    # integer arithmetic on the bits (as cuda_fp8.h's fallback does)
    kernel = tlc.jit(ex.fp8_quant.factory, out_idx=OUT, target="sm_80", cache=False)(256, 1024)
    ptx = kernel.get_kernel_source()
    assert "e4m3x2" not in ptx
    assemble(ptx, "sm_80", tmp_path)


@pytest.mark.parametrize("K,G,config", [(4096, None, {"block_M": 1, "threads": 128}),
                                        (1024, None, {"block_M": 4, "threads": 128}),
                                        (7168, None, {"block_M": 1, "threads": 128}),
                                        (16384, None, {"block_M": 1, "threads": 512}),
                                        (7168, 128, {"block_M": 32, "threads": 128})])
def test_default_config(ex, K, G, config):
    assert ex.default_config(K, G) == config


@pytest.mark.parametrize("K,options,message", [
    (1000, {}, "block_M * group = 4000 must be a multiple of threads = 128"),
    (100, {}, "K must be a positive multiple of 8"),
    (256, {"group_size": 512}, "group_size must be a multiple of 8 up to K = 256, got 512"),
    (1024, {"dtype": "int8"}, "dtype must be bfloat16, float16 or float32"),
])
def test_bad_configs_say_why(ex, K, options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ex.fp8_quant(64, K, **options)


def e4m3_values():
    """Every finite non-negative float8_e4m3fn value, from its bits."""
    out = []
    for b in range(0x7F):  # 0x7F is NaN
        e, m = b >> 3, b & 7
        out.append(m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    return np.array(out)


def test_reference_rounding_is_nearest_even_and_saturating(ex):
    values = e4m3_values()
    assert values[-1] == 448.0 and values[1] == 2.0 ** -9
    # every value is its own rounding, with either sign
    np.testing.assert_array_equal(ex.round_to_e4m3(values), values)
    np.testing.assert_array_equal(ex.round_to_e4m3(-values), -values)
    # midpoints go to the neighbour with an even mantissa; just off them, to the nearer
    lo, hi = values[:-1], values[1:]
    mid = ((lo + hi) / 2).astype(np.float32)  # exact in float32
    even = np.where(np.arange(len(lo)) % 2 == 0, lo, hi)
    np.testing.assert_array_equal(ex.round_to_e4m3(mid), even)
    np.testing.assert_array_equal(ex.round_to_e4m3(np.nextafter(mid, np.float32(0))), lo)
    np.testing.assert_array_equal(ex.round_to_e4m3(np.nextafter(mid, np.float32(1e9))), hi)
    # beyond 448 saturates (no infinities in e4m3fn); tiny values flush to +-0
    np.testing.assert_array_equal(ex.round_to_e4m3(np.float32([449, 464, 1e6, -1e30])),
                                  [448, 448, 448, -448])
    np.testing.assert_array_equal(ex.round_to_e4m3(np.float32([2.0 ** -11, -2.0 ** -11])), 0)


def bf16(a):
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


# a period of 8 (every group holds a 448, so the scale is 1): ties between
# neighbouring e4m3 values round to the even mantissa
TIES = [448, 1.0625, 1.1875, 3.125, 17, -1.0625, 1.5 * 2.0 ** -9, -448]
TIES_ROUNDED = [448, 1.0, 1.25, 3.0, 16, -1.0, 2.0 ** -8, -448]


@pytest.mark.parametrize("M,K,G,dtype,options", [
    (9, 1024, None, "float16", {}),                         # 4 rows a block: partial last
    (3, 4096, None, "bfloat16", {}),                        # one row a block
    (37, 512, 128, "bfloat16", {}),                         # groups: 32 rows a block
    (21, 1000, 128, "float16", {"block_M": 8}),             # K no group divides
    (6, 256, 64, "bfloat16", {"block_M": 4, "threads": 32}),
])
def test_interpreter_is_bit_exact(ex, M, K, G, dtype, options):
    rng = np.random.default_rng(M * K)
    # rows of very different magnitudes, an all-zero row, and a row whose
    # scale is 1 holding exact ties between e4m3 values (and a subnormal one)
    x = rng.standard_normal((M, K)) * rng.uniform(0.01, 20, (M, 1))
    x[M // 2] = 0
    x[0] = np.resize(TIES, K)
    x = x.astype(np.float16) if dtype == "float16" else bf16(x)
    kernel = tlc.jit(ex.fp8_quant.factory, out_idx=OUT, interpret=True)(
        M, K, group_size=G, dtype=dtype, **options)
    q, s = kernel(x)
    ref_q, ref_s = ex.reference(x, group_size=G)
    assert s.shape == ref_s.shape and q.shape == (M, K)
    np.testing.assert_array_equal(s, ref_s)
    np.testing.assert_array_equal(q, ref_q)
    np.testing.assert_array_equal(q[0, :8], TIES_ROUNDED)
    assert np.abs(q).max() == 448.0  # each row's largest |x| maps to e4m3's largest value


def test_optimized_ir_interprets_to_the_same_result(ex):
    """sm_89's IR after the layout, shared-memory and barrier passes (the
    interpreter runs no sm_90a IR past its TMA-store selection)."""
    rng = np.random.default_rng(11)
    M, K, G = 40, 384, 128
    x = (rng.standard_normal((M, K)) * 5).astype(np.float16)
    q = np.full((M, K), np.nan, np.float32)
    s = np.full((M, 3), np.nan, np.float32)
    kernel = tlc.jit(ex.fp8_quant.factory, out_idx=OUT, target="sm_89", cache=False)(
        M, K, group_size=G, dtype="float16")
    tlc.interpret(kernel.get_mlir("optimized"), x, q, s)
    ref_q, ref_s = ex.reference(x, group_size=G)
    np.testing.assert_array_equal(s, ref_s)
    np.testing.assert_array_equal(q, ref_q)
