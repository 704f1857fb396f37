"""Time tlc's elementwise kernels against torch and the device copy ceiling.

    python bench/elementwise_gpu.py ARTIFACT_DIR      (on the GPU machine)

For each size and dtype: tlc's vadd (C = A + B; and vadd_parallel, the same
sum as a T.Parallel over the global tensors, when built), torch.add(A, B,
out=C), and C.copy_(A) (the copy ceiling: bytes read + written), all timed in this one run
the same way: each is captured 20 times into a CUDA graph (so host launch
overhead, tlc's Python launcher included, is not what is measured), and the
median over 30 timed replays (CUDA events) divided by 20 is the time.
Every tensor is at least 64 MB at 4096x4096 fp32, well above the 50 MB L2.
Effective bandwidth counts each input read once and the output written once.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402

DTYPES = {"float32": torch.float32, "float16": torch.float16}


def time_ms(fn):
    return graph_time_ms(fn, per_graph=20, reps=30)


def main(art_dir: str) -> None:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'case':<36}{'tlc GB/s':>10}{'torch GB/s':>12}{'copy GB/s':>11}"
          f"{'tlc/torch':>11}{'tlc/copy':>10}")
    for dtype, tdt in DTYPES.items():
        for m, n in [(4096, 4096), (8192, 8192), (1000, 1000)]:
            a = torch.randn(m, n, device="cuda", dtype=tdt)
            b = torch.randn(m, n, device="cuda", dtype=tdt)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
            nbytes = a.numel() * a.element_size()
            bw = lambda t, k: k * nbytes / (t * 1e-3) / 1e9  # noqa: E731
            g_torch = bw(time_ms(lambda: torch.add(a, b, out=c)), 3)
            g_copy = bw(time_ms(lambda: c.copy_(a)), 2)
            # vadd: examples/elementwise.py (fragments, 16-byte copies);
            # vadd_parallel, when built: a T.Parallel over the global tensors.
            for name in ("vadd", "vadd_parallel"):
                path = os.path.join(art_dir, f"{name}_{dtype}_4096x4096.tlcart")
                if not os.path.exists(path):
                    continue
                kernel = runtime.load_artifact(path)
                c.fill_(float("nan"))
                kernel(a, b, c)
                torch.cuda.synchronize()
                assert torch.equal(c, a + b), f"{name} mismatch"
                g_tlc = bw(time_ms(lambda: kernel(a, b, c)), 3)
                print(f"{name + ' ' + dtype + f' {m}x{n}':<36}{g_tlc:>10.0f}{g_torch:>12.0f}"
                      f"{g_copy:>11.0f}{g_tlc / g_torch:>11.3f}{g_tlc / g_copy:>10.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
