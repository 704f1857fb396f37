"""Compile the atomics checks (no GPU needed).

    python bench/build_atomics.py OUT_DIR

T.atomic_add of tiles (a fragment by its origin, a shared tile by slices,
one value into a region), T.atomic_add(..., return_prev=True) handing out
slots, T.atomic_max / T.atomic_min of float32 and int32 elements, with
memory orders, and a histogram counted in shared memory; each written as OUT_DIR/<name>.tlcart with a check for
test/gpu/run_artifacts.py.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "python"))
sys.path.insert(0, HERE)

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402
from checks import save_checked  # noqa: E402
from test_atomics import _splitk_tiles, compact, shared_histogram  # noqa: E402


def extremes(dtype):
    @T.prim_func
    def ext(X: T.Tensor((4, 64), dtype), Hi: T.Tensor((64,), dtype),
            Lo: T.Tensor((64,), dtype)):
        with T.Kernel(4, threads=64) as b:
            for j in T.Parallel(64):
                T.atomic_max(Hi[j], X[b, j], memory_order="release")
                T.atomic_min(Lo[j], X[b, j], memory_order="acq_rel")

    return ext


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    save_checked(tlc.compile(_splitk_tiles(), target="sm_90a").artifact,
                 {"expect": {"C": "C + 6 * A", "D": "torch.stack([torch.cat([D[0, :4] + 3, D[0, 4:]]), "
                                                    "D[1] + 6 * A])"},
                  "atol": 1e-4, "rtol": 1e-5, "seed": 1},
                 os.path.join(out, "atomic_tiles.tlcart"))
    save_checked(tlc.compile(compact, target="sm_90a").artifact,
                 {"inputs": {"X": "arange", "Count": "zeros"},
                  "expect": {"Count": "(X % 3 == 0).sum().reshape(1).to(torch.int32)"}},
                 os.path.join(out, "atomic_return_prev.tlcart"))
    save_checked(tlc.compile(shared_histogram, target="sm_90a").artifact,
                 {"inputs": {"X": "randint(0, 1000)"},
                  "expect": {"H": "torch.stack([torch.bincount(X[b * 256:(b + 1) * 256] % 16, "
                                  "minlength=16) for b in range(4)]).to(torch.int32)"}},
                 os.path.join(out, "atomic_shared_histogram.tlcart"))
    for dt in ("float32", "int32"):
        save_checked(tlc.compile(extremes(dt), target="sm_90a").artifact,
                     {"expect": {"Hi": "torch.maximum(Hi, X.max(dim=0).values)",
                                 "Lo": "torch.minimum(Lo, X.min(dim=0).values)"}},
                     os.path.join(out, f"atomic_extremes_{dt}.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
