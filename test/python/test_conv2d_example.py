"""examples/conv2d.py: a 2-d convolution as an implicit GEMM (T.c2d_im2col, T.copy of the
weights, T.gemm in a T.Pipelined loop). On sm_90a its gemm runs on wgmma in a
warp-specialized loop (the weights by TMA), on sm_80 on mma.sync with cp.async; the
im2col loads are 16-byte vectors when C is a multiple of 8; every build assembles
without spills; the interpreter's results equal a numpy convolution."""

import numpy as np
import pytest

import tlc

from ptxas import assemble
import example_modules

EXAMPLE = example_modules.EXAMPLES / "conv2d.py"
WARP_SPECIALIZED = ("cp.async.bulk.tensor", "wgmma.mma_async", "setmaxnreg")


@pytest.fixture(scope="module")
def conv():
    return example_modules.load("conv2d")


def compiled(conv, *args, target="sm_90a", **kwargs):
    return tlc.compile(conv.conv2d.factory(*args, **kwargs), target=target)


# (N, C, H, W, F, kernel, stride, padding, dilation), realistic layers
REALISTIC = [(16, 64, 56, 56, 64, 3, 1, 1, 1), (16, 256, 56, 56, 256, 3, 1, 1, 1),
             (16, 128, 28, 28, 128, 3, 2, 1, 1)]


@pytest.mark.parametrize("shape", REALISTIC, ids=lambda s: "x".join(map(str, s)))
def test_sm90a_wgmma_warp_specialized(conv, shape, tmp_path):
    code = compiled(conv, *shape).get_kernel_source()
    for marker in WARP_SPECIALIZED:
        assert marker in code, marker
    assert "mma.sync" not in code
    # A 128 x 64 im2col slice over the 256 consumer threads: 4 runs of 8 channels each.
    assert code.count("ld.global.v4.b32") == 4
    assert "ld.global.b16" not in code
    # ... each stored into the swizzled shared tile as one 16-byte vector.
    assert code.count("st.shared.v4.b32") == 4
    assert "st.shared.b16" not in code
    assemble(code, "sm_90a", tmp_path)


@pytest.mark.parametrize("shape", REALISTIC[:1] + [(4, 40, 17, 17, 24, 3, 2, 1, 1)],
                         ids=lambda s: "x".join(map(str, s)))
def test_sm80_mma_sync(conv, shape, tmp_path):
    code = compiled(conv, *shape, target="sm_80", block_K=32).get_kernel_source()
    assert "mma.sync" in code and "cp.async.cg" in code and "wgmma" not in code
    assert code.count("ld.global.v4.b32") == 2  # 128 x 32 over 256 threads
    assert code.count("st.shared.v4.b32") == 2 and "st.shared.b16" not in code
    assemble(code, "sm_80", tmp_path)


def test_channels_not_a_multiple_of_8(conv, tmp_path):
    # An RGB input layer: the im2col loads one element per iteration.
    for target in ("sm_90a", "sm_80"):
        code = compiled(conv, 8, 3, 32, 32, 64, 7, 2, 3, 1, target=target).get_kernel_source()
        assert "ld.global.v4" not in code and "ld.global.b16" in code
        assemble(code, target, tmp_path)


def numpy_conv2d(x, w, stride, padding, dilation):
    """NHWC x, KH x KW x C x F w -> N x OH x OW x F, in fp32."""
    N, H, W, C = x.shape
    KH, KW, _, F = w.shape
    OH = (H + 2 * padding - dilation * (KH - 1) - 1) // stride + 1
    OW = (W + 2 * padding - dilation * (KW - 1) - 1) // stride + 1
    padded = np.zeros((N, H + 2 * padding, W + 2 * padding, C), np.float32)
    padded[:, padding:padding + H, padding:padding + W] = x
    out = np.zeros((N, OH, OW, F), np.float32)
    for kh in range(KH):
        for kw in range(KW):
            taps = padded[:, kh * dilation:kh * dilation + stride * (OH - 1) + 1:stride,
                          kw * dilation:kw * dilation + stride * (OW - 1) + 1:stride]
            out += taps @ w[kh, kw].astype(np.float32)
    return out


