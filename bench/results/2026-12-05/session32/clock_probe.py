"""SM clock and power while an MLA artifact runs back to back (is the kernel power-capped?).

    python clock_probe.py ARTIFACT [seconds]

Samples nvidia-smi every 50 ms while the kernel (batch from the artifact, full-length
sequences) runs in a loop, then the same for a device copy of the cache; prints the
median SM clock, power and throttle reasons of each, and the kernel's time per launch.
"""
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../examples"))
from mla_decode import random_inputs  # noqa: E402

from tlc import runtime  # noqa: E402

QUERY = "clocks.sm,power.draw,clocks_throttle_reasons.active"


def sampled(fn, seconds):
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
                            "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    launches, start = 0, time.time()
    while time.time() - start < seconds:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        launches += 20
    elapsed = time.time() - start
    time.sleep(0.2)
    smi.terminate()
    rows = [r.split(", ") for r in smi.communicate()[0].strip().splitlines()]
    busy = [r for r in rows if float(r[1]) > 200]  # samples while the GPU worked
    clocks = [float(r[0]) for r in busy]
    power = [float(r[1]) for r in busy]
    reasons = sorted({r[2] for r in busy})
    return elapsed / launches * 1e6, statistics.median(clocks), statistics.median(power), reasons


def main():
    kernel = runtime.load_artifact(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 6
    batch, heads, _ = kernel.params[0].shape
    kv_len = kernel.params[2].shape[1] * 64
    q, cache, table, seq_lens = random_inputs(torch, batch, heads, [kv_len] * batch)
    out = torch.empty(batch, heads, 512, device="cuda", dtype=torch.float16)
    dst = torch.empty_like(cache)
    print(torch.cuda.get_device_name(), os.path.basename(sys.argv[1]))
    for name, fn in (("kernel", lambda: kernel(q, cache, table, seq_lens, out)),
                     ("copy", lambda: dst.copy_(cache))):
        us, clock, power, reasons = sampled(fn, seconds)
        print(f"{name:6s} {us:8.1f} us/launch  SM clock median {clock:.0f} MHz  "
              f"power median {power:.0f} W  throttle {reasons}")


if __name__ == "__main__":
    main()
