"""A GEMM whose pipeline is scheduled by hand, with T.Pipelined's `stage` and
`order` (and `group`) as TileLang's software-pipeline guide writes them.

    python examples/pipeline_schedule.py [--m 1000 --n 1000 --k 520] [--copies-last] [--check]

The two copies are stage 0 and the gemm the last stage, so the pipeline is
`depth` deep (num_stages = max(stage) + 1): each iteration's copies run
depth - 1 iterations ahead. `copies_last` orders them after the gemm (order
[1, 2, 0]): each iteration computes first, then issues the copies of a later
iteration; else before it (order [0, 1, 2], the compiler's own schedule).
`grouped` says the same with `group=[[0, 1], [2]]`: both copies under one
entry. The scalar `k0` takes no entry. Without --check the program runs in
tlc's interpreter (numpy); with --check, compiled, on the GPU against torch.
"""

import argparse
import sys

import tlc
import tlc.language as T


@tlc.jit(out_idx=[-1])
def scheduled_matmul(M, N, K, block_M=128, block_N=128, block_K=32, threads=128, depth=3,
                     copies_last=False, grouped=False, dtype="float16",
                     accum_dtype="float32"):
    if grouped:
        stage, order, group = [0, depth - 1], ([1, 0] if copies_last else [0, 1]), [[0, 1], [2]]
    else:
        stage = [0, 0, depth - 1]
        order, group = ([1, 2, 0] if copies_last else [0, 1, 2]), None

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), stage=stage, order=order, group=group):
                k0 = ko * block_K
                T.copy(A[by * block_M, k0], A_shared)
                T.copy(B[k0, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--k", type=int, default=520)
    ap.add_argument("--copies-last", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    kernel = tlc.jit(scheduled_matmul.factory, out_idx=[-1], target="sm_80")(
        args.m, args.n, args.k, copies_last=args.copies_last)
    ptx = kernel.get_kernel_source()
    print(f"compiled scheduled gemm for sm_80: {ptx.count('cp.async.ca') + ptx.count('cp.async.cg')} "
          f"cp.async, {ptx.count('mma.sync')} mma.sync")
    if not args.check:
        import numpy as np

        m, n, k = min(args.m, 200), min(args.n, 160), min(args.k, 96)
        run = tlc.jit(scheduled_matmul.factory, out_idx=[-1], interpret=True)(
            m, n, k, copies_last=args.copies_last)
        rng = np.random.default_rng(0)
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = run(a, b)
        ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
        np.testing.assert_allclose(c.astype(np.float32), ref.astype(np.float32),
                                   rtol=1e-2, atol=5e-2)
        print(f"interpreter: {m} x {n} x {k} matches numpy")
        return 0
    import torch

    kernel = scheduled_matmul(args.m, args.n, args.k, copies_last=args.copies_last)
    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
    b = torch.randn(args.k, args.n, device="cuda", dtype=torch.float16)
    torch.testing.assert_close(kernel(a, b), (a.float() @ b.float()).half(), rtol=1e-2,
                               atol=1e-1)
    print("matches torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
