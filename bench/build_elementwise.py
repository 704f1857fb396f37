"""Compile the elementwise checks and benchmarks to artifacts (no GPU needed).

    python bench/build_elementwise.py OUT_DIR

Writes one .tlcart per (kernel, dtype, size) with a "check" entry for
test/gpu/run_artifacts.py, which bench/elementwise_gpu.py also times:
examples/elementwise.py's kernels, and vadd_parallel (the same sum written
as a T.Parallel over global tensors, as TileLang's documentation writes it).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import elementwise  # noqa: E402
import tlc  # noqa: E402
import tlc.language as T  # noqa: E402
from tlc import compiler, ir, runtime  # noqa: E402

SIZES = [(4096, 4096), (1000, 1000)]
CASES = {
    "vadd": (elementwise.build_vadd, {"C": "A + B"}),
    "scale_bias": (elementwise.build_scale_bias, {"Y": "X * 2 + bias[None, :]"}),
    "stream_rows": (elementwise.build_stream_rows, {"Y": "X + 1"}),
}


def parallel_vadd(dtype: str):
    """C = A + B as TileLang's documentation writes an elementwise kernel: a
    T.Parallel over the block's tile indexing the global tensors directly (no
    fragment; tlc gives each thread one element per register of it)."""
    M, N = T.dynamic("M"), T.dynamic("N")

    @T.prim_func
    def vadd_parallel(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype),
                      C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 32), threads=128) as (bx, by):
            for i, j in T.Parallel(32, 128):
                C[by * 32 + i, bx * 128 + j] = A[by * 32 + i, bx * 128 + j] + \
                    B[by * 32 + i, bx * 128 + j]

    return vadd_parallel


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.load_all_available_dialects()
        for name, (build, expect) in CASES.items():
            for dtype in ("float32", "float16"):
                artifact = compiler.compile_module(build(dtype), "sm_90a").artifact()
                save_sizes(out, name, dtype, artifact, expect)
    for dtype in ("float32", "float16"):
        artifact = tlc.compile(parallel_vadd(dtype), target="sm_90a").artifact
        save_sizes(out, "vadd_parallel", dtype, artifact, {"C": "A + B"})


def save_sizes(out: str, name: str, dtype: str, artifact: dict, expect: dict) -> None:
    """One artifact per size of SIZES, each with its check entry."""
    for m, n in SIZES:
        check = {"symbols": {"M": m, "N": n}, "expect": expect, "seed": m}
        if dtype == "float16":
            check.update(atol=1e-2, rtol=1e-3)
        artifact["check"] = check
        stem = f"{name}_{dtype}_{m}x{n}"
        runtime.save_artifact(artifact, os.path.join(out, stem + ".tlcart"))
        print("wrote", stem)


if __name__ == "__main__":
    main(sys.argv[1])
