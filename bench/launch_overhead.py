"""Host time per launch of a tiny kernel: tlc.runtime vs torch (on the GPU machine).

    python bench/launch_overhead.py ARTIFACT.tlcart

ARTIFACT is a vadd (A, B, C of one shape); it is launched 2000 times on
64x128 fp32 torch tensors and the host wall time per call is reported next
to torch.add(out=) on the same tensors, both measured in this one run. The
GPU work per call is far shorter than either, so this is the Python and
driver overhead of a launch.
"""

import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tlc.jit import JITKernel  # noqa: E402
from tlc.runtime import load_artifact  # noqa: E402


def per_call_us(fn, n=2000):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


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
    tlc_us = per_call_us(lambda: kernel(a, b, c))
    torch_us = per_call_us(lambda: torch.add(a, b, out=c))
    print(f"host time per launch: tlc {tlc_us:.1f} us, torch.add {torch_us:.1f} us "
          f"(repeated calls checked against torch: PASS)")
    # The TileLang-style call: the output allocated and returned (out_idx).
    jit = JITKernel(kernel.to_dict(), {}, out_idx=[-1])
    assert torch.equal(jit(a, b), a + b)
    jit_us = per_call_us(lambda: jit(a, b))
    alloc_us = per_call_us(lambda: torch.add(a, b))
    print(f"with the output allocated: tlc kernel(a, b) {jit_us:.1f} us, "
          f"torch.add(a, b) {alloc_us:.1f} us")


if __name__ == "__main__":
    main(sys.argv[1])
