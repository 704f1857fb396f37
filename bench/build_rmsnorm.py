"""Compile the RMSNorm + SiLU benchmarks and checks (examples/rmsnorm_silu.py) to artifacts.

    python bench/build_rmsnorm.py OUT_DIR

bench_<config>_<N>x<C>.tlcart for the benchmark shapes (16384 x 4096 and
65536 x C for every C), which bench/rmsnorm_gpu.py checks and times, and
check_<config>_<N>x<C>.tlcart with N = 999 (a partial last block for every
config), which it only checks. Configs: "rsqrt" (the default: the sigmoid's
reciprocal as an approximate rsqrt), "div" (an IEEE division there), and
both with 128 threads per block ("-t128": the default is 64 up to 2048
channels, so twice the rows per block), and "rsqrt-fast" / "div-fast"
compiled with `pass_configs={"tl.enable_fast_math": True}` (fma contraction,
f32 denormals flushed), and "chunks-fast" the same with the rows kept in
shared memory and reduced over power-of-two chunks (block_C = the largest
power of two dividing C, at most 1024: the kernel's form before whole rows
were reduced in registers). Each artifact carries a "check" entry
(with the kernel's eps) for test/gpu/run_artifacts.py too.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import rmsnorm_silu  # noqa: E402
import tlc  # noqa: E402
from checks import save_checked  # noqa: E402

CHANNELS = (160, 256, 320, 512, 640, 1024, 4096)
BENCH_SHAPES = [(16384, 4096)] + [(65536, c) for c in CHANNELS]
CHECK_ROWS = 999
CONFIGS = {"rsqrt": {}, "div": {"sigmoid": "div"}, "rsqrt-t128": {"threads": 128},
           "div-t128": {"sigmoid": "div", "threads": 128}, "rsqrt-fast": {"fast": True},
           "div-fast": {"sigmoid": "div", "fast": True},
           "chunks-fast": {"fast": True, "chunks": True}}
EPS = 1e-6
REFERENCE = ("torch.nn.functional.silu(X.float() * torch.rsqrt(X.float().pow(2).mean(dim=1, "
             f"keepdim=True) + {EPS!r}) * G.float()).half()")


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    fast = tlc.jit(out_idx=[-1], pass_configs={"tl.enable_fast_math": True})(
        rmsnorm_silu.rmsnorm_silu.factory)
    shapes = [("bench", n, c) for n, c in BENCH_SHAPES]
    shapes += [("check", CHECK_ROWS, c) for c in CHANNELS]
    for kind, n, c in shapes:
        for config, options in CONFIGS.items():
            options = dict(options)
            factory = fast if options.pop("fast", False) else rmsnorm_silu.rmsnorm_silu
            if options.pop("chunks", False):  # the rows in shared memory, pow2 chunks
                options["block_C"] = min(c & -c, 1024)
            kernel = factory(n, c, eps=EPS, **options)
            # fp16 outputs within one ulp of the fp32 reference rounded to fp16
            check = {"expect": {"Y": REFERENCE}, "atol": 1e-5, "rtol": 2e-3, "seed": c,
                     "eps": EPS}
            save_checked(kernel.artifact, check,
                         os.path.join(out, f"{kind}_{config}_{n}x{c}.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
