"""Compile time and cache hits of tlc, beside TileLang's where it is given (no GPU needed).

    python bench/compile_time.py [--repeat N] [--only overhead|cache]
                                 [--tilelang TILELANG_PYTHON]

First-compile overhead (issue 14): for each kernel of a fixed set (the
elementwise add of examples/elementwise.tile, the GEMMs 128x256x64 in 3
stages and 128x128x32 of examples/gemm.py, FlashAttention forward with head
dim 128 and 128x128 blocks of examples/attention.py, the paged MLA decode of
examples/mla_decode.py, all for sm_90a), a
fresh process measures its one-time costs one by one: importing tlc, the
language, the compiler (MLIR bindings) and the frontend and runtime; creating
a context and loading the dialects; parsing the pass pipelines. Then it
builds the program (runs the factory; tlc's frontend runs later, in the
compile) and compiles it with tlc.compile twice: cold (the first compile of the
process, after the costs above) and warm (the same again), each with the
stage breakdown of tlc.timing. The processes run with the bytecode
cache on (PYTHONPYCACHEPREFIX in a temporary folder, filled by a first
process that is not counted), as an installed package has it.

With --tilelang, the Python of a separate environment where TileLang is
installed (TileLang is no dependency of tlc), each round also compiles every
program with TileLang right after tlc, in a fresh process of that Python
(bench/tilelang_shim.py: the same example text, `tlc` aliased to `tilelang`;
TileLang's caches off and empty; its default execution backend, tvm_ffi, which
runs nvcc to a cubin), and prints the issue's table: cold time of each side
(building the program + the first compile of the process), their ratio, the
targets (at most 0.15x TileLang's time, at most 0.5 s), TileLang's split, and
the imports of both. tlc emits PTX, which the driver turns into machine code
at load; TileLang's nvcc includes that step (ptxas), so the tlc processes then
also time ptxas on their PTX, a column apart from tlc's compile.

Cache hits (issue 3), also with the bytecode cache on: a fresh process compiles
the 128x128x32 GEMM to PTX with
an empty disk cache; the time of the first call (frontend + passes + LLVM
NVPTX) is reported apart from the import. Hits: the same call again in the
process (memory cache); the disk cache read by a fresh process (its first
call, so including the one-time import of tlc.runtime); and the disk cache
read by a new JITFactory in a running process (the per-kernel cost).

Medians over the runs (5 for the cache hits, --repeat, default 3, for the
rest).
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
repo, spec = sys.argv[1], json.loads(sys.argv[2])
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
def arg(a):
    return tlc.language.dynamic(a["dynamic"]) if isinstance(a, dict) else a
t = time.perf_counter()
if "tile" in spec:
    from tlc.frontend.tile_file import load_tile_file
    prim = load_tile_file(os.path.join(repo, "examples", spec["tile"]))[spec["kernel"]]
else:
    import importlib
    sys.path.insert(0, os.path.join(repo, "examples"))
    jit = getattr(importlib.import_module(spec["module"]), spec["factory"])
    prim = jit.factory(*map(arg, spec["args"]), **spec.get("kwargs", {}))
out["program"] = time.perf_counter() - t
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
if "--ptxas" in sys.argv[3:]:  # what tlc leaves to the driver: PTX -> SASS, not counted above
    import subprocess, tempfile
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "k.ptx"), "w") as f:
            f.write(ptx)
        t = time.perf_counter()
        subprocess.run(["ptxas", "-arch=sm_90a", "-O3", "-lineinfo",
                        os.path.join(d, "k.ptx"), "-o", os.path.join(d, "k.cubin")], check=True)
        out["ptxas"] = time.perf_counter() - t
print(json.dumps(out))
"""

