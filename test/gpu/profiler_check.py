#!/usr/bin/env python3
"""Run tlc's JITKernel API on a GPU from an artifact (no compiler needed there).

    python test/gpu/profiler_check.py ARTIFACT.tlcart

Wraps a GEMM artifact (C = A @ B, fp16) as a JITKernel with out_idx=[-1] and
exercises what a TileLang user calls: kernel(a, b) returning C,
get_profiler().assert_allclose against torch, and do_bench. Exit 1 on failure.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import tlc  # noqa: E402
from tlc.jit import JITKernel  # noqa: E402
from tlc.runtime import load_artifact  # noqa: E402


def main(path: str) -> int:
    kernel = JITKernel(load_artifact(path).to_dict(), {}, out_idx=[-1])
    m, k = kernel.params[0]["shape"]
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, kernel.params[1]["shape"][1], device="cuda", dtype=torch.float16)
    c = kernel(a, b)
    torch.testing.assert_close(c, (a.float() @ b.float()).half(), rtol=2e-2, atol=1e-1)
    for _ in range(3):  # repeated calls: cached output specs, the launch fast path
        a2, b2 = torch.randn_like(a), torch.randn_like(b)
        c2 = kernel(a2, b2)
        assert c2.data_ptr() != c.data_ptr()  # a new output each call
        torch.testing.assert_close(c2, (a2.float() @ b2.float()).half(), rtol=2e-2, atol=1e-1)
    profiler = kernel.get_profiler(tensor_supply_type=tlc.TensorSupplyType.Normal)
    profiler.assert_allclose(lambda x, y: (x.float() @ y.float()).half(), rtol=2e-2, atol=1e-1)
    ms = profiler.do_bench()
    print(f"PASS {kernel.name}: out_idx calls, assert_allclose; do_bench {ms:.4f} ms "
          f"({2 * m * k * b.shape[1] / ms / 1e9:.0f} TFLOP/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
