"""T.c2d_im2col (and T.im2col, its newer TileLang name) alone: a kernel that writes
each block_M x block_K tile of the im2col matrix of an NHWC image to a global
tensor. The interpreter's results equal a numpy im2col (zeros in the padding
and past the matrix's ends), the tile IR is one T.Parallel whose iterations
move 16-byte runs of channels where C allows, the PTX loads them with
ld.global.v4, and the user's mistakes are errors at their lines."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
import marked_lines
from ptxas import assemble

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def out_size(H, W, kernel, stride, dilation, pad):
    (KH, KW), (SH, SW), (DH, DW), (PH, PW) = map(pair, (kernel, stride, dilation, pad))
    return (H + 2 * PH - DH * (KH - 1) - 1) // SH + 1, (W + 2 * PW - DW * (KW - 1) - 1) // SW + 1


def im2col_program(N, H, W, C, block_M, block_K, kernel, stride, dilation, pad,
                   dtype="float16", place="shared", name="c2d_im2col", threads=128):
    """img [N, H, W, C] -> col: the N * OH * OW x KH * KW * C im2col matrix, one
    tile per block, in a tensor of whole tiles (the rows and columns past the
    matrix's ends hold what the tiles there hold: zeros)."""
    KH, KW = pair(kernel)
    OH, OW = out_size(H, W, kernel, stride, dilation, pad)
    M = -(-N * OH * OW // block_M) * block_M
    K = -(-KH * KW * C // block_K) * block_K
    alloc = T.alloc_shared if place == "shared" else T.alloc_fragment
    op = getattr(T, name)

    @T.prim_func
    def im2col(img: T.Tensor((N, H, W, C), dtype), col: T.Tensor((M, K), dtype)):
        with T.Kernel(T.ceildiv(K, block_K), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            tile = alloc((block_M, block_K), dtype)
            op(img, tile, by, bx, kernel, stride, dilation, pad)
            T.copy(tile, col[by * block_M, bx * block_K])

    return im2col


def numpy_im2col(img, kernel, stride, dilation, pad):
    """The im2col matrix: row (n, oh, ow), column (kh, kw, c), zero in the padding."""
    N, H, W, C = img.shape
    (KH, KW), (SH, SW), (DH, DW), (PH, PW) = map(pair, (kernel, stride, dilation, pad))
    OH, OW = out_size(H, W, kernel, stride, dilation, pad)
    padded = np.zeros((N, H + 2 * PH, W + 2 * PW, C), img.dtype)
    padded[:, PH:PH + H, PW:PW + W] = img
    col = np.zeros((N, OH, OW, KH, KW, C), img.dtype)
    for kh in range(KH):
        for kw in range(KW):
            col[:, :, :, kh, kw] = padded[:, kh * DH:kh * DH + SH * (OH - 1) + 1:SH,
                                          kw * DW:kw * DW + SW * (OW - 1) + 1:SW]
    return col.reshape(N * OH * OW, KH * KW * C)


def random_image(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "int8":
        return rng.integers(-100, 100, shape).astype(np.int8)
    if dtype == "bfloat16":  # float32 arrays of bfloat16 values (numpy has no bfloat16)
        bits = rng.standard_normal(shape).astype(np.float32).view(np.uint32)
        return (bits & np.uint32(0xFFFF0000)).view(np.float32)
    return rng.standard_normal(shape).astype(np.float16 if dtype == "float16" else np.float32)


CASES = [
    # (N, H, W, C, block_M, block_K, kernel, stride, dilation, pad, options)
    (2, 8, 8, 16, 64, 32, 3, 1, 1, 1, {}),  # 8-channel vectors, a slice spans two taps
    (1, 9, 7, 24, 32, 16, 3, 2, 1, 1, {}),  # stride 2, odd sizes, a partial last row block
    (2, 10, 10, 8, 64, 32, 3, 1, 2, 2, {}),  # dilation 2
    (1, 6, 6, 5, 32, 16, 1, 1, 1, 0, {}),  # 1x1, 5 channels: one element per iteration
    (1, 7, 9, 6, 32, 16, (3, 2), (2, 1), (1, 2), (1, 0), {}),  # (h, w) pairs, 2-channel runs
    (1, 5, 5, 12, 32, 32, 3, 1, 1, 1, dict(place="fragment")),
    (1, 6, 6, 16, 32, 32, 3, 1, 1, 1, dict(name="im2col")),  # TileLang's newer name
    (1, 6, 5, 8, 32, 16, 3, 1, 1, 1, dict(dtype="float32")),  # 4-channel (16-byte) runs
    (1, 5, 6, 32, 32, 32, 2, 2, 1, 0, dict(dtype="int8")),  # 16-channel runs
    (2, 6, 6, 16, 32, 32, 3, 1, 1, 1, dict(dtype="bfloat16")),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:4])) + str(c[-1]))
def test_interpreter_matches_numpy(case):
    N, H, W, C, bm, bk, kernel, stride, dilation, pad, options = case
    dtype = options.get("dtype", "float16")
    prim = im2col_program(N, H, W, C, bm, bk, kernel, stride, dilation, pad, **options)
    img = random_image((N, H, W, C), dtype)
    matrix = numpy_im2col(img, kernel, stride, dilation, pad)
    rows, cols = (-(-n // b) * b for n, b in zip(matrix.shape, (bm, bk)))
    ref = np.zeros((rows, cols), matrix.dtype)
    ref[:matrix.shape[0], :matrix.shape[1]] = matrix
    col = np.full(ref.shape, -1, ref.dtype)
    tlc.interpret(prim, img, col)
    np.testing.assert_array_equal(col, ref)


def test_dynamic_batch():
    # N is a T.dynamic size; the output keeps the pixels of each image apart.
    N, H, W, C, bm, bk = T.dynamic("N"), 8, 8, 16, 32, 16
    per_image = (H * W) // bm

    @T.prim_func
    def im2col(img: T.Tensor((N, H, W, C), "float16"), col: T.Tensor((N, H * W, 9 * C),
                                                                    "float16")):
        with T.Kernel(9 * C // bk, N * per_image, threads=128) as (bx, by):
            tile = T.alloc_shared((bm, bk), "float16")
            T.c2d_im2col(img, tile, by, bx, 3, 1, 1, 1)
            T.copy(tile, col[by // per_image, (by % per_image) * bm, bx * bk])

    img = random_image((3, H, W, C), "float16")
    col = np.zeros((3, H * W, 9 * C), np.float16)
    tlc.interpret(im2col, img, col)
    np.testing.assert_array_equal(col.reshape(-1, 9 * C), numpy_im2col(img, 3, 1, 1, 1))


def tile_ir(prim) -> str:
    return str(prim.build_module())


def test_ir_moves_vectors_of_channels():
    # 64 channels of fp16: an iteration loads 8 (16 bytes) ...
    ir = tile_ir(im2col_program(2, 8, 8, 64, 64, 64, 3, 1, 1, 1))
    assert ir.count("tile.parallel") == 1
    assert "vector.load" in ir and "vector<8xf16>" in ir and "{alignment = 16 : i64}" in ir
    # ... and stores them as one vector into the shared tile.
    assert "memref.store" not in ir
    assert "vector.store" in ir and "vector.from_elements" in ir
    # 5 channels: one element per iteration; a fragment: the loop's own elements.
    for prim in (im2col_program(1, 6, 6, 5, 32, 16, 1, 1, 1, 0),
                 im2col_program(1, 6, 6, 16, 32, 32, 3, 1, 1, 1, place="fragment")):
        ir = tile_ir(prim)
        assert "vector<1xf16>" in ir and ir.count("memref.store") == 1


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
def test_ptx_loads_16_bytes(target, tmp_path):
    prim = im2col_program(4, 16, 16, 64, 128, 64, 3, 1, 1, 1)
    code = tlc.compile(prim, target=target).get_kernel_source()
    # 128 x 64 fp16 over 128 threads: 8 runs of 8 channels each.
    assert code.count("ld.global.v4.b32") == 8
    assert "ld.global.b16" not in code and "ld.global.u16" not in code
    assemble(code, target, tmp_path)


def test_image_is_read_only():
    meta = tlc.compile(im2col_program(2, 8, 8, 64, 64, 64, 3, 1, 1, 1)).artifact
    assert [p["access"] for p in meta["params"]] == ["read", "write"]


# -- mistakes, at their lines ----------------------------------------------------------

def compile_error(prim) -> tlc.CompilationError:
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    return e.value


def error_program(kind):
    @T.prim_func
    def bad(img: T.Tensor((2, 8, 8, 16), "float16"), flat: T.Tensor((16, 16), "float16"),
            small: T.Tensor((2, 8, 8, 16), "float32"), k: T.int32,
            dyn: T.Tensor((2, T.dynamic("H"), 8, 16), "float16")):
        with T.Kernel(4, threads=128) as bx:
            s = T.alloc_shared((64, 32), "float16")
            s3 = T.alloc_shared((4, 16, 32), "float16")
            loc = T.alloc_local((64, 32), "float16")
            if kind == "rank":
                T.c2d_im2col(flat, s, bx, 0, 3, 1, 1, 1)  # E:rank
            elif kind == "img_place":
                T.c2d_im2col(s3, s, bx, 0, 3, 1, 1, 1)  # E:img_place
            elif kind == "col_place":
                T.c2d_im2col(img, loc, bx, 0, 3, 1, 1, 1)  # E:col_place
            elif kind == "col_rank":
                T.c2d_im2col(img, s3, bx, 0, 3, 1, 1, 1)  # E:col_rank
            elif kind == "dtype":
                T.c2d_im2col(small, s, bx, 0, 3, 1, 1, 1)  # E:dtype
            elif kind == "kernel":
                T.c2d_im2col(img, s, bx, 0, k, 1, 1, 1)  # E:kernel
            elif kind == "stride":
                T.c2d_im2col(img, s, bx, 0, 3, 0, 1, 1)  # E:stride
            elif kind == "pad":
                T.im2col(img, s, bx, 0, 3, 1, 1, (1, -1))  # E:pad
            elif kind == "fit":
                T.c2d_im2col(img, s, bx, 0, 5, 1, 3, 0)  # E:fit
            elif kind == "dynamic":
                T.c2d_im2col(dyn, s, bx, 0, 3, 1, 1, 1)  # E:dynamic
            elif kind == "step":
                T.c2d_im2col(img, s, bx, 0.5, 3, 1, 1, 1)  # E:step
            elif kind == "eviction":
                T.c2d_im2col(img, s, bx, 0, 3, 1, 1, 1, eviction_policy="evict_first")  # E:eviction
            elif kind == "parallel":
                for i in T.Parallel(4):
                    T.c2d_im2col(img, s, bx, i, 3, 1, 1, 1)  # E:parallel

    return bad


ERRORS = [
    ("rank", "flat", "T.c2d_im2col reads an N x H x W x C global tensor (NHWC); 'flat' is a "
                     "2-d global buffer"),
    ("img_place", "s3", "'s3' is a 3-d shared buffer"),
    ("col_place", "loc", "T.c2d_im2col writes a block_M x block_K shared buffer or fragment; "
                         "'loc' is a 2-d local buffer"),
    ("col_rank", "s3", "'s3' is a 3-d shared buffer"),
    ("dtype", "s, bx", "T.c2d_im2col: 's' is float16 but the image 'small' is float32"),
    ("kernel", "k, 1", "T.c2d_im2col's kernel must be a compile-time int or an (h, w) pair of "
                       "ints, got a run-time int32 value"),
    ("stride", "0, 1, 1)", "T.c2d_im2col's stride must be at least 1, got 0"),
    ("pad", "(1, -1)", "T.im2col's pad must be at least 0, got -1"),
    ("fit", "T.c2d_im2col", "a 5x5 kernel with dilation (3, 3) does not fit the 8x8 image "
                            "padded by (0, 0): the output would be -4x-4"),
    ("dynamic", "dyn", "T.c2d_im2col needs the image's H at compile time; 'dyn' has a dynamic H"),
    ("step", "0.5", "T.c2d_im2col's c_step must be an integer, got 0.5"),
    ("eviction", "eviction_policy=", "the argument 'eviction_policy' is not supported yet by tlc "
                                     "(cache eviction hints)"),
    ("parallel", "T.c2d_im2col", "T.c2d_im2col cannot be inside T.Parallel"),
]


@pytest.mark.parametrize("kind,at,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_at_the_line(kind, at, message):
    error = compile_error(error_program(kind))
    marked_lines.assert_error_at(error, THIS, LINES, kind, at, message)
