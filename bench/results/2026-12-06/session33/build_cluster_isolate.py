"""Session 33: where the clustered GEMM's time goes (session 32's compiler-derived multicast
ran at 0.37-0.45x cuBLAS against 0.94x for the persistent kernel, H100, h100_run1/gemm.txt).
Four variants of test_clusters.py's program at 4096^3, 128 x 256 x 64, 3 stages, for
bench/gemm_gpu.py:

- plain:   no clusters (persistent);
- nonpers: no clusters, the loop's trip count made to depend on bx (+ min(bx, 0), zero):
           not persistent, one block per tile;
- c2x1nomc: clusters of 2 along x, A's row made to depend on bx (+ min(bx, 0)): nothing
           multicast, the cluster launch and its barriers only;
- c2x1:    clusters of 2 along x, A multicast (session 32's).

    python bench/results/2026-12-06/session33/build_cluster_isolate.py OUT_DIR
"""

import os
import sys

import tlc
import tlc.language as T


def gemm(M, N, K, bm, bn, bk, stages, threads, cluster, depend_loop, depend_a):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
             C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads,
                      cluster_dims=cluster) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_f = T.alloc_fragment((bm, bn), "float")
            T.clear(C_f)
            extra = T.min(bx, 0)
            for k in T.Pipelined(T.ceildiv(K, bk) + (extra if depend_loop else 0),
                                 num_stages=stages):
                T.copy(A[by * bm + (extra if depend_a else 0), k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * bm, bx * bn])

    return main


def main(out):
    os.makedirs(out, exist_ok=True)
    n = 4096
    for tag, cluster, loop, a in (("plain", None, False, False), ("nonpers", None, True, False),
                                  ("c2x1nomc", (2, 1, 1), False, True),
                                  ("c2x1", (2, 1, 1), False, False)):
        kernel = tlc.compile(gemm(n, n, n, 128, 256, 64, 3, 256, cluster, loop, a),
                             target="sm_90a")
        ptx = kernel.get_kernel_source()
        print(tag, "multicast" if ".multicast::cluster" in ptx else "-",
              "persistent" if kernel.artifact.get("persistent") else "")
        kernel.save(os.path.join(out, f"bench_128x256x64s3-{tag}_{n}.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
