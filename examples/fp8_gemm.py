"""fp8 GEMM with a scaled bf16 output: C = (A @ B^T) * scale.

    python examples/fp8_gemm.py [--m 4096 --n 4096 --k 4096]

A and B are float8_e4m3 (or float8_e5m2), B stored N x K as torch._scaled_mm
takes it (column-major K x N) by default; `trans_B=False` takes B stored K x N
and `trans_A=True` A stored K x M. On sm_90a the K tiles of 128 bytes go
through TMA into the 128-byte swizzle and wgmma m64nNk32 multiplies them with
an f32 accumulator (wgmma reads fp8 operands K-major only: a B stored K x N or
an A stored K x M is transposed in shared memory by the consumer threads
into one of two copies while the wgmma of the previous K tile reads the
other, which costs time and shared memory) (in the tensor cores' fp8 accumulation, like _scaled_mm's
use_fast_accum; promote=True adds each K tile's product in f32 instead); the
scale and the cast to bf16 are a fused epilogue. Compiles
without a GPU; with one (and torch) it checks against torch.
"""

import argparse
import sys

import tlc
import tlc.language as T


@tlc.jit(out_idx=[2])
def fp8_matmul(M, N, K, block_M=128, block_N=256, block_K=128, threads=256, num_stages=4,
               in_dtype="float8_e4m3", out_dtype="bfloat16", panel=8, promote=False,
               trans_A=False, trans_B=True):
    A_shape, A_tile = ((K, M), (block_K, block_M)) if trans_A else ((M, K), (block_M, block_K))
    B_shape, B_tile = ((N, K), (block_N, block_K)) if trans_B else ((K, N), (block_K, block_N))

    @T.macro
    def load(A, B, A_shared, B_shared, k, bx, by):
        if trans_A:
            T.copy(A[k * block_K, by * block_M], A_shared)
        else:
            T.copy(A[by * block_M, k * block_K], A_shared)
        if trans_B:
            T.copy(B[bx * block_N, k * block_K], B_shared)
        else:
            T.copy(B[k * block_K, bx * block_N], B_shared)

    @T.prim_func
    def gemm_fp8(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype),
                 C: T.Tensor((M, N), out_dtype), scale: T.float32):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_tile, in_dtype)
            B_shared = T.alloc_shared(B_tile, in_dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            if panel:
                T.use_swizzle(panel_size=panel)
            T.clear(acc)
            if promote:
                # The tensor cores accumulate fp8 products in fewer bits than
                # f32; summing each K tile's product into acc in f32 keeps
                # long K exact (twice the accumulator registers).
                part = T.alloc_fragment((block_M, block_N), "float32")
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    load(A, B, A_shared, B_shared, k, bx, by)
                    T.gemm(A_shared, B_shared, part, transpose_A=trans_A, transpose_B=trans_B,
                           clear_accum=True)
                    for i, j in T.Parallel(block_M, block_N):
                        acc[i, j] += part[i, j]
            else:
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    load(A, B, A_shared, B_shared, k, bx, by)
                    T.gemm(A_shared, B_shared, acc, transpose_A=trans_A, transpose_B=trans_B)
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] = acc[i, j] * scale
            T.copy(acc, C[by * block_M, bx * block_N])

    return gemm_fp8


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--layout", choices=["NT", "NN", "TN", "TT"], default="NT",
                    help="A and B as stored: N = not transposed (A M x K, B K x N), "
                         "T = transposed; NT is _scaled_mm's")
    args = ap.parse_args()
    ta, tb = args.layout[0] == "T", args.layout[1] == "T"
    # An operand the consumers transpose takes two buffers of its own (one
    # transposed while the wgmma reads the other): fewer stages, and TN
    # (both operands transposed) 128-column blocks.
    block_N, stages = {"NT": (256, 4), "NN": (256, 3), "TT": (256, 3), "TN": (128, 4)}[
        args.layout]
    kernel = fp8_matmul(args.m, args.n, args.k, block_N=block_N, num_stages=stages,
                        trans_A=ta, trans_B=tb)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name}: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA loads in the PTX")
    try:
        import torch
    except ImportError:
        return 0
    if not torch.cuda.is_available():
        return 0
    a = torch.randn(args.m, args.k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(args.n, args.k, device="cuda").to(torch.float8_e4m3fn)
    c = kernel(a.T.contiguous() if ta else a, b if tb else b.T.contiguous(), 0.5)
    ref = (a.float() @ b.float().T * 0.5).to(torch.bfloat16)
    ok = torch.allclose(c.float(), ref.float(), rtol=2e-2, atol=1.0)
    print("matches torch" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
