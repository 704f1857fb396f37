"""Grouped GEMM: G independent GEMMs of different row counts in one launch.

    python examples/families/grouped_gemm.py [--sizes 300,0,1024,77 --n 4096 --k 2048]

The expert layer of a mixture-of-experts model: the tokens routed to each
expert are packed one group after another into A (total_M x K fp16), group g
owning rows `group_offsets[g]:group_offsets[g + 1]` (`group_offsets`: G + 1
int32 prefix sums of the groups' sizes, the first 0, given at run time, so
one kernel serves every routing), and each group is multiplied by its own
weight B[g] (N x K, a linear layer's layout):

    C[rows of g] = A[rows of g] @ B[g]^T      (fp32 accumulation, C fp16 or fp32)

One launch: the grid is (N tiles, row tiles), the row tiles counting every
group's ceil(M_g / block_M) tiles one group after another, at most
ceil(total_M / block_M) + G - 1 of them (what the grid is sized for). Each
block walks the offsets to find the group its row tile falls in (a serial
loop over the G groups in T.alloc_var scalars), then runs an ordinary
pipelined GEMM main loop over K on that group's rows and weight:
`T.Pipelined` copies of A's rows from the group's run-time offset and of
B[g]'s tile (cp.async `num_stages` deep, or on sm_90a what tlc makes of it)
feeding `T.gemm(..., transpose_B=True)`. A block whose tile lies past the last
group's end runs no K step and stores nothing. A group's last tile also reads
the next group's first rows (or zeros past A's end), which it computes and
does not store: a full tile is stored with one `T.copy`, a partial one row by
row in a guarded `T.Parallel`. Groups may be empty; total_M may be
`T.dynamic`.

TileLang constructs shown: `T.Kernel` with a grid computed from a dynamic size,
`T.alloc_var` scalars and a run-time `T.serial` loop with `if` on values read
from a tensor, `T.Pipelined` with a run-time trip count, `T.copy` of slices
whose start is a run-time value (`A[row0:row0 + block_M, ...]`,
`B[g, n0:n0 + block_N, ...]`), `T.gemm`, `T.use_swizzle`, a guarded
`T.Parallel` store.
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T


@tilelang.jit(out_idx=[-1])
def grouped_gemm(groups, total_M, N, K, block_M=128, block_N=128, block_K=64, num_stages=4,
                 threads=256, out_dtype="float16", dtype="float16"):
    """A (total_M x K), B (groups x N x K), group_offsets (groups + 1, int32) -> C
    (total_M x N, out_dtype), C[rows of g] = A[rows of g] @ B[g]^T. `total_M` is an
    int or `T.dynamic(...)`."""
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"groups must be a positive int, got {groups!r}")
    accum = "float32"

    @T.prim_func
    def grouped_matmul(A: T.Tensor((total_M, K), dtype), B: T.Tensor((groups, N, K), dtype),
                       group_offsets: T.Tensor((groups + 1,), "int32"),
                       C: T.Tensor((total_M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(total_M, block_M) + groups - 1,
                      threads=threads) as (bn, tile):
            a_tile = T.alloc_shared((block_M, block_K), dtype)
            b_tile = T.alloc_shared((block_N, block_K), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum)
            group = T.alloc_var("int32", init=-1)   # this tile's group, -1: none
            row0 = T.alloc_var("int32", init=0)     # its first row in A and C
            rows = T.alloc_var("int32", init=0)     # rows of the tile inside its group
            tiles_before = T.alloc_var("int32", init=0)

            # Bands of 8 N tiles walked down the row tiles, so that the blocks
            # running together share their groups' weights and A's rows in L2.
            T.use_swizzle(panel_size=8)
            # Which group's tiles contain this one: walk the groups' tile counts.
            for g in T.serial(groups):
                start = group_offsets[g]
                size = group_offsets[g + 1] - start
                count = T.ceildiv(size, block_M)
                if tile >= tiles_before and tile < tiles_before + count:
                    group = g
                    row0 = start + (tile - tiles_before) * block_M
                    rows = T.min(block_M, size - (tile - tiles_before) * block_M)
                tiles_before += count

            T.clear(acc)
            k_steps = T.if_then_else(group >= 0, T.ceildiv(K, block_K), 0)
            for ks in T.Pipelined(k_steps, num_stages=num_stages):
                T.copy(A[row0:row0 + block_M, ks * block_K:(ks + 1) * block_K], a_tile)
                T.copy(B[group, bn * block_N:(bn + 1) * block_N,
                         ks * block_K:(ks + 1) * block_K], b_tile)
                T.gemm(a_tile, b_tile, acc, transpose_B=True)

            if rows == block_M:
                T.copy(acc, C[row0, bn * block_N])
            else:  # the group's last tile: its rows past the group are the next group's
                for i, j in T.Parallel(block_M, block_N):
                    if i < rows:
                        C[row0 + i, bn * block_N + j] = acc[i, j]

    return grouped_matmul


def offsets_of(sizes) -> list[int]:
    """group_offsets for groups of these sizes: [0, m0, m0 + m1, ...]."""
    out = [0]
    for m in sizes:
        out.append(out[-1] + int(m))
    return out


def reference(a: np.ndarray, b: np.ndarray, group_offsets: np.ndarray) -> np.ndarray:
    """C in float64: each group's rows of A times its B[g]^T."""
    c = np.zeros((a.shape[0], b.shape[1]), np.float64)
    for g in range(b.shape[0]):
        lo, hi = int(group_offsets[g]), int(group_offsets[g + 1])
        c[lo:hi] = a[lo:hi].astype(np.float64) @ b[g].astype(np.float64).T
    return c