# The programs, given as data to both compilers' child processes (tlc's above,
# TileLang's bench/tilelang_shim.py), so that both build the same program: a .tile
# file's kernel, or an example module's @jit factory with its arguments
# ({"dynamic": NAME} is T.dynamic(NAME)).
KERNELS = [
    ("add", "elementwise add (elementwise.tile vadd)",
     {"tile": "elementwise.tile", "kernel": "vadd"}),
    ("gemm128_256_64_256_3", "GEMM 128x256x64, 3 stages, 256 threads",
     {"module": "gemm", "factory": "matmul", "args": [4096, 4096, 4096, 128, 256, 64, 256, 3]}),
    ("gemm128_128_32_128_3", "GEMM 128x128x32, 3 stages, 128 threads",
     {"module": "gemm", "factory": "matmul", "args": [4096, 4096, 4096, 128, 128, 32, 128, 3]}),
    ("fa", "FlashAttention fwd, dim 128, 128x128 blocks",
     {"module": "attention", "factory": "attention", "args": [8, 32, 4096, 128, False],
      "kwargs": {"block_M": 128, "block_N": 128, "num_stages": 2, "threads": 256}}),
    ("mla", "MLA decode, paged, 132 x 128 heads",
     {"module": "mla_decode", "factory": "mla_decode",
      "args": [132, 128, {"dynamic": "pages"}, 128]}),
]

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


