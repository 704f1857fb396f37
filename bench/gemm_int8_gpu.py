"""Time tlc's int8 GEMM against torch._int_mm (cuBLASLt int8, int32 out).

    python bench/gemm_int8_gpu.py ARTIFACT_DIR [ROUNDS]     (on the GPU machine)

A (M x K) and B (N x K) int8 in [-128, 128), C = A @ B^T in int32, M = N = K; the
peer is torch._int_mm(A, B.t()). Every output is checked for exact equality with
the peer's first. Same method as bench/gemm_gpu.py: CUDA-graph timed (20
launches per graph, median of 20 replays), ROUNDS interleaved rounds, the median
of the per-round ratios. TOP/s = 2 M N K / time.
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
    med = statistics.median
    for size, kernels in sorted(by_size(art_dir).items(), key=lambda kv: int(kv[0])):
        n = int(size)
        a = torch.randint(-128, 128, (n, n), device="cuda", dtype=torch.int8)
        b = torch.randint(-128, 128, (n, n), device="cuda", dtype=torch.int8)
        c = torch.empty(n, n, device="cuda", dtype=torch.int32)
        ref = torch._int_mm(a, b.t())
        ok = {}
        for config, kernel in kernels:
            c.fill_(0x7f7f7f7f)
            kernel(a, b, c)
            torch.cuda.synchronize()
            ok[config] = bool(torch.equal(c, ref))
        tops = lambda ms: 2 * n ** 3 / (ms * 1e-3) / 1e12  # noqa: E731
        t_peer, t_tlc = [], {config: [] for config, _ in kernels}
        for _ in range(rounds):
            t_peer.append(graph_time_ms(lambda: torch._int_mm(a, b.t())))
            for config, kernel in kernels:
                t_tlc[config].append(graph_time_ms(lambda: kernel(a, b, c)))
        print(f"{n:>6} {'torch._int_mm':>22} {tops(med(t_peer)):7.0f} TOP/s")
        for config, _ in kernels:
            ratio = med([p / t for p, t in zip(t_peer, t_tlc[config])])
            print(f"{n:>6} {config:>22} {tops(med(t_tlc[config])):7.0f} TOP/s  {ratio:.3f}x "
                  f"_int_mm{'' if ok[config] else '  WRONG RESULT'}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
