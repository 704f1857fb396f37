"""Block-sparse GEMM: C = A @ B where a block mask says which K blocks of each output
tile take part.

    python examples/families/blocksparse_gemm.py [--m 4096 --n 4096 --k 4096]

A is M x K and B is K x N (fp16), C is M x N (fp16 or fp32, fp32 accumulation).
C is cut into block_M x block_N tiles and K into block_K slices; the mask
(ceil(M / block_M) x ceil(N / block_N) x ceil(K / block_K) booleans) says, for
each tile (i, j), which slices k take part:

    C[tile i, j] = sum over k with mask[i, j, k] of A[rows i, slice k] @ B[slice k, cols j]

(block-sparse attention-like patterns, pruned weights, structured MoE masks).
A tile with no slice is all zeros.

Two kernels, one block per tile of C each:

- `blocksparse_gemm` takes the mask as per-tile lists (`mask_to_lists`, once per
  pattern): `block_count[i, j]` slices, their indices in
  `block_index[i, j, :count]`. Its `T.Pipelined` loop runs over the tile's
  listed slices only, each iteration's copies starting at the slice index read
  from the table (as a paged-attention kernel reads its page table): skipped
  slices cost neither loads nor iterations, and the loads of the next listed
  slices are in flight while this one multiplies (cp.async `num_stages` deep;
  on sm_90a a TMA producer warpgroup, which reads the table itself, feeding
  wgmma consumers).
- `blocksparse_gemm_masked` reads the boolean mask directly, as TileLang's
  block-sparse example writes it: the loop runs over every K slice and an `if`
  on `mask[i, j, k]` guards the copies and the gemm. The copies at the top of
  that `if` are pipelined on its condition: on sm_90a a TMA producer
  warpgroup and the wgmma consumers both read the mask, and only the slices
  it selects take a stage, so a skipped slice costs a mask read; elsewhere
  cp.async loads are issued ahead only for selected slices, but every slice
  still takes a loop iteration with its wait and barrier. The gemm under the
  `if` is waited for in its iteration.

M, N and K need not be multiples of the blocks (the copies read zeros past the
edges and the store is masked).

TileLang constructs shown: `T.Kernel`, `T.alloc_shared` / `T.alloc_fragment`,
`T.Pipelined` with a run-time trip count read from a tensor, `T.copy` from tile
origins computed from a table, `T.gemm`, an `if` on a tensor element inside
`T.Pipelined`, `T.use_swizzle`.
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T


def _blocks(M, N, K, block_M, block_N, block_K):
    return T.ceildiv(M, block_M), T.ceildiv(N, block_N), T.ceildiv(K, block_K)


@tilelang.jit(out_idx=[-1])
def blocksparse_gemm(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=4,
                     threads=256, out_dtype="float16", dtype="float16"):
    """A (M x K), B (K x N), block_index (Mb x Nb x Kb int32), block_count (Mb x Nb
    int32) -> C (M x N out_dtype): each tile sums the K slices its list names."""
    mb, nb, kb = _blocks(M, N, K, block_M, block_N, block_K)

    @T.prim_func
    def blocksparse_matmul(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
                           block_index: T.Tensor((mb, nb, kb), "int32"),
                           block_count: T.Tensor((mb, nb), "int32"),
                           C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(nb, mb, threads=threads) as (bn, bm):
            a_tile = T.alloc_shared((block_M, block_K), dtype)
            b_tile = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")

            # Bands of 8 tile columns walked down the rows: neighbouring blocks share
            # B's slices (and A's rows) in L2.
            T.use_swizzle(panel_size=8)
            T.clear(acc)
            for s in T.Pipelined(block_count[bm, bn], num_stages=num_stages):
                k0 = block_index[bm, bn, s] * block_K
                T.copy(A[bm * block_M, k0], a_tile)
                T.copy(B[k0, bn * block_N], b_tile)
                T.gemm(a_tile, b_tile, acc)
            T.copy(acc, C[bm * block_M, bn * block_N])

    return blocksparse_matmul


@tilelang.jit(out_idx=[-1])
def blocksparse_gemm_masked(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3,
                            threads=256, out_dtype="float16", dtype="float16"):
    """A (M x K), B (K x N), mask (Mb x Nb x Kb bool) -> C (M x N out_dtype)."""
    mb, nb, kb = _blocks(M, N, K, block_M, block_N, block_K)

    @T.prim_func
    def blocksparse_matmul_masked(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
                                  mask: T.Tensor((mb, nb, kb), "bool"),
                                  C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(nb, mb, threads=threads) as (bn, bm):
            a_tile = T.alloc_shared((block_M, block_K), dtype)
            b_tile = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")

            T.use_swizzle(panel_size=8)
            T.clear(acc)
            for k in T.Pipelined(kb, num_stages=num_stages):
                if mask[bm, bn, k]:
                    T.copy(A[bm * block_M, k * block_K], a_tile)
                    T.copy(B[k * block_K, bn * block_N], b_tile)
                    T.gemm(a_tile, b_tile, acc)
            T.copy(acc, C[bm * block_M, bn * block_N])

    return blocksparse_matmul_masked


def mask_to_lists(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The boolean block mask (Mb x Nb x Kb) as the per-tile lists blocksparse_gemm
    reads: block_index (Mb x Nb x Kb int32, each tile's slices in increasing order,
    the rest -1) and block_count (Mb x Nb int32)."""
    mask = np.asarray(mask, bool)
    count = mask.sum(axis=2).astype(np.int32)
    # stable sort puts the listed slices first, in order
    order = np.argsort(~mask, axis=2, kind="stable").astype(np.int32)
    index = np.where(np.arange(mask.shape[2]) < count[..., None], order, -1).astype(np.int32)
    return index, count


