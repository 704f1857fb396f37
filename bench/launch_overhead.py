"""Host time per launch of a tiny kernel: tlc.runtime vs torch (on the GPU machine).

    python bench/launch_overhead.py ARTIFACT.tlcart

ARTIFACT is a vadd (A, B, C of one shape). On 64x128 fp32 torch tensors it
prints the host wall time per call (medians over many runs of 2000 calls,
interleaved) of torch.add(a, b, out=c), tlc's kernel(a, b, c) (preallocated
output), torch.add(a, b) and tlc's out_idx call jit(a, b) (allocates and
returns the output), all in this one run, and the ratios tlc / torch. The
GPU work per call is far shorter than any of them, so this is the Python and
driver overhead of a launch. bench/launch_overhead_cpu.py times the Python
path alone against a fake driver, without a GPU.
"""

import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tlc.jit import JITKernel  # noqa: E402
from tlc.runtime import load_artifact  # noqa: E402


def per_call_us(fn, n=2000, repeats=15):
    """The median over `repeats` runs of the host wall time per call of n
    calls (the device is synchronised before and after each run, not
    inside it)."""
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        runs.append((t1 - t0) / n * 1e6)
    return statistics.median(runs)


def check_calls(kernel) -> None:
    """Results of repeated calls (the first checks the arguments fully and
    leaves a plan; the rest launch from it), on new tensors, another shape,
    and a side stream, each compared with torch."""
    for shape in [(64, 128)] * 3 + [(100, 300)] * 2:
        a, b = (torch.randn(*shape, device="cuda") for _ in range(2))
        c = torch.full_like(a, float("nan"))
        kernel(a, b, c)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b), shape
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        a, b = (torch.randn(64, 128, device="cuda") for _ in range(2))
        c = torch.full_like(a, float("nan"))
        kernel(a, b, c)
    side.synchronize()
    assert torch.equal(c, a + b)


def main(path: str) -> None:
    kernel = load_artifact(path)
    check_calls(kernel)
    a, b = (torch.randn(64, 128, device="cuda") for _ in range(2))
    c = torch.empty_like(a)
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
    # The TileLang-style call: the output allocated and returned (out_idx).
    jit = JITKernel(kernel.to_dict(), {}, out_idx=[-1])
    for _ in range(3):
        assert torch.equal(jit(a, b), a + b)
    # Interleaved, so that a drift of the machine shows in all of them.
    times = {"torch.add(a, b, out=c)": [], "tlc kernel(a, b, c)": [],
             "torch.add(a, b)": [], "tlc out_idx jit(a, b)": []}
    calls = [lambda: torch.add(a, b, out=c), lambda: kernel(a, b, c),
             lambda: torch.add(a, b), lambda: jit(a, b)]
    for _ in range(3):
        for name, fn in zip(times, calls):
            times[name].append(per_call_us(fn))
    us = {name: statistics.median(v) for name, v in times.items()}
    print("host time per call, 64x128 fp32, median of 3 x 15 runs of 2000 calls "
          "(repeated calls checked against torch: PASS):")
    for name, t in us.items():
        print(f"  {name:24s} {t:6.2f} us   (runs: {', '.join(f'{x:.2f}' for x in times[name])})")
    print(f"ratios: preallocated tlc / torch.add(out=) "
          f"{us['tlc kernel(a, b, c)'] / us['torch.add(a, b, out=c)']:.2f} (goal <= 1.0); "
          f"out_idx tlc / torch.add(a, b) "
          f"{us['tlc out_idx jit(a, b)'] / us['torch.add(a, b)']:.2f} (goal <= 1.3)")


if __name__ == "__main__":
    main(sys.argv[1])
