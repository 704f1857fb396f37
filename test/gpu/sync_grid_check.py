#!/usr/bin/env python3
"""T.sync_grid on the GPU: test/python/test_sync_grid.py's rotations (each step
reads what another block wrote before the barrier; a 1-d and a 2-d grid,
several barriers per launch, relaunched to see the counter cleared) and a
grid too large to be resident at once (a launch error, not a hang).

    python test/gpu/sync_grid_check.py build DIR   # here: compiles for both targets
    python test/gpu/sync_grid_check.py run DIR     # on the device

Prints PASS/FAIL per case, exits 1 on a failure."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
TARGETS = ("sm_90a", "sm_80")
CASES = {"r132": ((132, 1), 4, 128), "r66x2": ((66, 2), 3, 256),
         "too_many": ((132 * 3, 1), 1, 1024)}  # 1024 threads: at most 2 blocks an SM


def build(out: str) -> None:
    sys.path.insert(0, str(ROOT / "test" / "python"))
    import tlc
    from tlc import runtime
    from test_sync_grid import rotations

    os.makedirs(out, exist_ok=True)
    for target in TARGETS:
        for name, (blocks, rounds, threads) in CASES.items():
            kernel = tlc.compile(rotations(blocks, rounds, threads), target=target)
            runtime.save_artifact(kernel.artifact, os.path.join(out, f"{name}_{target}.tlcart"))


def run(out: str) -> int:
    import torch
    from tlc import runtime

    failures = 0
    for target in TARGETS:
        for name, (blocks, rounds, _) in CASES.items():
            kernel = runtime.load_artifact(os.path.join(out, f"{name}_{target}.tlcart"))
            n = blocks[0] * blocks[1]
            a0 = torch.randn(n, 128, device="cuda")
            if name == "too_many":
                try:
                    kernel(a0.clone(), torch.empty_like(a0))
                    torch.cuda.synchronize()
                    ok, what = False, "launched"
                except runtime.LaunchError as e:
                    ok, what = "cuLaunchCooperativeKernel" in str(e), str(e)[:160]
                failures += not ok
                print("PASS" if ok else "FAIL", f"{name}_{target}: {what}", flush=True)
                continue
            want = torch.roll(a0, -rounds, 0)
            for _ in range(rounds):  # one float add a round, as the kernel does
                want = want + 1
            for launch in range(3):  # the counter is cleared at every call
                a, b = a0.clone(), torch.full_like(a0, float("nan"))
                kernel(a, b)
                torch.cuda.synchronize()
                err = (a - want).abs().max().item()
                ok = err == 0
                failures += not ok
                print("PASS" if ok else "FAIL", f"{name}_{target} launch {launch} "
                      f"max_abs_err={err:.3g}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("build", "run"):
        sys.exit(__doc__)
    sys.exit(build(sys.argv[2]) if sys.argv[1] == "build" else run(sys.argv[2]))
