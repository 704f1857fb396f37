"""Host time per launch of a tiny kernel: tlc.runtime vs torch (on the GPU machine).

    python bench/launch_overhead.py ARTIFACT.tlcart

ARTIFACT is a vadd (A, B, C of one shape). On 64x128 fp32 torch tensors it
prints the host wall time per call (medians over many runs of 2000 calls,
interleaved) of torch.add(a, b, out=c), tlc's kernel(a, b, c) (preallocated
output), torch.add(a, b) and tlc's out_idx call jit(a, b) (allocates and
returns the output), all in this one run, and the ratios tlc / torch. Each
tlc call is timed twice: through the native launch path (tlc.runtime._launch,
where it is built) and through the Python fast path alone
(TLC_NATIVE_LAUNCH=0 when the kernel was made). The GPU work per call is far
shorter than any of them, so this is the Python and driver overhead of a
launch. bench/launch_overhead_cpu.py times the same paths against a fake
driver, without a GPU.
"""

import os
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


def made(native: bool, make):
    """make() with the native launch path on or off for what it makes."""
    old = os.environ.get("TLC_NATIVE_LAUNCH")
    os.environ["TLC_NATIVE_LAUNCH"] = "1" if native else "0"
    try:
        return make()
    finally:
        if old is None:
            os.environ.pop("TLC_NATIVE_LAUNCH")
        else:
            os.environ["TLC_NATIVE_LAUNCH"] = old


def main(path: str) -> None:
    paths = ("native", "python")
    kernels = {p: made(p == "native", lambda: load_artifact(path)) for p in paths}
    if kernels["native"]._native is None:
        print("note: tlc.runtime._launch is not built or not importable; "
              "both rows are the Python path")
    for kernel in kernels.values():
        check_calls(kernel)
    a, b = (torch.randn(64, 128, device="cuda") for _ in range(2))
    c = torch.empty_like(a)
    for kernel in kernels.values():
        c.zero_()
        kernel(a, b, c)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b)
    # The TileLang-style call: the output allocated and returned (out_idx).
    d = kernels["python"].to_dict()
    jits = {p: made(p == "native", lambda: JITKernel(d, {}, out_idx=[-1])) for p in paths}
    for jit in jits.values():
        for _ in range(3):
            assert torch.equal(jit(a, b), a + b)
    # Interleaved, so that a drift of the machine shows in all of them.
    calls = {"torch.add(a, b, out=c)": lambda: torch.add(a, b, out=c),
             "tlc kernel(a, b, c) native": lambda: kernels["native"](a, b, c),
             "tlc kernel(a, b, c) Python": lambda: kernels["python"](a, b, c),
             "torch.add(a, b)": lambda: torch.add(a, b),
             "tlc out_idx jit(a, b) native": lambda: jits["native"](a, b),
             "tlc out_idx jit(a, b) Python": lambda: jits["python"](a, b)}
    times = {name: [] for name in calls}
    for _ in range(3):
        for name, fn in calls.items():
            times[name].append(per_call_us(fn))
    us = {name: statistics.median(v) for name, v in times.items()}
    native = [kernels["native"]._native_launcher, jits["native"]._native_launcher]
    print("host time per call, 64x128 fp32, median of 3 x 15 runs of 2000 calls "
          "(repeated calls checked against torch: PASS; native launches: "
          f"{[n and n.launched for n in native]}):")
    for name, t in us.items():
        print(f"  {name:30s} {t:6.2f} us   (runs: {', '.join(f'{x:.2f}' for x in times[name])})")
    for p in ("native", "Python"):
        print(f"ratios ({p}): preallocated tlc / torch.add(out=) "
              f"{us[f'tlc kernel(a, b, c) {p}'] / us['torch.add(a, b, out=c)']:.2f} (goal <= 1.0); "
              f"out_idx tlc / torch.add(a, b) "
              f"{us[f'tlc out_idx jit(a, b) {p}'] / us['torch.add(a, b)']:.2f} (goal <= 1.3)")


if __name__ == "__main__":
    main(sys.argv[1])
