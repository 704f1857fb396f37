"""Compile time and cache hits of tlc (runs here, no GPU needed).

    python bench/compile_time.py [--repeat N] [--only overhead|cache]

First-compile overhead (issue 14): for each kernel of a fixed set (the
elementwise add of examples/elementwise.tile, the GEMMs 128x256x64 in 3
stages and 128x128x32 of examples/gemm.py, FlashAttention forward with head
dim 128 and 128x128 blocks of examples/attention.py, all for sm_90a), a
fresh process measures its one-time costs one by one: importing tlc, the
language, the compiler (MLIR bindings) and the frontend and runtime; creating
a context and loading the dialects; parsing the pass pipelines. Then it
compiles the kernel with tlc.compile twice: cold (the first compile of the
process, after the costs above) and warm (the same again), each with the
stage breakdown of tlc.timing. The processes run with the bytecode
cache on (PYTHONPYCACHEPREFIX in a temporary folder, filled by a first
process that is not counted), as an installed package has it.

Cache hits (issue 3), also with the bytecode cache on: a fresh process compiles the 128x128x32 GEMM to PTX with
an empty disk cache; the time of the first call (frontend + passes + LLVM
NVPTX) is reported apart from the import. Hits: the same call again in the
process (memory cache); the disk cache read by a fresh process (its first
call, so including the one-time import of tlc.runtime); and the disk cache
read by a new JITFactory in a running process (the per-kernel cost).

Medians over the runs (5 for the cache hits, --repeat, default 3, for the
rest). TileLang is not compiled here: it is not installed on these machines.
"""

import argparse
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


OVERHEAD_CHILD = r"""
import io, json, os, sys, time
repo, kernel = sys.argv[1], sys.argv[2]
out = {}
t = time.perf_counter()
import tlc
out["import tlc"] = time.perf_counter() - t
t = time.perf_counter()
import tlc.language
out["import tlc.language"] = time.perf_counter() - t
t = time.perf_counter()
import tlc.compiler
out["import tlc.compiler (MLIR bindings)"] = time.perf_counter() - t
t = time.perf_counter()
import tlc.frontend.codegen, tlc.runtime, tlc.dialects.gpu
out["import frontend, runtime"] = time.perf_counter() - t
from tlc import timing
from tlc.compiler import pipeline
from tlc.compiler.targets import get_target
from tlc.passmanager import PassManager
t = time.perf_counter()
ctx = pipeline.new_context()
out["context + dialects (first)"] = time.perf_counter() - t
t = time.perf_counter()
pipeline.new_context()
out["context + dialects (again)"] = time.perf_counter() - t
texts = [pipeline.OPTIMIZE_PIPELINE, pipeline.GPU_PIPELINE,
         pipeline.nvvm_pipeline(get_target("sm_90a")), pipeline.PTX_PIPELINE]
for label in ("first", "again"):
    t = time.perf_counter()
    with ctx:
        for text in texts:
            PassManager.parse(text)
    out[f"parse the 4 pipelines ({label})"] = time.perf_counter() - t
sys.path.insert(0, os.path.join(repo, "examples"))
if kernel == "add":
    from tlc.frontend.tile_file import load_tile_file
    prim = load_tile_file(os.path.join(repo, "examples", "elementwise.tile"))["vadd"]
elif kernel.startswith("gemm"):
    import gemm
    bm, bn, bk, threads, stages = map(int, kernel[4:].split("_"))
    prim = gemm.matmul.factory(4096, 4096, 4096, bm, bn, bk, threads, stages)
else:
    import attention
    prim = attention.attention.factory(8, 32, 4096, 128, False, block_M=128, block_N=128,
                                       num_stages=2, threads=256)
ptx = None
for label in ("cold", "warm"):
    buf = io.StringIO()
    t = time.perf_counter()
    with timing.session(label, out=buf):
        k = tlc.compile(prim, target="sm_90a")
    out[label] = time.perf_counter() - t
    rows = {}
    for line in buf.getvalue().splitlines()[2:]:
        if not line.startswith("   "):  # the top-level rows
            name, ms = line[2:].rsplit(None, 2)[0].strip(), float(line.split()[-2])
            rows[name] = rows.get(name, 0.0) + ms / 1e3
    out[label + " stages"] = rows
    assert ptx is None or k.get_kernel_source() == ptx  # the same PTX twice
    ptx = k.get_kernel_source()
print(json.dumps(out))
"""

