"""Top-k of each row of an M x E float32 logits matrix: MoE gating.

    python examples/families/topk.py [--tokens 4096 --experts 256 --k 8]

A router scores every token against E experts (E = 64, 128 or 256) and keeps
the k best (k = 2, 4 or 8). This kernel returns, per row, the k largest
logits in descending order and their expert ids (int32). Ties are broken by
the lower index: among equal logits the expert with the smaller id comes
first, as a stable descending sort would order them (torch.topk does not
promise any order among ties; on rows without ties both agree exactly).
The logits are assumed finite: a removed entry is marked -inf.

Each block keeps block_M whole rows in registers (about 32 logits a thread)
and runs k selection rounds over them, every round a few whole-tile ops:

  * T.reduce_max over the row gives the round's value;
  * a T.Parallel writes, per element, its column where it equals that
    maximum and E elsewhere, and T.reduce_min of those picks the lowest
    column holding the maximum (the tie rule);
  * a T.Parallel marks exactly that one element -inf (only that one: an
    equal logit at a higher column stays for the next round);
  * the round's value and column are stored straight to column r of the
    outputs (one store a row: the outputs are k / E of the input's bytes;
    keeping them in block_M x k fragments until the end would cost each
    thread 2 k registers a row it reduces, and spills at k = 8).

Rows of up to 128 logits stay within a warp in the compiler's default
layout; wider rows (E = 256) get a T.Fragment layout of one warp a row
(T.annotate_layout), so every reduction is warp shuffles, no shared memory.

Shown: T.copy of whole rows into a fragment, T.annotate_layout with a
T.Fragment, T.reduce_max / T.reduce_min (float32 and int32), T.if_then_else,
T.infinity, T.unroll over the rounds, T.Parallel over rows and over
row x expert, row vectors stored to a column chosen by the unrolled round,
rows past M masked by the copy and the T.Parallel stores.
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T

ELEMENTS_PER_THREAD = 32  # logits a thread keeps in registers (plus as many int32)


def default_block_M(E: int, threads: int) -> int:
    """Rows a block: a power of two, about 32 logits a thread (64 rows of 64,
    16 of 256), and a tile the threads share evenly (96 experts: 32 rows)."""
    block_M = 1 << max(0, (threads * ELEMENTS_PER_THREAD // E).bit_length() - 1)
    while (block_M * E) % threads:
        block_M *= 2
    return block_M


def row_per_warp(block_M: int, E: int, threads: int):
    """A layout giving each row of a block_M x E float32 tile to one warp:
    lane l holds columns 4 l .. 4 l + 3 of every 128 (16-byte loads, a warp
    reading 512 contiguous bytes), rows dealt to the warps in turn. For rows
    wider than 128 logits, where the default 16-byte layout would spread a
    row over two or more warps and every row reduction of every round would
    then meet in shared memory behind a barrier."""
    warps = threads // 32
    if E % 128 or block_M % warps:
        raise ValueError(f"one warp a row needs E a multiple of 128 and block_M a multiple "
                         f"of {warps} warps, got E = {E}, block_M = {block_M}")
    return T.Fragment((block_M, E), forward_fn=lambda i, j: (
        (i % warps) * 32 + (j // 4) % 32,
        (i // warps) * (E // 32) + (j // 128) * 4 + j % 4))


@tilelang.jit(out_idx=[1, 2])
def topk_gating(M, E, k, block_M=None, threads=128):
    """values, indices = the k largest logits of each of the M rows (E
    columns) and their columns, largest first, ties to the lower column.
    Rows wider than 128 are laid out one warp a row (row_per_warp), so
    every reduction stays within a warp (shuffles only)."""
    if not 1 <= k <= E:
        raise ValueError(f"k must be in [1, E = {E}], got {k}")
    block_M = block_M or default_block_M(E, threads)
    warps = threads // 32
    warp_rows = (row_per_warp(block_M, E, threads)
                 if E > 128 and E % 128 == 0 and block_M % warps == 0 else None)

    @T.prim_func
    def topk_gating(logits: T.Tensor((M, E), "float32"),
                    values: T.Tensor((M, k), "float32"),
                    indices: T.Tensor((M, k), "int32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            scores = T.alloc_fragment((block_M, E), "float32")
            column = T.alloc_fragment((block_M, E), "int32")
            best = T.alloc_fragment((block_M,), "float32")
            best_col = T.alloc_fragment((block_M,), "int32")
            if warp_rows is not None:
                # both: tlc does not yet carry scores' layout over to column
                T.annotate_layout({scores: warp_rows, column: warp_rows})

            T.copy(logits[bx * block_M, 0], scores)
            for r in T.unroll(k):
                T.reduce_max(scores, best, dim=1)
                # the lowest column holding the maximum: E where a column does not
                for i, j in T.Parallel(block_M, E):
                    column[i, j] = T.if_then_else(scores[i, j] == best[i], j, E)
                T.reduce_min(column, best_col, dim=1)
                # take that one element out of the following rounds
                for i, j in T.Parallel(block_M, E):
                    scores[i, j] = T.if_then_else(j == best_col[i], -T.infinity("float32"),
                                                   scores[i, j])
                for i in T.Parallel(block_M):
                    values[bx * block_M + i, r] = best[i]
                    indices[bx * block_M + i, r] = best_col[i]

    return topk_gating


def reference(logits, k):
    """The k largest of each row (float64 values) and their columns (int32),
    descending, ties to the lower column: a stable sort of -logits."""
    order = np.argsort(-logits.astype(np.float64), axis=1, kind="stable")[:, :k]
    return (np.take_along_axis(logits.astype(np.float64), order, axis=1),
            order.astype(np.int32))


# (M, E, k): the usual router shapes (64, 128 and 256 experts), and row
# counts no block divides, down to a single row.
GPU_CASES = [(4096, 64, 2), (4096, 128, 4), (4096, 256, 8), (16384, 256, 8),
             (1000, 64, 4), (777, 128, 8), (333, 256, 2), (1, 256, 8)]


def gpu_kernel(M, E, k):
    """The kernel gpu_check launches for the GPU case (M, E, k): outputs
    passed in (NaN-filled), not allocated: the factory without out_idx."""
    return tilelang.jit(topk_gating.factory)(M, E, k)


def gpu_kernels() -> list:
    """Compiles (no torch, no GPU) every kernel gpu_check launches."""
    return [gpu_kernel(*case) for case in GPU_CASES]


def gpu_check() -> list[str]:
    """Runs the kernel on the GPU for GPU_CASES against torch and the tie
    rule; returns one PASS line a shape, raises AssertionError otherwise."""
    import torch

    lines = []
    for M, E, k in GPU_CASES:
        kernel = gpu_kernel(M, E, k)
        gen = torch.Generator(device="cuda").manual_seed(M * 7 + E + k)
        logits = torch.randn(M, E, device="cuda", generator=gen)
        for ties in (False, True):
            if ties:  # few distinct values: many ties, broken by the lower column
                logits = torch.round(logits * 2) / 2
            values = torch.full((M, k), float("nan"), device="cuda")
            indices = torch.full((M, k), -1, dtype=torch.int32, device="cuda")
            kernel(logits, values, indices)
            torch.cuda.synchronize()
            # stable descending order: lower column first among equal logits
            order = torch.sort(-logits, dim=1, stable=True).indices[:, :k]
            ref_v = torch.gather(logits, 1, order)
            if not ties:  # the reference's values are torch.topk's (its ties' order may differ)
                assert torch.equal(torch.topk(logits, k, dim=1).values, ref_v), "reference"
            err = (values - ref_v).abs().max().item()
            bad = (indices != order.to(torch.int32)).sum().item()
            assert err == 0 and not torch.isnan(values).any(), (
                f"topk {M}x{E} k={k} ties={ties}: values differ (max err {err})")
            assert bad == 0, (f"topk {M}x{E} k={k} ties={ties}: {bad} indices differ, "
                              f"first row {(indices != order).any(1).nonzero()[0].item()}")
            lines.append(f"PASS topk {M}x{E} k={k} ties={ties} max_err={err:.1e}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--experts", type=int, default=256)
    ap.add_argument("--k", type=int, default=8)
    args = ap.parse_args()
    kernel = topk_gating(args.tokens, args.experts, args.k)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} for {args.tokens} x {args.experts}, k = {args.k}: "
          f"{ptx.count('shfl.sync')} shuffles, {ptx.count('ld.global')} global loads")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    M, E, k = args.tokens, args.experts, args.k
    x = torch.randn(M, E, device="cuda")
    ms = tilelang.profiler.do_bench(lambda: kernel(x))
    ms_torch = tilelang.profiler.do_bench(lambda: torch.topk(x, k, dim=1))
    print(f"{M} x {E} k = {k}: {ms * 1e3:.1f} us (torch.topk {ms_torch * 1e3:.1f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