SMALL = dict(block_M=64, block_N=64, block_K=32, threads=128, num_stages=2)
CASES = [
    # (N, C, H, W, F, kernel, stride, padding, dilation)
    (2, 32, 8, 8, 32, 3, 1, 1, 1),  # C a multiple of block_K: one tap per slice
    (2, 16, 8, 8, 24, 3, 1, 1, 1),  # slices span two taps; F no block divides
    (1, 24, 9, 7, 16, 3, 2, 1, 1),  # stride 2, 24 channels
    (2, 8, 10, 10, 8, 3, 1, 2, 2),  # dilation 2
    (1, 48, 6, 6, 40, 1, 1, 0, 1),  # 1x1, no padding
    (1, 40, 7, 7, 16, 1, 2, 0, 1),  # 1x1, stride 2
    (1, 5, 6, 6, 8, 3, 1, 0, 1),  # 5 channels: element-wise im2col
    (1, 12, 5, 5, 16, 3, 2, 1, 2),  # stride 2 and dilation 2
]


@pytest.mark.parametrize("shape", CASES, ids=lambda s: "x".join(map(str, s)))
def test_interpreter_matches_numpy(conv, shape):
    N, C, H, W, F, K, S, P, D = shape
    prim = conv.conv2d.factory(N, C, H, W, F, K, S, P, D, **SMALL)
    OH, OW = conv.output_size(H, W, K, S, P, D)
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal((N, H, W, C)).astype(np.float16)
    w = rng.standard_normal((K, K, C, F)).astype(np.float16)
    out = np.full((N * OH * OW, F), np.nan, np.float16)
    tlc.interpret(prim, x, w.reshape(-1, F), out)
    ref = numpy_conv2d(x, w, S, P, D).reshape(-1, F)
    np.testing.assert_allclose(out.astype(np.float32), ref, rtol=1e-2, atol=2e-2)


def test_interpreter_default_config(conv):
    # The sm_90a configuration itself (128 x 128 x 64 blocks, 256 threads).
    N, C, H, W, F = 1, 64, 12, 12, 128
    prim = conv.conv2d.factory(N, C, H, W, F, 3, 1, 1, 1)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((N, H, W, C)).astype(np.float16)
    w = rng.standard_normal((3, 3, C, F)).astype(np.float16)
    out = np.full((N * H * W, F), np.nan, np.float16)
    tlc.interpret(prim, x, w.reshape(-1, F), out)
    np.testing.assert_allclose(out.astype(np.float32),
                               numpy_conv2d(x, w, 1, 1, 1).reshape(-1, F), rtol=1e-2, atol=5e-2)


@pytest.mark.parametrize("kwargs,message", [
    (dict(dtype="float32"), "dtype must be float16 or bfloat16, not 'float32'"),
    (dict(kernel=9, padding=0), "a 9x9 kernel (dilation 1) does not fit a 8x8 image padded by 0"),
    (dict(kernel=(3, 3, 3)), "kernel must be an int or an (h, w) pair of ints, got (3, 3, 3)"),
])
def test_factory_errors(conv, kwargs, message):
    with pytest.raises(ValueError) as e:
        conv.conv2d.factory(1, 16, 8, 8, 16, **kwargs)
    assert str(e.value) == message


def test_too_much_shared_memory_is_an_error_at_the_loop(conv):
    with pytest.raises(tlc.CompilationError) as e:
        compiled(conv, 16, 64, 56, 56, 64, block_M=256, block_N=256, block_K=128, num_stages=4,
                 threads=512)
    lines = EXAMPLE.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if "in T.Pipelined(" in text)
    assert (e.value.location.file, e.value.location.line) == (str(EXAMPLE), line), str(e.value)
    assert ("num_stages = 4 keeps 4 copies of 65536 bytes of shared buffers, more than the "
            "232448 bytes a block has on sm_90a") in str(e.value)



@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_pipelined_ir_interprets_the_same(conv, target):
    # The IR after tile-pipeline-loops (cp.async stages on sm_80 and sm_90)
    # computes what the program does. (On sm_90a these blocks are a TMA
    # producer and wgmma consumers, which the interpreter does not run.)
    prim = conv.conv2d.factory(1, 16, 8, 8, 32, 3, 1, 1, 1, **SMALL)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 8, 8, 16)).astype(np.float16)
    w = rng.standard_normal((144, 32)).astype(np.float16)
    outs = [np.full((64, 32), np.nan, np.float16) for _ in range(2)]
    tlc.interpret(prim, x, w, outs[0])
    tlc.interpret(tlc.compile(prim, target=target).get_mlir("optimized"), x, w, outs[1])
    np.testing.assert_array_equal(outs[0], outs[1])