KERNELS = [("add", "elementwise add (elementwise.tile vadd)"),
           ("gemm128_256_64_256_3", "GEMM 128x256x64, 3 stages, 256 threads"),
           ("gemm128_128_32_128_3", "GEMM 128x128x32, 3 stages, 128 threads"),
           ("fa", "FlashAttention fwd, dim 128, 128x128 blocks")]

ONE_TIME = ["import tlc", "import tlc.language", "import tlc.compiler (MLIR bindings)",
            "import frontend, runtime", "context + dialects (first)",
            "context + dialects (again)", "parse the 4 pipelines (first)",
            "parse the 4 pipelines (again)"]

# Top-level rows of the timing table, grouped into columns.
GROUPS = [("frontend", ("frontend:",)), ("tile", ("optimized:",)), ("gpu", ("gpu:",)),
          ("nvvm", ("nvvm:",)), ("ptx", ("ptx:",)), ("IR text", ("IR snapshot",))]


def _child_env(pycache: str) -> dict:
    env = dict(os.environ, PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("TLC_TIMING", None)
    return env


def overhead(repo: str, repeat: int, pycache: str) -> None:
    env = _child_env(pycache)

    def child(kernel: str) -> dict:
        out = subprocess.run([sys.executable, "-c", OVERHEAD_CHILD, repo, kernel],
                             capture_output=True, text=True, env=env, check=True)
        return json.loads(out.stdout)

    for kernel, _ in KERNELS:  # fills the bytecode cache, and the page cache
        child(kernel)
    runs = {kernel: [child(kernel) for _ in range(repeat)] for kernel, _ in KERNELS}
    every = [r for rows in runs.values() for r in rows]
    med = lambda rows, key: statistics.median(r[key] for r in rows) * 1e3  # noqa: E731
    print(f"One-time costs of a process (median of {len(every)} processes):")
    for key in ONE_TIME:
        print(f"  {key:38} {med(every, key):8.1f} ms")
    print(f"\nPer kernel, tlc.compile to PTX (the process of median time of {repeat}), ms:")
    head = "".join(f"{g:>9}" for g, _ in GROUPS)
    print(f"  {'kernel':44} {'run':4} {'total':>8}{head}{'other':>9}")
    for kernel, title in KERNELS:
        for label in ("cold", "warm"):
            # The breakdown of the run whose total is the median, so the columns add up.
            run = sorted(runs[kernel], key=lambda r: r[label])[(repeat - 1) // 2]
            parts = [sum(v for k, v in run[label + " stages"].items() if k.startswith(prefixes))
                     * 1e3 for _, prefixes in GROUPS]
            total = run[label] * 1e3
            name = title if label == "cold" else ""
            print(f"  {name:44} {label:4} {total:8.1f}"
                  + "".join(f"{p:9.1f}" for p in parts) + f"{total - sum(parts):9.1f}")


def run(repo: str, cache: str, pycache: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, repo], capture_output=True, text=True,
                         env=dict(_child_env(pycache), TLC_CACHE_DIR=cache), check=True)
    return json.loads(out.stdout)


def cache_hits(repo: str, pycache: str) -> None:
    with tempfile.TemporaryDirectory() as cache:
        run(repo, cache, pycache)  # fills the bytecode cache, not counted
    cold, disk = [], []
    for _ in range(5):
        with tempfile.TemporaryDirectory() as cache:
            cold.append(run(repo, cache, pycache))
            disk.append(run(repo, cache, pycache))
    med = lambda rows, key: statistics.median(r[key] for r in rows) * 1e3  # noqa: E731
    print(f"import tlc + example:        {med(cold, 'import'):8.1f} ms")
    print(f"cold compile to PTX:         {med(cold, 'first'):8.1f} ms")
    print(f"disk cache hit, new process: {med(disk, 'first'):8.1f} ms")
    print(f"disk cache hit, warm process: {med(disk, 'disk_hit_warm'):8.1f} ms")
    print(f"memory cache hit:            {med(cold, 'memory_hit'):8.3f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="processes per kernel (default 3)")
    ap.add_argument("--only", choices=["overhead", "cache"], help="one of the two parts")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as pycache:
        if args.only != "cache":
            overhead(repo, args.repeat, pycache)
        if args.only != "overhead":
            if args.only is None:
                print()
            cache_hits(repo, pycache)


if __name__ == "__main__":
    main()
