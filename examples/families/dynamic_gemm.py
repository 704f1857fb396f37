"""Dynamic-shape GEMM with a fused epilogue: Y = relu(X @ W^T + bias), X M x K,
W N x K (a linear layer's weight), bias N, all fp16, fp32 accumulation, where M
(the token count) is a run-time size: one compiled kernel serves every M.

    python examples/families/dynamic_gemm.py [--n 4096 --k 4096] [--dynamic-nk]

M is `T.dynamic("m")` (TileLang's `T.symbolic` is the same), so the grid
(`T.ceildiv(M, block_M)` rows of blocks) and the masking of the last row of
blocks are computed at each launch; with `--dynamic-nk` N and K are run-time
sizes too. Each block is a pipelined GEMM (`T.Pipelined` copies into
`T.alloc_shared` tiles, `T.gemm(transpose_B=True)` into an fp32
`T.alloc_fragment`); the epilogue is a `T.Parallel` loop over the accumulator
that adds the block's slice of the bias (copied once into shared memory),
applies the ReLU and converts to fp16 into a shared tile, which one `T.copy`
stores (clipped at the edges of Y, so no size needs to be a multiple of a
block).
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T


@tilelang.jit(out_idx=[-1])
def linear_relu(M, N, K, block_M=128, block_N=128, block_K=64, threads=256, num_stages=3,
                dtype="float16", accum_dtype="float32"):
    """Y (M x N, `dtype`) = relu(X (M x K) @ W (N x K)^T + bias (N)). Any of M, N, K
    may be `T.dynamic(...)`; the others are compile-time ints."""

    @T.prim_func
    def linear_bias_relu(X: T.Tensor((M, K), dtype), W: T.Tensor((N, K), dtype),
                         bias: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bn, bm):
            X_s = T.alloc_shared((block_M, block_K), dtype)
            W_s = T.alloc_shared((block_N, block_K), dtype)
            bias_s = T.alloc_shared((block_N,), dtype)
            Y_s = T.alloc_shared((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.copy(bias[bn * block_N], bias_s)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(X[bm * block_M, ko * block_K], X_s)
                T.copy(W[bn * block_N, ko * block_K], W_s)
                T.gemm(X_s, W_s, acc, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                Y_s[i, j] = T.max(acc[i, j] + bias_s[j], 0)
            T.copy(Y_s, Y[bm * block_M, bn * block_N])

    return linear_bias_relu


def reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """relu(X @ W^T + bias) in float64."""
    y = x.astype(np.float64) @ w.astype(np.float64).T + bias.astype(np.float64)
    return np.maximum(y, 0.0)


# (dynamic N and K?, N, K, the Ms one compiled kernel runs)
GPU_CASES = [
    (False, 4096, 4096, [1, 7, 128, 1000, 4096, 5000]),
    (False, 1000, 3000, [64, 333, 2048]),            # no block divides N, K or most M
    (True, None, None, [(257, 1024, 512), (4096, 4096, 4096), (1000, 1000, 1000)]),
]


def gpu_kernel(dynamic_nk: bool, n, k):
    """The one kernel gpu_check launches for a row of GPU_CASES: over a dynamic M, and
    N and K too if `dynamic_nk`; Y passed in (NaN-filled), not allocated: the factory
    without out_idx."""
    factory = tilelang.jit(linear_relu.factory)
    if dynamic_nk:
        return factory(T.dynamic("m"), T.dynamic("n"), T.dynamic("k"))
    return factory(T.dynamic("m"), n, k)


def gpu_kernels() -> list:
    """Compiles every kernel gpu_check launches (no torch, no GPU needed)."""
    return [gpu_kernel(dynamic_nk, n, k) for dynamic_nk, n, k, _sizes in GPU_CASES]


def gpu_check() -> list[str]:
    """Runs one kernel per case on a CUDA GPU at several sizes against torch
    (fp32 math); Y is pre-filled with NaN so an element the kernel misses shows."""
    import torch

    lines = []
    for dynamic_nk, n, k, sizes in GPU_CASES:
        kernel = gpu_kernel(dynamic_nk, n, k)
        for size in sizes:
            M, N, K = size if dynamic_nk else (size, n, k)
            x = torch.randn(M, K, device="cuda", dtype=torch.float16)
            w = torch.randn(N, K, device="cuda", dtype=torch.float16) / K ** 0.5
            bias = torch.randn(N, device="cuda", dtype=torch.float16)
            y = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
            kernel(x, w, bias, y)
            ref = torch.relu(x.float() @ w.float().T + bias.float())
            err = (y.float() - ref).abs()
            tol = 1e-2 + 4e-3 * ref.abs()  # fp16 output rounding plus fp32 sums
            shape = f"{M}x{N}x{K} ({'m, n, k' if dynamic_nk else 'm'} dynamic)"
            if not bool(torch.isfinite(y).all()) or bool((err > tol).any()):
                raise AssertionError(f"dynamic_gemm {shape}: max_err={err.max().item():.4g} "
                                     f"({int((err > tol).sum())} elements out of tolerance, "
                                     f"{int((~torch.isfinite(y)).sum())} not finite)")
            lines.append(f"PASS dynamic_gemm {shape} max_err={err.max().item():.4g}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--dynamic-nk", action="store_true", help="N and K run-time sizes too")
    args = ap.parse_args()
    if args.dynamic_nk:
        kernel = linear_relu(T.dynamic("m"), T.dynamic("n"), T.dynamic("k"))
    else:
        kernel = linear_relu(T.dynamic("m"), args.n, args.k)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} for M = {kernel.params[0]['shape'][0]}: "
          f"{ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA bulk tensor ops in the PTX")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
