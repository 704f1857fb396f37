"""Compile the 2-d convolution checks and benchmarks (examples/conv2d.py) to artifacts.

    python bench/build_conv2d.py OUT_DIR

The kernel takes data [N, H, W, C] (NHWC), weight [KH * KW * C, F] (the KH x KW x
C x F weights flattened) and writes out [N * OH * OW, F] (N x OH x OW x F
flattened). Every artifact carries a "check" entry for test/gpu/run_artifacts.py:
the expected output is the example's `reference`, torch.nn.functional.conv2d in
fp32 on NCHW permutes of the same tensors, rounded to fp16.

check_<config>_<shape>.tlcart: small shapes (3x3 and 1x1 kernels, stride 1 and 2,
padding 0 to 3, dilation 2, C a multiple of block_K, smaller than it, not a
multiple of 8 (3 and 5: element-wise im2col), F no block divides) with configs
"ws" (the example's default: 128 x 128 x 64 blocks, 256 threads, 3 stages; on
sm_90a wgmma, warp-specialized with the weights by TMA), "nows" (the same with
`tl.disable_warp_specialized`: wgmma, cp.async weights), "sm80" (mma.sync,
block_K 32) and "sm90" (sm_90 without the a: mma.sync, cp.async).

bench_<config>_<shape>.tlcart: N = 16 layers of a ResNet-50-like network
(56x56 C = F = 64 and 256, 28x28 C = F = 128 with stride 2, a 56x56 1x1 from 256
to 64 channels, 14x14 C = F = 256, 7x7 C = F = 512) in several block configs,
which bench/conv2d_gpu.py checks and times beside cuDNN; run_artifacts.py checks
them too.

<shape> is n<N>h<H>w<W>c<C>f<F>k<K>s<S>p<P>d<D>.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import conv2d  # noqa: E402
from checks import save_checked  # noqa: E402

import tlc  # noqa: E402

# (N, C, H, W, F, kernel, stride, padding, dilation)
CHECK_SHAPES = [
    (2, 64, 16, 16, 64, 3, 1, 1, 1),  # C = block_K: one tap per K slice
    (2, 128, 9, 11, 72, 3, 1, 1, 1),  # two slices per tap; F no block divides
    (2, 32, 15, 17, 48, 3, 2, 1, 1),  # stride 2; slices span two taps
    (2, 24, 12, 12, 40, 3, 1, 2, 2),  # dilation 2, 24 channels
    (3, 40, 10, 10, 72, 3, 2, 1, 2),  # stride and dilation 2
    (4, 96, 9, 9, 64, 1, 1, 0, 1),  # 1x1
    (3, 40, 10, 10, 72, 1, 2, 0, 1),  # 1x1, stride 2
    (2, 3, 32, 32, 64, 7, 2, 3, 1),  # an RGB stem: 3 channels, element-wise im2col
    (1, 5, 8, 8, 16, 3, 1, 0, 1),  # no padding, 5 channels
    (1, 16, 6, 6, 8, 5, 1, 2, 1),  # 5x5
]
CHECK_CONFIGS = {
    "ws": ("sm_90a", {}, {}),
    "nows": ("sm_90a", {}, {"tl.disable_warp_specialized": True}),
    "sm80": ("sm_80", {"block_K": 32}, {}),
    "sm90": ("sm_90", {"block_K": 32}, {}),
}
BENCH_SHAPES = [
    (16, 64, 56, 56, 64, 3, 1, 1, 1),
    (16, 256, 56, 56, 256, 3, 1, 1, 1),
    (16, 128, 28, 28, 128, 3, 2, 1, 1),
    (16, 256, 56, 56, 64, 1, 1, 0, 1),
    (16, 256, 14, 14, 256, 3, 1, 1, 1),
    (16, 512, 7, 7, 512, 3, 1, 1, 1),
]
NO_WS = {"tl.disable_warp_specialized": True}
BENCH_CONFIGS = {  # name: (factory options, pass configs, smallest F it is built for)
    "ws": ({}, {}, 0),
    "ws-s4": ({"num_stages": 4}, {}, 0),
    "ws-k128": ({"block_K": 128, "num_stages": 2}, {}, 0),
    "ws-m64": ({"block_M": 64, "threads": 128}, {}, 0),
    "ws-n64": ({"block_N": 64}, {}, 0),
    "ws-n256": ({"block_N": 256}, {}, 256),
    "nows": ({}, NO_WS, 0),
    "nows-n256": ({"block_N": 256}, NO_WS, 256),
    "nows-m64n64": ({"block_M": 64, "block_N": 64, "threads": 128}, NO_WS, 0),
    "nows-m64": ({"block_M": 64, "threads": 128}, NO_WS, 0),
}


def shape_token(shape) -> str:
    n, c, h, w, f, k, s, p, d = shape
    return f"n{n}h{h}w{w}c{c}f{f}k{k}s{s}p{p}d{d}"


def check_entry(shape) -> dict:
    _, c, _, _, _, k, s, p, d = shape
    return {"modules": {"conv": "examples/conv2d.py"},
            "expect": {"out": f"conv.reference(torch, data, weight, {k}, {s}, {p}, {d})"},
            # fp16 outputs of sums of K = k * k * C products of randn values: within
            # about one fp16 rounding of the fp32 result
            "atol": 5e-2, "rtol": 1e-2, "seed": c + k, "conv": list(shape)}


def build(shape, target: str, options: dict, pass_configs: dict):
    factory = tlc.jit(out_idx=[-1], target=target, pass_configs=pass_configs)(
        conv2d.conv2d.factory)
    return factory(*shape, **options)


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    count = 0
    for shape in CHECK_SHAPES:
        for config, (target, options, pass_configs) in CHECK_CONFIGS.items():
            kernel = build(shape, target, options, pass_configs)
            save_checked(kernel.artifact, check_entry(shape),
                         os.path.join(out, f"check_{config}_{shape_token(shape)}.tlcart"))
            count += 1
    for shape in BENCH_SHAPES:
        for config, (options, pass_configs, min_f) in BENCH_CONFIGS.items():
            if shape[4] < min_f:
                continue
            kernel = build(shape, "sm_90a", options, pass_configs)
            save_checked(kernel.artifact, check_entry(shape),
                         os.path.join(out, f"bench_{config}_{shape_token(shape)}.tlcart"))
            count += 1
    print("wrote", count, "artifacts to", out)


if __name__ == "__main__":
    main(sys.argv[1])
