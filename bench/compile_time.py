"""Compile time and cache hits of tlc (runs here, no GPU needed).

    python bench/compile_time.py

Cold: a fresh process compiles the 128x128x32 GEMM (examples/gemm.py, fp16,
3 stages, 1024^3) to PTX with an empty disk cache; the time of the first
call (frontend + passes + LLVM NVPTX) is reported apart from the import.
Hits: the same call again in the process (memory cache); the disk cache
read by a fresh process (its first call, so including the one-time import of
tlc.runtime); and the disk cache read by a new JITFactory in a running
process (the per-kernel cost). Medians of 5 runs.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
sys.path.insert(0, os.path.join(sys.argv[1], "examples"))
import gemm
t1 = time.perf_counter()
k = gemm.matmul(1024, 1024, 1024, 128, 128, 32, 128, 3)
t2 = time.perf_counter()
k2 = gemm.matmul(1024, 1024, 1024, 128, 128, 32, 128, 3)
t3 = time.perf_counter()
assert k2 is k and ".entry gemm" in k.get_kernel_source()
from tlc.jit import JITFactory
fresh = JITFactory(gemm.matmul.factory, out_idx=[-1])
t4 = time.perf_counter()
k3 = fresh(1024, 1024, 1024, 128, 128, 32, 128, 3)
t5 = time.perf_counter()
assert k3.get_kernel_source() == k.get_kernel_source()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "memory_hit": t3 - t2,
                  "disk_hit_warm": t5 - t4}))
"""


def run(repo: str, cache: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, repo], capture_output=True, text=True,
                         env=dict(os.environ, TLC_CACHE_DIR=cache), check=True)
    return json.loads(out.stdout)


def main() -> None:
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cold, disk = [], []
    for _ in range(5):
        with tempfile.TemporaryDirectory() as cache:
            cold.append(run(repo, cache))
            disk.append(run(repo, cache))
    med = lambda rows, key: statistics.median(r[key] for r in rows) * 1e3  # noqa: E731
    print(f"import tlc + example:        {med(cold, 'import'):8.1f} ms")
    print(f"cold compile to PTX:         {med(cold, 'first'):8.1f} ms")
    print(f"disk cache hit, new process: {med(disk, 'first'):8.1f} ms")
    print(f"disk cache hit, warm process: {med(disk, 'disk_hit_warm'):8.1f} ms")
    print(f"memory cache hit:            {med(cold, 'memory_hit'):8.3f} ms")


if __name__ == "__main__":
    main()
