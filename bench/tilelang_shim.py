"""TileLang's side of bench/compile_time.py: one program compiled cold by TileLang.

    TILELANG_PYTHON bench/tilelang_shim.py REPO SPEC

Run by `compile_time.py --tilelang TILELANG_PYTHON`, with the Python of a
separate environment where TileLang is installed (never tlc's: TileLang is no
dependency of tlc). SPEC is a program of compile_time.py's KERNELS, as JSON.
`tlc` and `tlc.language` are aliased to `tilelang` and `tilelang.language`
before the example is imported, so TileLang compiles literally the program
text tlc compiles (the examples are written in TileLang's API with only those
two imports changed; a .tile file is run with `T` and `tlc` bound the same way).

Measured in this fresh process, with TileLang's caches off
(TILELANG_DISABLE_CACHE=1, TILELANG_CACHE_DIR an empty folder, set by the
caller): importing torch (TileLang imports it first), importing the rest of
TileLang, building the program (`jit.get_tir`: TileLang's frontend runs the
factory and parses the kernel here), then `tilelang.compile(prim,
target={"kind": "cuda", "arch": "sm_90a"})` twice (cold: the first compile of
the process; warm: the same again), each split into TileLang's passes
(`lower_to_host_device_ir`), CUDA C++ code generation, nvcc (to a cubin) and the
host code generation; the rest is building the execution adapter. No GPU is
needed. Prints one JSON line.
"""

import json
import linecache
import os
import re
import sys
import time

TARGET = {"kind": "cuda", "arch": "sm_90a"}


def alias_tlc_to_tilelang() -> None:
    """`import tlc` / `import tlc.language as T` give TileLang's modules."""
    import tilelang
    import tilelang.language

    sys.modules["tlc"] = tilelang
    sys.modules["tlc.language"] = tilelang.language


def program(repo: str, spec: dict):
    """(prim_func, out_idx) of SPEC, built by TileLang's frontend."""
    import importlib

    import tilelang
    import tilelang.language as T

    examples = os.path.join(repo, "examples")
    if "tile" in spec:  # run as tlc runs a .tile file: T and tlc already bound
        path = os.path.join(examples, spec["tile"])
        with open(path) as f:
            text = f.read()
        linecache.cache[path] = (len(text), None, text.splitlines(True), path)  # for getsource
        scope = {"T": T, "tlc": tilelang, "__name__": "tile_file", "__file__": path}
        exec(compile(text, path, "exec"), scope)
        return scope[spec["kernel"]], None
    sys.path.insert(0, examples)
    jit = getattr(importlib.import_module(spec["module"]), spec["factory"])
    args = [T.dynamic(a["dynamic"]) if isinstance(a, dict) else a for a in spec["args"]]
    return jit.get_tir(*args, **spec.get("kwargs", {})), jit.out_idx


def time_stages(stages: dict) -> None:
    """Wraps TileLang's compile steps so that each adds its time to `stages`."""
    import tilelang.contrib.nvcc as nvcc
    import tilelang.engine.lower

    lower = sys.modules["tilelang.engine.lower"]  # the package's `lower` is a function

    def wrap(module, name, label):
        inner = getattr(module, name)

        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                stages[label] = stages.get(label, 0.0) + time.perf_counter() - t

        setattr(module, name, timed)

    wrap(lower, "lower_to_host_device_ir", "passes")
    wrap(lower, "device_codegen", "device codegen")  # CUDA C++, and nvcc inside it
    wrap(nvcc, "compile_cuda", "nvcc")
    wrap(lower, "host_codegen", "host codegen")


def main() -> None:
    repo, spec = sys.argv[1], json.loads(sys.argv[2])
    out = {}
    t = time.perf_counter()
    import torch  # noqa: F401

    out["import torch"] = time.perf_counter() - t
    t = time.perf_counter()
    import tilelang
    import tilelang.language  # noqa: F401

    out["import tilelang"] = time.perf_counter() - t
    out["version"] = tilelang.__version__
    alias_tlc_to_tilelang()
    t = time.perf_counter()
    prim, out_idx = program(repo, spec)
    out["program"] = time.perf_counter() - t
    stages = {}
    time_stages(stages)
    source = None
    for label in ("cold", "warm"):
        stages.clear()
        t = time.perf_counter()
        kernel = tilelang.compile(prim, out_idx=out_idx, target=TARGET)
        out[label] = time.perf_counter() - t
        out[label + " stages"] = dict(stages)
        # The same CUDA twice, but for the names of reduction workspaces, which TileLang
        # 0.1.15 gives in either order (MLA decode's two: workspace, workspace_1).
        text = re.sub(r"\bworkspace(_\d+)?\b", "workspace", kernel.get_kernel_source())
        assert source is None or text == source
        source = text
    out["backend"] = kernel.execution_backend
    print(json.dumps(out))


if __name__ == "__main__":
    main()
