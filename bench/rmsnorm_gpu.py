"""Check and time tlc's RMSNorm + SiLU beside torch eager, torch.compile and the copy ceiling.

    python bench/rmsnorm_gpu.py ARTIFACT_DIR [ROUNDS]      (on the GPU machine)

ARTIFACT_DIR holds what bench/build_rmsnorm.py wrote. First every artifact is
checked: its output is filled with NaN, the kernel runs, and each element must be
within 1e-3 |ref| + 1e-5 of the same math done by torch in fp32 (fp16's rounding
is 2^-11 relative), so an element the kernel does not write fails. Then, for each
benchmark shape (bench_<config>_<N>x<C>.tlcart), ROUNDS (default 5) rounds each
time, back to back: the device copy ceiling (y.copy_(x): N*C*2 bytes read and
N*C*2 written, what the fused kernel must move), torch eager of the same math,
torch.compile of it (dynamic=False: kernels specialized to the shape, as tlc's
are) and every tlc config. Each is timed the house way (tlc.profiler.graph_time_ms:
10 calls captured in a CUDA graph, the median of 20 replays per call). Shapes
whose x and y together are under 200 MB (4x the H200's L2) rotate among several
input sets, so that each call reads x from DRAM. GB/s counts x read once and y
written once (4 N C bytes); the ratios are medians of the per-round ratios, the
bandwidths medians over the rounds. The target: tlc/copy >= 0.9, vs compile > 1.
"""

import itertools
import math
import os
import statistics
import sys

import torch
import torch._dynamo

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402

from bench_artifacts import by_size  # noqa: E402

PER_GRAPH, REPS = 10, 20
ROTATE_BYTES = 200e6


def rmsnorm_silu_f32(x, gamma, eps: float):
    """The reference: silu(x * gamma * rsqrt(mean(x^2) + eps)) computed in fp32."""
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * gamma.float()
    return torch.nn.functional.silu(y)


def rmsnorm_silu_torch(x, gamma, eps: float):
    """What tlc's kernel computes, in torch: fp32 math, fp16 result."""
    return rmsnorm_silu_f32(x, gamma, eps).half()


def mismatches(y, ref) -> tuple[int, float]:
    """(elements outside fp16's rounding of ref, NaN included; max |y - ref|)."""
    err = (y.float() - ref).abs()
    bad = ~(err <= 1e-3 * ref.abs() + 1e-5)
    return int(bad.sum().item()), float(err.nan_to_num(float("inf")).max().item())


def eps_of(kernel) -> float:
    return float(kernel.metadata["check"]["eps"])


def call(kernel, x, gamma, y) -> None:
    values = {"X": x, "G": gamma, "Y": y}
    kernel(*(values[p.name] for p in kernel.params))


def check_all(art_dir: str) -> bool:
    ok = True
    for name in sorted(f for f in os.listdir(art_dir) if f.endswith(".tlcart")):
        kernel = runtime.load_artifact(os.path.join(art_dir, name))
        n, c = kernel.params[0].shape
        torch.manual_seed(c)
        x = torch.randn(n, c, device="cuda", dtype=torch.float16)
        gamma = torch.randn(c, device="cuda", dtype=torch.float16)
        y = torch.full((n, c), float("nan"), device="cuda", dtype=torch.float16)
        call(kernel, x, gamma, y)
        torch.cuda.synchronize()
        bad, err = mismatches(y, rmsnorm_silu_f32(x, gamma, eps_of(kernel)))
        ok &= bad == 0
        print(f"{'PASS' if bad == 0 else 'FAIL'} {name} max|err| {err:.2e}"
              f"{f' ({bad} elements wrong)' if bad else ''}", flush=True)
    return ok


def rotating(fn, sets: int):
    """fn(i) called on input set 0, 1, ..., sets - 1, 0, ... in turn."""
    turn = itertools.cycle(range(sets))
    return lambda: fn(next(turn))


def bench_shape(size: str, configs: list, rounds: int) -> None:
    n, c = (int(d) for d in size.split("x"))
    eps = eps_of(configs[0][1])
    nbytes = 4 * n * c
    sets = max(1, math.ceil(ROTATE_BYTES / nbytes))
    gamma = torch.randn(c, device="cuda", dtype=torch.float16)
    xs = [torch.randn(n, c, device="cuda", dtype=torch.float16) for _ in range(sets)]
    ys = [torch.empty_like(x) for x in xs]

    def same_math(x, g):
        return rmsnorm_silu_torch(x, g, eps)

    fns = {"copy": lambda i: ys[i].copy_(xs[i]), "eager": lambda i: same_math(xs[i], gamma)}
    try:  # the tlc and eager columns still come without it
        compiled = torch.compile(same_math, dynamic=False)
        bad, _ = mismatches(compiled(xs[0], gamma), rmsnorm_silu_f32(xs[0], gamma, eps))
        if bad:
            print(f"{size}: torch.compile differs from the fp32 reference in {bad} elements")
        fns["compile"] = lambda i: compiled(xs[i], gamma)
    except Exception as e:  # noqa: BLE001 -- e.g. no C compiler for Triton's launcher
        print(f"{size}: torch.compile failed, not timed: {type(e).__name__}: {str(e)[:200]}")
    for config, kernel in configs:
        fns[config] = lambda i, k=kernel: call(k, xs[i], gamma, ys[i])
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(graph_time_ms(rotating(fn, sets), per_graph=PER_GRAPH, reps=REPS))
    med = statistics.median
    gbs = {name: nbytes / (med(ts) * 1e-3) / 1e9 for name, ts in times.items()}

    def ratio(peer: str, config: str) -> float:  # > 1: tlc is faster
        return med([tp / tc for tp, tc in zip(times[peer], times[config])])

    for config, _ in configs:
        vs_copy = ratio("copy", config)
        vs_compile = ratio("compile", config) if "compile" in times else math.nan
        verdict = "meets target" if vs_copy >= 0.9 and vs_compile > 1 else "below target"
        print(f"{size:>11} {config:>9} {gbs[config]:9.0f} {vs_copy:8.3f} {vs_compile:10.3f} "
              f"{ratio('eager', config):8.2f} {gbs['copy']:9.0f} "
              f"{gbs.get('compile', math.nan):9.0f} {gbs['eager']:9.0f}  {verdict}", flush=True)


def main(art_dir: str, rounds: int = 5) -> int:
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = "absent"
    for limit in ("recompile_limit", "cache_size_limit"):  # one compilation per shape
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 64)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton_version}, {rounds} rounds")
    ok = check_all(art_dir)
    print(f"{'shape':>11} {'config':>9} {'tlc GB/s':>9} {'tlc/copy':>8} {'vs compile':>10} "
          f"{'vs eager':>8} {'copy GB/s':>9} {'compile':>9} {'eager':>9}")
    arts = by_size(art_dir)
    for size in sorted(arts, key=lambda s: tuple(int(d) for d in s.split("x"))):
        bench_shape(size, arts[size], rounds)
        torch.cuda.empty_cache()  # the last shape's inputs and graphs
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5))
