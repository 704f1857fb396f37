"""Session 32's clustered GEMM builds (no GPU needed): test/python/test_clusters.py's
clustered_gemm (TileLang's plain T.Pipelined GEMM with `cluster_dims`, whose shared
operand the compiler multicasts) checked against torch, and timed beside the same
program without clusters (which the compiler makes persistent) for bench/gemm_gpu.py.

    python bench/results/2026-12-05/session32/build_cluster_gemm.py OUT_DIR
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))

from checks import save_checked  # noqa: E402
from test_clusters import clustered_gemm  # noqa: E402

import tlc  # noqa: E402

# (name, block_M, block_N, block_K, stages, threads)
CONFIGS = [("128x256x64s3", 128, 256, 64, 3, 256), ("128x128x64s4", 128, 128, 64, 4, 256)]
SIZES = [(4096, 4096, 4096), (8192, 8192, 8192)]


def main(out):
    checks = os.path.join(out, "checks")
    os.makedirs(checks, exist_ok=True)
    for cluster in ((2, 1, 1), (1, 2, 1)):
        prim = clustered_gemm(512, 512, 1024, cluster=cluster)
        save_checked(tlc.compile(prim, target="sm_90a").artifact,
                     {"expect": {"C": "(A.float() @ B.float()).half()"}, "atol": 2e-1,
                      "rtol": 2e-2, "seed": 5},
                     os.path.join(checks, f"cluster_gemm_{cluster[0]}x{cluster[1]}_sm_90a.tlcart"))
    bench = os.path.join(out, "bench")
    os.makedirs(bench, exist_ok=True)
    for m, n, k in SIZES:
        for name, bm, bn, bk, stages, threads in CONFIGS:
            for tag, cluster in (("plain", None), ("c2x1", (2, 1, 1)), ("c1x2", (1, 2, 1))):
                prim = clustered_gemm(m, n, k, bm, bn, bk, stages, threads, cluster)
                kernel = tlc.compile(prim, target="sm_90a")
                kernel.save(os.path.join(bench, f"bench_{name}-{tag}_{m}.tlcart"))
        print("built", m)


if __name__ == "__main__":
    main(sys.argv[1])