def random_mask(rng: np.random.Generator, blocks: tuple[int, int, int],
                density: float) -> np.ndarray:
    """A mask with each (tile, slice) present with probability `density`."""
    return rng.random(blocks) < density


def reference(a: np.ndarray, b: np.ndarray, mask: np.ndarray, block_M: int, block_N: int,
              block_K: int) -> np.ndarray:
    """C in float64: each tile's product over the slices its mask selects."""
    M, K = a.shape
    N = b.shape[1]
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    c = np.zeros((M, N), np.float64)
    for i, j, k in zip(*np.nonzero(mask)):
        rows = slice(i * block_M, min((i + 1) * block_M, M))
        cols = slice(j * block_N, min((j + 1) * block_N, N))
        ks = slice(k * block_K, min((k + 1) * block_K, K))
        c[rows, cols] += a64[rows, ks] @ b64[ks, cols]
    return c


def _torch_reference(torch, a, b, mask, block_M, block_N, block_K):
    """The same in fp32 on the GPU: A with its unselected slices zeroed, per tile row
    and column, as one dense product per tile of C."""
    M, K = a.shape
    N = b.shape[1]
    c = torch.zeros(M, N, device=a.device, dtype=torch.float32)
    mb, nb, kb = mask.shape
    # expand the mask to K: keep[i, j, k] = mask[i, j, k // block_K]
    keep = mask.repeat_interleave(block_K, dim=2)[:, :, :K].float()
    af, bf = a.float(), b.float()
    for i in range(mb):
        rows = slice(i * block_M, min((i + 1) * block_M, M))
        for j in range(nb):
            cols = slice(j * block_N, min((j + 1) * block_N, N))
            c[rows, cols] = (af[rows] * keep[i, j]) @ bf[:, cols]
    return c


CASES = [  # M, N, K, density
    (2048, 2048, 4096, 0.3),
    (4096, 4096, 4096, 0.1),
    (1000, 1500, 2000, 0.5),   # no block divides M, N or K
    (384, 640, 8192, 1.0),     # dense
    (512, 512, 1024, 0.0),     # empty: C is zero
]


