"""Check and time tlc's implicit-GEMM convolution beside cuDNN (on the GPU machine).

    python bench/conv2d_gpu.py ARTIFACT_DIR [ROUNDS]

ARTIFACT_DIR holds what bench/build_conv2d.py wrote. For each benchmark shape
(bench_<config>_<shape>.tlcart), fp16 NHWC data and KH x KW x C x F weights:
every config is first checked (its output NaN-filled first) against the example's
reference (torch conv2d in fp32, rounded to fp16), then ROUNDS rounds (default 5)
time, back to back, torch.nn.functional.conv2d in fp16 on channels_last tensors
(cuDNN, torch.backends.cudnn.benchmark on: the data is the NHWC tensor itself
seen as NCHW, the weights converted to channels_last once, not timed) and each
tlc config, the house way (tlc.profiler.graph_time_ms: 20 calls in a CUDA graph,
the median of 20 replays). TFLOP/s = 2 N OH OW F KH KW C / time; the ratio
tlc/cuDNN (> 1: tlc is faster) is the median of the per-round ratios.
"""

import math
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import conv2d  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402

from bench_artifacts import by_size  # noqa: E402


def inputs(shape, seed: int):
    n, c, h, w, f, k, _, _, _ = shape
    torch.manual_seed(seed)
    data = torch.randn(n, h, w, c, device="cuda", dtype=torch.float16)
    weight = torch.randn(k * k * c, f, device="cuda", dtype=torch.float16)
    return data, weight


def call(kernel, data, weight, out) -> None:
    values = {"data": data, "weight": weight, "out": out}
    kernel(*(values[p.name] for p in kernel.params))


def bench_shape(token: str, configs: list, rounds: int) -> bool:
    """Checks and times one shape's configs; False if a config is wrong."""
    shape = configs[0][1].metadata["check"]["conv"]
    n, c, h, w, f, k, s, p, d = shape
    oh, ow = conv2d.output_size(h, w, k, s, p, d)
    data, weight = inputs(shape, c + k)
    out = torch.empty(n * oh * ow, f, device="cuda", dtype=torch.float16)
    ref = conv2d.reference(torch, data, weight, k, s, p, d)
    x = data.permute(0, 3, 1, 2)  # NCHW view of the NHWC data: channels_last already
    wt = weight.view(k, k, c, f).permute(3, 2, 0, 1).contiguous(
        memory_format=torch.channels_last)
    fns = {"cudnn": lambda: torch.nn.functional.conv2d(x, wt, stride=s, padding=p, dilation=d)}
    y = fns["cudnn"]()
    err = (y.permute(0, 2, 3, 1).reshape(-1, f).float() - ref.float()).abs().max().item()
    layout = "channels_last" if y.is_contiguous(memory_format=torch.channels_last) else "NCHW"
    print(f"{token}: cuDNN max|err| {err:.2e} ({layout} output)")
    ok = {}
    for config, kernel in configs:
        out.fill_(math.nan)
        call(kernel, data, weight, out)
        torch.cuda.synchronize()
        e = (out.float() - ref.float()).abs()
        bad = int((~(e <= 5e-2 + 1e-2 * ref.float().abs())).sum().item())
        ok[config] = bad == 0
        print(f"  {'PASS' if bad == 0 else 'FAIL'} {config} max|err| "
              f"{e.nan_to_num(math.inf).max().item():.2e}{f' ({bad} wrong)' if bad else ''}",
              flush=True)
        if bad == 0:
            fns[config] = lambda kernel=kernel: call(kernel, data, weight, out)
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(graph_time_ms(fn))
    flops = 2 * n * oh * ow * f * k * k * c
    med = statistics.median
    tflops = {name: flops / (med(ts) * 1e-3) / 1e12 for name, ts in times.items()}
    print(f"  {'config':>12} {'TFLOP/s':>8} {'us':>8} {'tlc/cuDNN':>9}")
    print(f"  {'cudnn':>12} {tflops['cudnn']:8.1f} {med(times['cudnn']) * 1e3:8.1f}")
    for config, _ in configs:
        if config not in times:
            continue
        ratio = med([tc / tt for tc, tt in zip(times["cudnn"], times[config])])
        print(f"  {config:>12} {tflops[config]:8.1f} {med(times[config]) * 1e3:8.1f} "
              f"{ratio:9.3f}", flush=True)
    return all(ok.values())


def main(art_dir: str, rounds: int = 5) -> int:
    torch.backends.cudnn.benchmark = True
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, cuDNN "
          f"{torch.backends.cudnn.version()}, {rounds} rounds")
    arts = by_size(art_dir)
    ok = True
    for token in arts:
        ok &= bench_shape(token, arts[token], rounds)
        torch.cuda.empty_cache()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5))
