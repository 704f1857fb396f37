"""Split-K GEMM: C = A @ B^T with K cut into `split` slices, one block per
(tile of C, slice), the slices' partial sums added into C with T.atomic_add.

    python examples/gemm_splitk.py [--m 128 --n 8192 --k 8192 --split 4]

For shapes with too few tiles of C to fill the GPU (decode: M of 64 or 128
against large N and K), splitting K multiplies the blocks. C (float32) must
hold zeros before the call: the kernel adds into it. On sm_90a each slice's
loop is the warp-specialized TMA + wgmma pipeline.
"""

import argparse
import sys

import tlc
import tlc.language as T


@tlc.jit
def matmul_splitk(M, N, K, block_M=64, block_N=128, block_K=64, split=4, threads=128,
                  num_stages=4, dtype="float16"):
    # Each slice is whole K tiles, so slices never overlap; the last one may
    # run past K (it reads zeros there).
    slice_k = T.ceildiv(T.ceildiv(K, block_K), split) * block_K

    @T.prim_func
    def gemm_splitk(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype),
                    C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split,
                      threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(slice_k // block_K, num_stages=num_stages):
                T.copy(A[by * block_M, bz * slice_k + k * block_K], A_shared)
                T.copy(B[bx * block_N, bz * slice_k + k * block_K], B_shared)
                T.gemm(A_shared, B_shared, acc, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                T.atomic_add(C[by * block_M + i, bx * block_N + j], acc[i, j])

    return gemm_splitk


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=128)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--k", type=int, default=8192)
    ap.add_argument("--split", type=int, default=4)
    args = ap.parse_args()
    kernel = matmul_splitk(args.m, args.n, args.k, split=args.split)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name}: {ptx.count('atom.global.add.f32')} atomic adds, "
          f"{ptx.count('wgmma.mma_async')} wgmma in the PTX")
    try:
        import torch
    except ImportError:
        return 0
    if not torch.cuda.is_available():
        return 0
    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
    b = torch.randn(args.n, args.k, device="cuda", dtype=torch.float16)
    c = torch.zeros(args.m, args.n, device="cuda")
    kernel(a, b, c)
    ok = torch.allclose(c, a.float() @ b.float().T, rtol=1e-2, atol=1e-1)
    print("matches torch" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
