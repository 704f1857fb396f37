"""Time the split-K GEMM against torch.matmul (cuBLAS) on decode shapes.

    python bench/splitk_gpu.py ARTIFACT_DIR [ROUNDS]     (on the GPU machine)

fp16 A (M x K) and B (N x K), C = A @ B^T. tlc's time is the zeroing of its
float32 C plus the kernel (the adds need zeros); cuBLAS writes fp16 C with
its own split-K where it chooses one. Same method as bench/gemm_gpu.py:
CUDA graphs, interleaved rounds, the median of per-round ratios; outputs
checked first.
"""

import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tlc.profiler import graph_time_ms  # noqa: E402

from bench_artifacts import by_size  # noqa: E402


def main(art_dir: str, rounds: int = 3) -> None:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, {rounds} rounds")
    arts = by_size(art_dir)
    print(f"{'size':>14} {'config':>20} {'tlc TF/s':>9} {'cuBLAS':>8} {'tlc/cuBLAS':>10}")
    med = statistics.median
    for size in sorted(arts):
        m, n, k = (int(d) for d in size.split("x"))
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(n, k, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda")
        c16 = torch.empty(m, n, device="cuda", dtype=torch.float16)
        ref = a.float() @ b.float().T
        tf = lambda ms: 2 * m * n * k / (ms * 1e-3) / 1e12  # noqa: E731
        ok = {}
        for config, kernel in arts[size]:
            c.zero_()
            kernel(a, b, c)
            torch.cuda.synchronize()
            ok[config] = torch.allclose(c, ref, rtol=1e-2, atol=1e-1)
        t_ref, t_tlc = [], {config: [] for config, _ in arts[size]}
        for _ in range(rounds):
            t_ref.append(graph_time_ms(lambda: torch.matmul(a, b.t(), out=c16), per_graph=20,
                                       reps=20))
            for config, kernel in arts[size]:
                def run(kernel=kernel):
                    c.zero_()
                    kernel(a, b, c)
                t_tlc[config].append(graph_time_ms(run, per_graph=20, reps=20))
        for config, _ in arts[size]:
            ts = t_tlc[config]
            ratio = med([tr / t for tr, t in zip(t_ref, ts)])
            print(f"{size:>14} {config:>20} {tf(med(ts)):9.0f} {tf(med(t_ref)):8.0f} "
                  f"{ratio:10.3f}{'' if ok[config] else '  WRONG RESULT'}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
