"""Time tlc's fp8 GEMM against torch._scaled_mm (cuBLASLt fp8).

    python bench/fp8_gemm_gpu.py ARTIFACT_DIR [ROUNDS]     (on the GPU machine)

e4m3 inputs, B stored N x K (what _scaled_mm takes transposed), per-tensor
scale, bf16 output, M = N = K; a config named nn_ / tn_ / tt_ gets the same
operands stored so (A K x M for T, B K x N for N: copies made before timing),
against the same _scaled_mm. The peers are _scaled_mm with and without
use_fast_accum; every output's relative (Frobenius) error against the f32
product is printed, and a tlc output above 1e-2 is flagged. Same method as bench/gemm_gpu.py: CUDA-graph
timed (20 launches per graph, median of 20 replays), ROUNDS interleaved
rounds, the median of the per-round ratios; outputs checked first.
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
    arts = {int(size): kernels for size, kernels in by_size(art_dir).items()}
    print(f"{'size':>6} {'kernel':>22} {'TF/s':>9}")
    med = statistics.median
    for size in sorted(arts):
        a = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn)
        c = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
        one = torch.tensor(1.0, device="cuda")
        exact = a.float() @ b.float().T

        def error(out):  # relative Frobenius error against the f32 product
            return ((out.float() - exact).norm() / exact.norm()).item()

        def scaled_mm(fast):
            return lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                            out_dtype=torch.bfloat16, use_fast_accum=fast)

        flops = 2 * size ** 3
        tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
        stored = {"nn": (a, b.T.contiguous()), "tn": (a.T.contiguous(), b.T.contiguous()),
                  "tt": (a.T.contiguous(), b)}
        operands = {config: stored.get(config[:2], (a, b)) for config, _ in arts[size]}
        err = {}
        for config, kernel in arts[size]:
            c.fill_(float("nan"))
            kernel(*operands[config], c, 1.0)
            torch.cuda.synchronize()
            err[config] = error(c)
        peers = {"scaled_mm": scaled_mm(False), "scaled_mm fast": scaled_mm(True)}
        perr = {name: error(fn()) for name, fn in peers.items()}
        t_peer = {name: [] for name in peers}
        t_tlc = {config: [] for config, _ in arts[size]}
        for _ in range(rounds):
            for name, fn in peers.items():
                t_peer[name].append(graph_time_ms(fn, per_graph=20, reps=20))
            for config, kernel in arts[size]:
                x, y = operands[config]
                t_tlc[config].append(graph_time_ms(lambda: kernel(x, y, c, 1.0), per_graph=20,
                                                   reps=20))
        for name in peers:
            print(f"{size:>6} {name:>22} {tf(med(t_peer[name])):9.0f} rel.err {perr[name]:.1e}")
        for config, _ in arts[size]:
            ts = t_tlc[config]
            ratios = "  ".join(f"{med([tr / t for tr, t in zip(t_peer[n], ts)]):.3f} vs {n}"
                               for n in peers)
            print(f"{size:>6} {config:>22} {tf(med(ts)):9.0f} rel.err {err[config]:.1e}  "
                  f"{ratios}{'' if err[config] < 1e-2 else '  WRONG RESULT'}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
