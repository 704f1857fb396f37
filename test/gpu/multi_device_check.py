"""A compiled kernel on the device of its tensors (run on a machine with two or more GPUs).

    TLC_RUNTIME_LIB=... python test/gpu/multi_device_check.py ARTIFACT_DIR

For every artifact built by bench/build_multi_device.py (an elementwise
kernel, a warp-specialized TMA GEMM whose tensor maps are encoded per
device, and the split-KV MLA decode: two kernels with global scratch), runs
it on cuda:0 and cuda:1 with torch tensors of that device (NaN-poisoned
outputs), interleaved so that each device's module and plans are reused
after the other's, checks both results against torch, and checks that
tensors on two devices are refused with a message naming both. Prints one
line per check and a final count; exits 1 on any failure.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))
from mla_decode import random_inputs, reference  # noqa: E402

from tlc import runtime  # noqa: E402
from tlc.runtime.errors import ArgumentError  # noqa: E402


def inputs_vadd(dev):
    g = torch.Generator(device=dev).manual_seed(1)
    a = torch.randn(4096, 4096, device=dev, generator=g)
    b = torch.randn(4096, 4096, device=dev, generator=g)
    c = torch.full_like(a, float("nan"))
    return (a, b, c), lambda: torch.testing.assert_close(c, a + b)


def inputs_gemm(dev):
    g = torch.Generator(device=dev).manual_seed(2)
    a = torch.randn(1024, 1024, device=dev, generator=g, dtype=torch.float16)
    b = torch.randn(1024, 1024, device=dev, generator=g, dtype=torch.float16)
    c = torch.full((1024, 1024), float("nan"), device=dev, dtype=torch.float16)
    return (a, b, c), lambda: torch.testing.assert_close(
        c.float(), (a.float() @ b.float()), rtol=2e-2, atol=0.2)


def inputs_mla(dev):
    with torch.cuda.device(dev):
        q, cache, table, lens = random_inputs(torch, 4, 128, [1000, 77, 4096, 64])
    full = torch.zeros(4, 64, dtype=torch.int32, device=dev)
    full[:, :table.shape[1]] = table
    out = torch.full((4, 128, 512), float("nan"), device=dev, dtype=torch.float16)
    ref = reference(torch, q, cache, full, lens)
    return (q, cache, full, lens, out), lambda: torch.testing.assert_close(
        out, ref, rtol=1e-2, atol=1e-2)


CHECKS = {"vadd": inputs_vadd, "gemm_ws": inputs_gemm, "mla_split4": inputs_mla}


def main(art_dir: str) -> int:
    n = torch.cuda.device_count()
    print(f"{n} devices: {', '.join(torch.cuda.get_device_name(i) for i in range(n))}")
    if n < 2:
        print("needs two GPUs")
        return 1
    passed = failed = 0

    def record(ok: bool, what: str, detail: str = "") -> None:
        nonlocal passed, failed
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'PASS' if ok else 'FAIL'} {what} {detail}")

    for name, make in CHECKS.items():
        kernel = runtime.load_artifact(os.path.join(art_dir, name + ".tlcart"))
        for round_ in range(2):
            for dev in ("cuda:0", "cuda:1"):
                args, verify = make(torch.device(dev))
                try:
                    kernel(*args)
                    torch.cuda.synchronize(dev)
                    verify()
                    record(True, f"{name} {dev} round {round_}")
                except Exception as e:  # noqa: BLE001 - a check reports every failure
                    record(False, f"{name} {dev} round {round_}", repr(e)[:300])
        args0, _ = make(torch.device("cuda:0"))
        args1, _ = make(torch.device("cuda:1"))
        mixed = (args0[0],) + tuple(args1[1:])
        try:
            kernel(*mixed)
            record(False, f"{name} mixed devices", "was accepted")
        except ArgumentError as e:
            record("cuda:1" in str(e) and "cuda:0" in str(e), f"{name} mixed devices", str(e))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
