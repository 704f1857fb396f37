"""GEMM in the tile language: C = A @ B (optionally A or B stored transposed).

    python examples/gemm.py [--m 1024 --n 1024 --k 1024] [--check]

The kernel is TileLang's tutorial GEMM: shared-memory tiles of A and B copied
in a T.Pipelined loop, T.gemm on tensor cores into a register fragment, and
the fragment copied out (or, with c_shared=True, staged through a shared tile
as TileLang's Hopper examples write it; in sm_90a's persistent kernel either
way leaves by a TMA store, the compiler adding the tile when the program has
none). With --check (and a GPU), it compares with torch.
"""

import argparse
import sys

import tlc
import tlc.language as T

@tlc.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, threads=128, num_stages=2,
           dtype="float16", accum_dtype="float32", trans_A=False, trans_B=False,
           policy=T.GemmWarpPolicy.Square, panel=0, wg_wait=None, c_shared=False):
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def gemm(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_tile, dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            if c_shared:
                C_shared = T.alloc_shared((block_M, block_N), dtype)
            if panel:
                T.use_swizzle(panel_size=panel)  # block rasterization for L2 reuse
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                if wg_wait is None:  # the compiler chooses
                    T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A,
                           transpose_B=trans_B, policy=policy)
                else:
                    T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A,
                           transpose_B=trans_B, policy=policy, wg_wait=wg_wait)
            if c_shared:
                T.copy(C_local, C_shared)
                T.copy(C_shared, C[by * block_M, bx * block_N])
            else:
                T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm

def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    kernel = matmul(args.m, args.n, args.k)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name}: {ptx.count('mma.sync')} mma.sync, "
          f"{ptx.count('ldmatrix')} ldmatrix in the PTX")
    if args.check:
        import torch

        a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
        b = torch.randn(args.k, args.n, device="cuda", dtype=torch.float16)
        c = kernel(a, b)
        ref = (a.float() @ b.float()).half()
        torch.testing.assert_close(c, ref, rtol=1e-2, atol=1e-1)
        print("matches torch")
    return 0

if __name__ == "__main__":
    sys.exit(main())
