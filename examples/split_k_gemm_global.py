"""Split-K GEMM in two kernels: C = A @ B with K cut into `split` slices.

    python examples/split_k_gemm_global.py [--m 256 --n 256 --k 1024 --split 4]

The first kernel (one block per tile of C and slice of K) writes each
slice's float32 partial tile into a global scratch tensor,
`partial = T.alloc_global((split, M, N), "float32")`; the second (one block
per tile of C) adds the `split` partial tiles and stores C in the input
dtype. Both kernels are launched, in order, by one call of the compiled
kernel, and the scratch tensor is allocated by that call: unlike
examples/gemm_splitk.py (T.atomic_add into a zeroed float32 C), C needs no
zeroing, holds the input dtype, and the sum's order is fixed.
"""

import argparse
import sys

import tlc
import tlc.language as T


@tlc.jit(out_idx=[-1])
def splitk_gemm_global(M, N, K, block_M=64, block_N=64, block_K=32, split=4, threads=128,
                       num_stages=2, dtype="float16"):
    # Each slice is whole K tiles; the last may run past K (it reads zeros).
    slice_k = T.ceildiv(T.ceildiv(K, block_K), split) * block_K

    @T.prim_func
    def splitk_gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
                    C: T.Tensor((M, N), dtype)):
        partial = T.alloc_global((split, M, N), "float32")
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split,
                      threads=threads) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(slice_k // block_K, num_stages=num_stages):
                T.copy(A[by * block_M, bz * slice_k + k * block_K], A_shared)
                T.copy(B[bz * slice_k + k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, acc)
            T.copy(acc, partial[bz, by * block_M, bx * block_N])
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            total = T.alloc_fragment((block_M, block_N), "float32")
            part = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(total)
            for s in T.serial(split):
                T.copy(partial[s, by * block_M, bx * block_N], part)
                for i, j in T.Parallel(block_M, block_N):
                    total[i, j] += part[i, j]
            T.copy(total, C[by * block_M, bx * block_N])

    return splitk_gemm


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--split", type=int, default=4)
    args = ap.parse_args()
    kernel = splitk_gemm_global(args.m, args.n, args.k, split=args.split)
    kernels = [k["name"] for k in kernel.artifact["kernels"]]
    print(f"compiled {kernel.name}: kernels {', '.join(kernels)}; scratch "
          f"{[(s['name'], s['shape']) for s in kernel.artifact['scratch']]}")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
    b = torch.randn(args.k, args.n, device="cuda", dtype=torch.float16)
    c = kernel(a, b)
    ok = torch.allclose(c.float(), a.float() @ b.float(), rtol=1e-2, atol=1e-1)
    print("matches torch" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
