"""Persistent GEMM: C = A @ B^T (B stored N x K, a linear layer's weight) or
C = A @ B (B stored K x N), fp16 in and out, fp32 accumulation, on a grid of
one block per SM that walks the tiles of C itself.

    python examples/families/persistent_gemm.py [--m 4096 --n 4096 --k 4096] [--nn] [--loop]

Each of the `num_sms` blocks owns the tiles pid, pid + num_sms, pid + 2 *
num_sms, ... of C, numbered in bands of `group_size` tile columns each
walked down the tile rows, so that the blocks running together share panels
of A and B in L2. Two ways a TileLang user writes that loop, both here:

* `T.Persistent(domain, wave_size, index, group_size)`, TileLang's primitive
  (the default: consecutive tile numbers walk a band of `group_size` tile
  columns down the rows, so the blocks of one wave share panels of B in L2);
* `--loop`: the same walk spelled out, a `T.serial` loop over the waves, the
  tile coordinates computed from the linear tile number, and a run-time `if`
  skipping the tiles past the end of the last wave.

Inside, each tile is an ordinary pipelined GEMM: `T.Pipelined` copies of A
and B into shared memory (`T.alloc_shared`), `T.gemm` into a `T.alloc_fragment`
fp32 accumulator, then the epilogue staged through a shared fp16 tile
(`T.copy(acc, C_s)`, `T.copy(C_s, C[...])`), which sm_90a stores with TMA.
Sizes no block divides are fine: copies read zeros past the edges and the
store is clipped.
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T


@tilelang.jit(out_idx=[-1])
def persistent_matmul(M, N, K, block_M=128, block_N=256, block_K=64, threads=256,
                      num_stages=3, num_sms=None, group_size=8, trans_B=True,
                      use_persistent_primitive=True, dtype="float16",
                      accum_dtype="float32"):
    """C (M x N, `dtype`) = A (M x K) @ B^T with B N x K (`trans_B`), or A @ B
    with B K x N. `num_sms` blocks (default: the GPU's SM count, never more
    than there are tiles) each loop over their share of the tiles."""
    tiles_m = T.ceildiv(M, block_M)
    tiles_n = T.ceildiv(N, block_N)
    tiles = tiles_m * tiles_n
    sms = num_sms if num_sms is not None else tilelang.carver.arch.driver.get_num_sms()
    grid = min(sms, tiles)
    waves = T.ceildiv(tiles, grid)
    # Tile order: bands of `group` tile columns, each walked down all the tile
    # rows, so the blocks of one wave share a few panels of B (and of A) in L2.
    group = max(1, min(group_size, tiles_n))
    band = group * tiles_m

    b_shape = (N, K) if trans_B else (K, N)
    b_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def gemm_persistent(A: T.Tensor((M, K), dtype), B: T.Tensor(b_shape, dtype),
                        C: T.Tensor((M, N), dtype)):
        with T.Kernel(grid, threads=threads) as pid:
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared(b_tile, dtype)
            C_s = T.alloc_shared((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)

            if use_persistent_primitive:
                for tm, tn in T.Persistent([tiles_m, tiles_n], grid, pid, group):
                    T.clear(acc)
                    for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                        T.copy(A[tm * block_M, ko * block_K], A_s)
                        if trans_B:
                            T.copy(B[tn * block_N, ko * block_K], B_s)
                        else:
                            T.copy(B[ko * block_K, tn * block_N], B_s)
                        T.gemm(A_s, B_s, acc, transpose_B=trans_B)
                    T.copy(acc, C_s)
                    T.copy(C_s, C[tm * block_M, tn * block_N])
            else:
                for wave in T.serial(waves):
                    t = wave * grid + pid
                    if t < tiles:
                        # Tile number -> (row, column) in that order; the
                        # last band may be narrower than `group` columns.
                        first_col = (t // band) * group
                        cols = T.min(tiles_n - first_col, group)
                        tn = first_col + (t % band) % cols
                        tm = (t % band) // cols
                        T.clear(acc)
                        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                            T.copy(A[tm * block_M, ko * block_K], A_s)
                            if trans_B:
                                T.copy(B[tn * block_N, ko * block_K], B_s)
                            else:
                                T.copy(B[ko * block_K, tn * block_N], B_s)
                            T.gemm(A_s, B_s, acc, transpose_B=trans_B)
                        T.copy(acc, C_s)
                        T.copy(C_s, C[tm * block_M, tn * block_N])

    return gemm_persistent


def reference(a: np.ndarray, b: np.ndarray, trans_B: bool = True) -> np.ndarray:
    """A @ B^T (or A @ B) in float64."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return a64 @ (b64.T if trans_B else b64)


# (M, N, K, trans_B, use_persistent_primitive, config)
GPU_SHAPES = [
    (4096, 4096, 4096, True, True, {}),
    (4096, 4096, 4096, False, True, {}),
    (4096, 4096, 4096, True, False, {}),
    (8192, 2048, 1024, True, True, {}),
    (1000, 3000, 1000, True, True, {}),   # no block divides M, N or K
    (1000, 3000, 1000, False, False, {}),
    (333, 777, 520, True, True, {"block_N": 128, "threads": 128, "num_stages": 4}),
]


def gpu_kernel(M: int, N: int, K: int, trans_B: bool, prim: bool, config: dict):
    """The kernel gpu_check launches for a row of GPU_SHAPES. (num_sms is left to the
    factory: a kernel compiled without a GPU has the target's reference SM count.)"""
    return persistent_matmul(M, N, K, trans_B=trans_B, use_persistent_primitive=prim,
                             **config)


def gpu_kernels() -> list:
    """Compiles every kernel gpu_check launches (no torch, no GPU needed)."""
    return [gpu_kernel(*shape) for shape in GPU_SHAPES]


def gpu_check() -> list[str]:
    """Runs the kernel on a CUDA GPU against torch (fp32 math) at GPU_SHAPES."""
    import torch

    lines = []
    for M, N, K, trans_B, prim, config in GPU_SHAPES:
        kernel = gpu_kernel(M, N, K, trans_B, prim, config)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(*((N, K) if trans_B else (K, N)), device="cuda", dtype=torch.float16)
        c = kernel(a, b)
        ref = a.float() @ (b.float().T if trans_B else b.float())
        err = (c.float() - ref).abs()
        # fp16 output: half an ulp of values of size ~sqrt(K), plus fp32 sums.
        tol = 2e-2 + 2e-3 * ref.abs()
        shape = f"{M}x{N}x{K} {'NT' if trans_B else 'NN'} {'T.Persistent' if prim else 'loop'}"
        if not bool(torch.isfinite(c).all()) or bool((err > tol).any()):
            raise AssertionError(f"persistent_gemm {shape}: max_err={err.max().item():.4g} "
                                 f"({int((err > tol).sum())} elements out of tolerance, "
                                 f"{int((~torch.isfinite(c)).sum())} not finite)")
        lines.append(f"PASS persistent_gemm {shape} max_err={err.max().item():.4g}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--nn", action="store_true", help="B stored K x N (C = A @ B)")
    ap.add_argument("--loop", action="store_true", help="the hand-written loop, not T.Persistent")
    args = ap.parse_args()
    kernel = persistent_matmul(args.m, args.n, args.k, trans_B=not args.nn,
                               use_persistent_primitive=not args.loop)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name}: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.cg') + ptx.count('cp.async.ca')} cp.async, "
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
