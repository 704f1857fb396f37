"""Compile the elementwise checks and benchmarks to artifacts (no GPU needed).

    python bench/build_elementwise.py OUT_DIR

Writes one .tlcart per (kernel, dtype, size) with a "check" entry for
test/gpu/run_artifacts.py, which bench/elementwise_gpu.py also times.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import elementwise  # noqa: E402
from tlc import compiler, ir, runtime  # noqa: E402

SIZES = [(4096, 4096), (1000, 1000)]
CASES = {
    "vadd": (elementwise.build_vadd, {"C": "A + B"}),
    "scale_bias": (elementwise.build_scale_bias, {"Y": "X * 2 + bias[None, :]"}),
    "stream_rows": (elementwise.build_stream_rows, {"Y": "X + 1"}),
}


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.load_all_available_dialects()
        for name, (build, expect) in CASES.items():
            for dtype in ("float32", "float16"):
                artifact = compiler.compile_module(build(dtype), "sm_90a").artifact()
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
