#!/usr/bin/env python3
"""T.StridedTensor on the GPU: test/python/test_strided_tensor.py's programs (and
TileLang's eager-JIT tutorial one) fed torch views as they are (a transpose, a
column slice).

    python test/gpu/strided_check.py build DIR   # here: compiles for both targets
    python test/gpu/strided_check.py run DIR     # on the device: loads, checks

run_artifacts.py passes contiguous tensors only, so these need their own driver.
Outputs are NaN-poisoned first; prints PASS/FAIL per case, exits 1 on a failure."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
TARGETS = ("sm_90a", "sm_80")


def build(out: str) -> None:
    sys.path.insert(0, str(ROOT / "test" / "python"))
    import tlc
    from tlc import runtime
    from test_strided_tensor import (as_contiguous, staged, static_rows, transposed_copy,
                                     vector_atomics)

    os.makedirs(out, exist_ok=True)
    for target in TARGETS:
        for prim in (as_contiguous, staged, static_rows, vector_atomics):
            runtime.save_artifact(tlc.compile(prim, target=target).artifact,
                                  os.path.join(out, f"{prim.name}_{target}.tlcart"))
        # TileLang's eager-JIT tutorial program (A declared a T.StridedTensor, B = T.empty)
        eager = tlc.jit(target=target)(transposed_copy.fn).compile()
        runtime.save_artifact(eager.artifact, os.path.join(out, f"eager_{target}.tlcart"))


def run(out: str) -> int:
    import torch
    from tlc import runtime

    gen = torch.Generator(device="cuda").manual_seed(0)
    failures = 0

    def check(name, got, want):
        nonlocal failures
        ok = bool(torch.equal(got, want))
        failures += not ok
        err = (got.float() - want.float()).abs().nan_to_num(float("inf")).max().item()
        print("PASS" if ok else "FAIL", f"{name} max_abs_err={err:.3g}", flush=True)

    for target in TARGETS:
        k = lambda name: runtime.load_artifact(os.path.join(out, f"{name}_{target}.tlcart"))  # noqa: E731
        for rows, cols in ((1000, 777), (4096, 4096)):
            a = torch.randn(rows, cols, device="cuda", generator=gen)
            b = torch.full((cols, rows), float("nan"), device="cuda")
            k("as_contiguous")(a.t(), b)  # strides (1, cols)
            check(f"as_contiguous_{target}_{cols}x{rows}", b, a.t().contiguous())
            b = torch.full((cols, rows), float("nan"), device="cuda")
            k("eager")(a.t(), b)
            check(f"eager_tutorial_{target}_{cols}x{rows}", b, a.t().contiguous())
        x = torch.randn(1000, 70, device="cuda", generator=gen).half()
        y = torch.full((1000, 64), float("nan"), device="cuda").half()
        k("staged")(x[:, :64], y)  # rows 140 bytes apart: not a 16-byte multiple
        check(f"staged_{target}", y, x[:, :64])
        x = torch.randn(64, 128, device="cuda", generator=gen).half()
        y = torch.full((64, 64), float("nan"), device="cuda").half()
        k("static_rows")(x[:, :64], y)
        check(f"static_rows_{target}", y, x[:, :64] * 2)
        acc = torch.zeros(64, 64, device="cuda").t()  # column-major
        src = torch.randn(64, 64, device="cuda", generator=gen)
        k("vector_atomics")(acc, src)
        check(f"vector_atomics_{target}", acc, src)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("build", "run"):
        sys.exit(__doc__)
    sys.exit(build(sys.argv[2]) if sys.argv[1] == "build" else run(sys.argv[2]))