def _json_of(cmd: list, env: dict) -> dict:
    """The JSON line a child process prints last; its stderr if it fails."""
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode:
        sys.exit(f"{' '.join(cmd[:2])} ... failed ({out.returncode}):\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.splitlines()[-1])


def _tilelang_child(python: str, repo: str, spec: dict, env: dict) -> dict:
    """TileLang compiling `spec` in a fresh process, its caches off and empty."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(env, TILELANG_DISABLE_CACHE="1", TILELANG_CACHE_DIR=cache,
                   TILELANG_PRINT_ON_COMPILATION="0")
        return _json_of([python, os.path.join(repo, "bench", "tilelang_shim.py"), repo,
                         json.dumps(spec)], env)


def overhead(repo: str, repeat: int, pycache: str, tilelang: str | None = None) -> None:
    env = _child_env(pycache)

    def child(spec: dict) -> dict:
        return _json_of([sys.executable, "-c", OVERHEAD_CHILD, repo, json.dumps(spec)]
                        + (["--ptxas"] if tilelang else []), env)

    for _, _, spec in KERNELS:  # fills the bytecode cache, and the page cache
        child(spec)
        if tilelang:
            _tilelang_child(tilelang, repo, spec, env)
    runs = {kernel: [] for kernel, _, _ in KERNELS}
    peer = {kernel: [] for kernel, _, _ in KERNELS}
    for _ in range(repeat):  # rounds, each kernel by tlc then TileLang: both see the same load
        for kernel, _, spec in KERNELS:
            runs[kernel].append(child(spec))
            if tilelang:
                peer[kernel].append(_tilelang_child(tilelang, repo, spec, env))
    every = [r for rows in runs.values() for r in rows]
    med = lambda rows, key: statistics.median(r[key] for r in rows) * 1e3  # noqa: E731
    print(f"One-time costs of a process (median of {len(every)} processes):")
    for key in ONE_TIME:
        print(f"  {key:38} {med(every, key):8.1f} ms")
    print(f"\nPer kernel, tlc.compile to PTX (the process of median time of {repeat}), ms:")
    head = "".join(f"{g:>9}" for g, _ in GROUPS)
    print(f"  {'kernel':44} {'run':4} {'total':>8}{head}{'other':>9}")
    for kernel, title, _ in KERNELS:
        for label in ("cold", "warm"):
            # The breakdown of the run whose total is the median, so the columns add up.
            run = sorted(runs[kernel], key=lambda r: r[label])[(repeat - 1) // 2]
            parts = [sum(v for k, v in run[label + " stages"].items() if k.startswith(prefixes))
                     * 1e3 for _, prefixes in GROUPS]
            total = run[label] * 1e3
            name = title if label == "cold" else ""
            print(f"  {name:44} {label:4} {total:8.1f}"
                  + "".join(f"{p:9.1f}" for p in parts) + f"{total - sum(parts):9.1f}")
    if tilelang:
        print()
        beside_tilelang(runs, peer, repeat)


# TileLang's compile, split as bench/tilelang_shim.py times it.
PEER_GROUPS = [("passes", lambda s: s.get("passes", 0.0)),
               ("codegen", lambda s: s.get("device codegen", 0.0) - s.get("nvcc", 0.0)),
               ("nvcc", lambda s: s.get("nvcc", 0.0)),
               ("host", lambda s: s.get("host codegen", 0.0))]


def beside_tilelang(runs: dict, peer: dict, repeat: int) -> None:
    """The side-by-side table of issue 14: cold = building the program + the first
    compile of a fresh process, on each side; medians over the interleaved runs."""
    med = lambda rows, f: statistics.median(f(r) for r in rows) * 1e3  # noqa: E731
    tlc_imports = lambda r: sum(r[k] for k in ONE_TIME[:4])  # noqa: E731
    every, every_peer = [r for v in runs.values() for r in v], [r for v in peer.values() for r in v]
    version = every_peer[0]["version"]
    print(f"tlc beside TileLang {version} (backend {every_peer[0]['backend']}), the same "
          f"programs for sm_90a, cold = building the program + the first compile of a fresh "
          f"process (median of {repeat}, interleaved), ms:")
    print(f"  {'kernel':44} {'tlc':>8} {'TileLang':>9} {'ratio':>6} {'tlc+ptxas':>10} "
          f"{'ratio':>6}  targets (<= 0.15x, <= 500 ms)")
    for kernel, title, _ in KERNELS:
        ours = med(runs[kernel], lambda r: r["program"] + r["cold"])
        with_ptxas = med(runs[kernel], lambda r: r["program"] + r["cold"] + r["ptxas"])
        theirs = med(peer[kernel], lambda r: r["program"] + r["cold"])
        missed = [m for m, bad in (("ratio", ours / theirs > 0.15), ("time", ours > 500)) if bad]
        print(f"  {title:44} {ours:8.1f} {theirs:9.1f} {ours / theirs:6.3f} {with_ptxas:10.1f} "
              f"{with_ptxas / theirs:6.3f}  {'missed: ' + ', '.join(missed) if missed else 'met'}")
    print(f"\nTileLang's cold compile split (the process of median compile time of {repeat}), ms:")
    head = "".join(f"{g:>9}" for g, _ in PEER_GROUPS)
    print(f"  {'kernel':44} {'program':>8} {'compile':>8}{head}{'other':>9} {'warm':>8}")
    for kernel, title, _ in KERNELS:
        run = sorted(peer[kernel], key=lambda r: r["cold"])[(repeat - 1) // 2]
        parts = [f(run["cold stages"]) * 1e3 for _, f in PEER_GROUPS]
        total = run["cold"] * 1e3
        print(f"  {title:44} {run['program'] * 1e3:8.1f} {total:8.1f}"
              + "".join(f"{p:9.1f}" for p in parts)
              + f"{total - sum(parts):9.1f} {run['warm'] * 1e3:8.1f}")
    torch, rest = (med(every_peer, lambda r: r[k]) for k in ("import torch", "import tilelang"))
    peer_imports = med(every_peer, lambda r: r["import torch"] + r["import tilelang"])
    print(f"\nImports, once a process (median of {len(every)} processes each): "
          f"tlc {med(every, tlc_imports):.1f} ms (tlc, tlc.language, the compiler, "
          f"frontend and runtime); TileLang {peer_imports:.1f} ms (torch {torch:.1f}, "
          f"the rest of tilelang {rest:.1f})")


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
    ap.add_argument("--tilelang", metavar="PYTHON",
                    help="the Python of an environment with TileLang: compile the same "
                         "programs with it too, interleaved, and print the ratios")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.tilelang and args.only == "cache":
        ap.error("--tilelang compares first compiles: not with --only cache")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as pycache:
        if args.only != "cache":
            overhead(repo, args.repeat, pycache, args.tilelang)
        if args.only != "overhead":
            if args.only is None:
                print()
            cache_hits(repo, pycache)


if __name__ == "__main__":
    main()
