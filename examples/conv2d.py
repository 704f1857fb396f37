"""2-d convolution as an implicit GEMM, in TileLang's API (T.c2d_im2col).

    python examples/conv2d.py [--n 16 --c 64 --h 56 --w 56 --f 64 --k 3 --s 1 --d 1 --p 1]

out[n, oh, ow, f] = sum over (kh, kw, c) of
    data[n, oh * S - P + kh * D, ow * S - P + kw * D, c] * weight[kh, kw, c, f]

with NHWC data (N x H x W x C), KH x KW x C x F weights (the layout of
TileLang's convolution example) and an N x OH x OW x F output, zero padding
of P on each side, stride S and dilation D (ints, or (h, w) pairs). As a
GEMM: M = N * OH * OW output pixels, K = KH * KW * C, N = F. The weights are
that K x F matrix as they lie in memory, and the output that M x F matrix,
so the kernel takes both as their flattened 2-d views (`weight.view(-1, F)`
and `out.view(-1, F)` in torch, no copy); TileLang's example makes those
views inside the kernel with `T.Tensor(shape, dtype, buf.data)`, which tlc
takes too (bench/build_multi_kernel.py's `conv_view_program`; a program with
views launches as a sequence, this one as a single kernel).

A block computes block_M pixels x block_N filters. Each iteration of its
T.Pipelined loop over the block_K-wide slices of K loads its slice of the
im2col matrix (T.c2d_im2col: the pixels' taps, zeros in the padding and past
the ends) and of the weights (T.copy, rows past K read as zeros) into shared
memory, and T.gemm accumulates their product in fp32 registers; the
accumulator is rounded to fp16 and copied out. C need not be a multiple of
block_K (a slice then spans two taps); when C is a multiple of 8, the
im2col loads move 8 channels (16 bytes) at a time.

On sm_90a, with block_K = 64 and 128 threads per 64 rows of block_M, the
gemm runs on wgmma and the loop is warp-specialized: a producer warpgroup
loads the weight slices by TMA, the consumers load the im2col slices and
multiply. On sm_80 it runs on mma.sync, the weights by cp.async (block_K = 32
there: 126 registers a thread, where 64 takes 255).
"""

import argparse
import sys

import tlc
import tlc.language as T


def pair(v, what: str) -> tuple[int, int]:
    p = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(p) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in p):
        raise ValueError(f"{what} must be an int or an (h, w) pair of ints, got {v!r}")
    return p


def output_size(H: int, W: int, kernel, stride=1, padding=0, dilation=1) -> tuple[int, int]:
    """(OH, OW) of the convolution, as torch.nn.functional.conv2d computes them."""
    (KH, KW), (SH, SW) = pair(kernel, "kernel"), pair(stride, "stride")
    (PH, PW), (DH, DW) = pair(padding, "padding"), pair(dilation, "dilation")
    return ((H + 2 * PH - DH * (KH - 1) - 1) // SH + 1,
            (W + 2 * PW - DW * (KW - 1) - 1) // SW + 1)


@tlc.jit(out_idx=[-1])
def conv2d(N, C, H, W, F, kernel=3, stride=1, padding=1, dilation=1, block_M=128, block_N=128,
           block_K=64, num_stages=3, threads=256, dtype="float16"):
    """data [N, H, W, C], weight [KH * KW * C, F] (the KH x KW x C x F weights
    flattened) -> out [N * OH * OW, F] (the N x OH x OW x F output flattened).
    `kernel`, `stride`, `padding`, `dilation`: ints or (h, w) pairs."""
    KH, KW = pair(kernel, "kernel")
    OH, OW = output_size(H, W, kernel, stride, padding, dilation)
    if OH < 1 or OW < 1:
        raise ValueError(f"a {KH}x{KW} kernel (dilation {dilation}) does not fit a {H}x{W} "
                         f"image padded by {padding}")
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype must be float16 or bfloat16, not {dtype!r}")
    accum = "float32"

    @T.prim_func
    def conv(data: T.Tensor((N, H, W, C), dtype), weight: T.Tensor((KH * KW * C, F), dtype),
             out: T.Tensor((N * OH * OW, F), dtype)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M),
                      threads=threads) as (bx, by):
            data_shared = T.alloc_shared((block_M, block_K), dtype)
            weight_shared = T.alloc_shared((block_K, block_N), dtype)
            out_local = T.alloc_fragment((block_M, block_N), accum)
            T.clear(out_local)
            for k in T.Pipelined(T.ceildiv(KH * KW * C, block_K), num_stages=num_stages):
                T.c2d_im2col(data, data_shared, by, k, kernel, stride, dilation, padding)
                T.copy(weight[k * block_K, bx * block_N], weight_shared)
                T.gemm(data_shared, weight_shared, out_local)
            T.copy(out_local, out[by * block_M, bx * block_N])

    return conv


def reference(torch, data, weight, kernel, stride=1, padding=0, dilation=1):
    """The convolution by torch (cuDNN on a GPU) in fp32, as the kernel's
    flattened [N * OH * OW, F] output: data [N, H, W, C], weight [KH * KW * C, F]."""
    KH, KW = pair(kernel, "kernel")
    F = weight.shape[-1]
    x = data.float().permute(0, 3, 1, 2)  # N, C, H, W
    w = weight.float().reshape(KH, KW, -1, F).permute(3, 2, 0, 1)  # F, C, KH, KW
    y = torch.nn.functional.conv2d(x, w, stride=stride, padding=padding, dilation=dilation)
    return y.permute(0, 2, 3, 1).reshape(-1, F).to(data.dtype)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, default in (("n", 16), ("c", 64), ("h", 56), ("w", 56), ("f", 64), ("k", 3),
                          ("s", 1), ("d", 1), ("p", 1)):
        ap.add_argument(f"--{name}", type=int, default=default)
    ap.add_argument("--target", default=None, help="sm_90a (default), sm_80, ...")
    a = ap.parse_args()
    factory = conv2d if a.target is None else tlc.jit(out_idx=[-1], target=a.target)(
        conv2d.factory)
    options = {} if a.target in (None, "sm_90a") else {"block_K": 32}
    kernel = factory(a.n, a.c, a.h, a.w, a.f, a.k, a.s, a.p, a.d, **options)
    ptx = kernel.get_kernel_source()
    print(f"compiled conv2d: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('mma.sync')} mma.sync, {ptx.count('ld.global.v4')} 16-byte im2col "
          f"loads, {ptx.count('cp.async.bulk.tensor')} TMA")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    data = torch.randn(a.n, a.h, a.w, a.c, device="cuda", dtype=torch.float16)
    weight = torch.randn(a.k, a.k, a.c, a.f, device="cuda", dtype=torch.float16)
    out = kernel(data, weight.view(-1, a.f))
    ref = reference(torch, data, weight.view(-1, a.f), a.k, a.s, a.p, a.d)
    torch.testing.assert_close(out, ref, rtol=1e-2, atol=1e-1)
    oh, ow = output_size(a.h, a.w, a.k, a.s, a.p, a.d)
    print(f"matches torch.nn.functional.conv2d ({a.n}x{oh}x{ow}x{a.f} output)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
