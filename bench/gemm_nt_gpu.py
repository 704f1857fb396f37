"""Time tlc's NT GEMM (B stored N x K) on sm_90a wgmma and on mma.sync against cuBLAS.

    python bench/gemm_nt_gpu.py ARTIFACT_DIR     (on the GPU machine)

Artifacts from bench/build_gemm_wgmma.py (its nt/ folder): bench_<config>.<arch>_<size>.tlcart,
C = A @ B^T, fp16 in, fp32 accumulate, fp16 out. Every output is checked
against torch first; then, in 3 rounds, cuBLAS (torch.matmul(a, b.t())) and
every artifact are timed back to back (CUDA graph of 20 launches, median of
20 replays); the table gives medians and the median per-round ratio.
"""

import glob
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402


def time_ms(fn):
    return graph_time_ms(fn, per_graph=20, reps=20)


def main(art_dir: str, rounds: int = 3) -> None:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, {rounds} rounds")
    arts = {}
    for path in sorted(glob.glob(os.path.join(art_dir, "bench_*.tlcart"))):
        config, size = os.path.basename(path)[len("bench_"):-len(".tlcart")].rsplit("_", 1)
        arts.setdefault(int(size), []).append((config, runtime.load_artifact(path)))
    med = statistics.median
    for size in sorted(arts):
        a = torch.randn(size, size, device="cuda", dtype=torch.float16)
        b = torch.randn(size, size, device="cuda", dtype=torch.float16)  # N x K
        c = torch.empty(size, size, device="cuda", dtype=torch.float16)
        ref = (a.float() @ b.float().T).half()
        tf = lambda ms: 2 * size ** 3 / ms / 1e9  # noqa: E731
        ok = {}
        for config, kernel in arts[size]:
            c.fill_(float("nan"))
            kernel(a, b, c)
            torch.cuda.synchronize()
            ok[config] = torch.allclose(c.float(), ref.float(), rtol=2e-2, atol=2e-1)
        t_cublas, t_tlc = [], {config: [] for config, _ in arts[size]}
        for _ in range(rounds):
            t_cublas.append(time_ms(lambda: torch.matmul(a, b.t(), out=c)))
            for config, kernel in arts[size]:
                t_tlc[config].append(time_ms(lambda: kernel(a, b, c)))
        for config, _ in arts[size]:
            ratio = med([tc / t for tc, t in zip(t_cublas, t_tlc[config])])
            print(f"{size:>6} {config:>24} tlc {tf(med(t_tlc[config])):6.0f} "
                  f"cuBLAS(NT) {tf(med(t_cublas)):6.0f} ratio {ratio:.3f}"
                  f"{'' if ok[config] else '  WRONG RESULT'}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