GPU_BLOCKS = (128, 128, 64)  # block_M, block_N, block_K of gpu_check's kernels
# Each case's kernels: (form, out_dtype), the lists kernel with fp16 and fp32 outputs and
# the masked one with fp16.
GPU_VARIANTS = (("lists", "float16"), ("lists", "float32"), ("masked", "float16"))

# gpu_check's kernels are called with C too (no out_idx), so that C can be NaN-filled first.
_in_place = {"lists": tilelang.jit(blocksparse_gemm.factory),
             "masked": tilelang.jit(blocksparse_gemm_masked.factory)}


def gpu_kernel(M: int, N: int, K: int, form: str, out_dtype: str):
    """The kernel gpu_check launches for (M, N, K) and variant (form, out_dtype)."""
    return _in_place[form](M, N, K, *GPU_BLOCKS, out_dtype=out_dtype)


def gpu_kernels() -> list:
    """Compiles every kernel gpu_check launches (no torch, no GPU needed)."""
    return [gpu_kernel(M, N, K, form, out_dtype)
            for M, N, K, _density in CASES for form, out_dtype in GPU_VARIANTS]


def gpu_check() -> list[str]:
    """Both kernels on the GPU for CASES, fp16 and fp32 outputs, against an fp32 torch
    reference; returns PASS lines."""
    import torch

    block_M, block_N, block_K = GPU_BLOCKS
    lines = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    rng = np.random.default_rng(0)
    for M, N, K, density in CASES:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=gen)
        b = (torch.randn(K, N, device="cuda", generator=gen) / K ** 0.5).half()
        blocks = (-(-M // block_M), -(-N // block_N), -(-K // block_K))
        mask_np = random_mask(rng, blocks, density)
        index_np, count_np = mask_to_lists(mask_np)
        mask = torch.from_numpy(mask_np).cuda()
        index, count = torch.from_numpy(index_np).cuda(), torch.from_numpy(count_np).cuda()
        ref = _torch_reference(torch, a, b, mask, block_M, block_N, block_K)
        for form, out_dtype in GPU_VARIANTS:
            kernel = gpu_kernel(M, N, K, form, out_dtype)
            c = torch.full((M, N), float("nan"), device="cuda",
                           dtype=getattr(torch, out_dtype))
            if form == "lists":
                kernel(a, b, index, count, c)
            else:
                kernel(a, b, mask, c)
            torch.cuda.synchronize()
            err = (c.float() - ref).abs()
            rounding = 2.0 ** -10 if out_dtype == "float16" else 0.0
            tol = 1e-3 * max(ref.abs().max().item(), 1.0) + rounding * ref.abs()
            bad = ~(err <= tol)  # NaN (an element not written) counts as bad
            shape = f"{form} M={M} N={N} K={K} density={density} out={out_dtype}"
            if bad.any():
                i, j = (int(x) for x in bad.nonzero()[0])
                raise AssertionError(
                    f"blocksparse_gemm {shape}: {int(bad.sum())} elements off, first "
                    f"C[{i}, {j}] (tile {i // block_M}, {j // block_N}) = {c[i, j].item()} "
                    f"against {ref[i, j].item()}")
            lines.append(f"PASS blocksparse_gemm {shape} max_err={err.max().item():.3g}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    args = ap.parse_args()
    for factory in (blocksparse_gemm, blocksparse_gemm_masked):
        kernel = factory(args.m, args.n, args.k)
        ptx = kernel.get_kernel_source()
        print(f"compiled {kernel.name} for M={args.m} N={args.n} K={args.k}: "
              f"{ptx.count('wgmma.mma_async')} wgmma, {ptx.count('mma.sync')} mma.sync, "
              f"{ptx.count('cp.async.bulk.tensor')} TMA loads, "
              f"{ptx.count('cp.async.cg')} cp.async in the PTX")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