CASES = [  # group sizes, N, K: MoE-like routings, empty groups, sizes no block divides
    ([512, 512, 512, 512], 4096, 4096),
    ([300, 0, 1024, 77, 1], 4096, 2048),
    ([37] * 16, 2048, 1024),
    ([1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000], 1408, 2048),
    ([129, 255, 0, 0, 64], 1000, 576),
]


# Each case's kernels: (out_dtype, dynamic total_M), fp16 and fp32 outputs of a kernel
# for its total_M, and fp16 from one over a dynamic total_M.
GPU_VARIANTS = (("float16", False), ("float32", False), ("float16", True))

# gpu_check's kernels are called with C too (no out_idx), so that C can be NaN-filled first.
_in_place = tilelang.jit(grouped_gemm.factory)


def gpu_kernel(sizes, N: int, K: int, out_dtype: str, dynamic: bool):
    """The kernel gpu_check launches for groups of these sizes, N, K and variant
    (out_dtype, dynamic)."""
    m_arg = T.dynamic("total_M") if dynamic else sum(sizes)
    return _in_place(len(sizes), m_arg, N, K, out_dtype=out_dtype)


def gpu_kernels() -> list:
    """Compiles every kernel gpu_check launches (no torch, no GPU needed)."""
    return [gpu_kernel(sizes, N, K, out_dtype, dynamic)
            for sizes, N, K in CASES for out_dtype, dynamic in GPU_VARIANTS]


def gpu_check() -> list[str]:
    """Runs the kernel on the GPU for CASES (fp16 and fp32 outputs; one kernel over a
    dynamic total_M for every packing of G groups) against an fp32 torch reference;
    returns PASS lines."""
    import torch

    lines = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    for sizes, N, K in CASES:
        G, total = len(sizes), sum(sizes)
        a = torch.randn(total, K, device="cuda", dtype=torch.float16, generator=gen)
        b = (torch.randn(G, N, K, device="cuda", generator=gen) / K ** 0.5).half()
        offsets = torch.tensor(offsets_of(sizes), device="cuda", dtype=torch.int32)
        ref = torch.empty(total, N, device="cuda", dtype=torch.float32)
        for g in range(G):
            lo, hi = offsets_of(sizes)[g:g + 2]
            ref[lo:hi] = a[lo:hi].float() @ b[g].float().T
        for out_dtype, dynamic in GPU_VARIANTS:
            kernel = gpu_kernel(sizes, N, K, out_dtype, dynamic)
            c = torch.full((total, N), float("nan"), device="cuda",
                           dtype=getattr(torch, out_dtype))
            kernel(a, b, offsets, c)
            torch.cuda.synchronize()
            err = (c.float() - ref).abs()
            rounding = 2.0 ** -10 if out_dtype == "float16" else 0.0
            tol = 1e-3 * max(ref.abs().max().item(), 1.0) + rounding * ref.abs()
            bad = ~(err <= tol)  # NaN (a row not written) counts as bad
            shape = f"G={G} total_M={total} N={N} K={K} out={out_dtype}" + (
                " dynamic" if dynamic else "")
            if bad.any():
                i, j = (int(x) for x in bad.nonzero()[0])
                g = int(np.searchsorted(offsets_of(sizes), i, side="right")) - 1
                raise AssertionError(
                    f"grouped_gemm {shape}: {int(bad.sum())} elements off, first C[{i}, {j}] "
                    f"(group {g}) = {c[i, j].item()} against {ref[i, j].item()}")
            lines.append(f"PASS grouped_gemm {shape} max_err={err.max().item():.3g}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="300,0,1024,77", help="rows of each group")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=2048)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    kernel = grouped_gemm(len(sizes), T.dynamic("total_M"), args.n, args.k)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} for {len(sizes)} groups, N={args.n} K={args.k}: "
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
