"""The benchmark artifacts of a folder, grouped by problem size.

Files are bench_<config>_<size>.tlcart, <size> a number (M = N = K) or MxNxK;
the GPU scripts (gemm_gpu.py, fp8_gemm_gpu.py, splitk_gpu.py) time each size's
configs against the peers in one run.
"""

import glob
import os

from tlc import runtime


def by_size(art_dir: str) -> dict[str, list]:
    """size token -> [(config, loaded Kernel)], in file-name order."""
    arts: dict[str, list] = {}
    for path in sorted(glob.glob(os.path.join(art_dir, "bench_*.tlcart"))):
        config, size = os.path.basename(path)[len("bench_"):-len(".tlcart")].rsplit("_", 1)
        arts.setdefault(size, []).append((config, runtime.load_artifact(path)))
    return arts
