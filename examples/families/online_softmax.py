"""Softmax of each row of a long M x N matrix (fp16, N up to 32768 and more),
by an online max and sum over column chunks, then a second pass.

    python examples/families/online_softmax.py [--rows 4096 --cols 32768]

A row too long to keep in registers is read twice, chunk by chunk:

  1. over the chunks of block_N columns, a running maximum m and a running
     sum s of exp(x - m) in fp32: each chunk's maximum is folded into m
     (T.reduce_max with clear=False), the sum so far is rescaled by
     exp(m_old - m_new) and the chunk's own sum of exp(x - m_new) is added
     (T.reduce_sum): the "online" softmax statistics, one read of the row;
  2. over the chunks again, y = exp(x - m) / s, written as fp16.

Both loops are T.Pipelined: each chunk is copied global -> shared
asynchronously (cp.async, num_stages deep) while the one before it is
reduced or written (both loops copy into one staging tile; the compiler
stages it separately for each loop, and the two share its bytes). Columns past N (the last chunk when block_N does not
divide N) are read as zeros by the copy; the first pass masks them to -inf
so they count in neither the maximum nor the sum, and the copy out does not
write them. Exponentials are T.exp2 of log2(e)-scaled differences (the
hardware's ex2); each block takes block_M rows (one row of 32768 columns on
256 threads: 16 values a thread a chunk of 4096).

Shown: T.Pipelined over column chunks with T.copy into shared memory, a
dtype-converting T.copy shared -> fragment, T.reduce_max(clear=False) and
T.reduce_sum into row vectors, T.fill with T.infinity, row vectors read in
T.Parallel, T.exp2, T.if_then_else masking, a compile-time `if`.
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T

LOG2E = 1.4426950408889634
ELEMENTS_PER_BLOCK = 4096  # columns x rows of one chunk (16 a thread on 256 threads)


def default_config(N: int) -> dict:
    """block_M, block_N: chunks of 4096 elements a block, whole rows when a
    row is shorter (then several rows a block)."""
    block_N = min(ELEMENTS_PER_BLOCK, 1 << max(N - 1, 1).bit_length())
    return {"block_M": max(1, ELEMENTS_PER_BLOCK // block_N), "block_N": block_N}


@tilelang.jit(out_idx=[-1])
def online_softmax(M, N, block_M=None, block_N=None, threads=256, num_stages=3,
                   dtype="float16"):
    """Y = softmax(X, dim=1) for an M x N X, in chunks of block_N columns."""
    config = default_config(N)
    block_N = block_N or config["block_N"]
    block_M = block_M or max(1, ELEMENTS_PER_BLOCK // block_N)
    chunks = T.ceildiv(N, block_N)
    ragged = N % block_N != 0  # the last chunk runs past N: mask it
    accum = "float32"

    @T.prim_func
    def online_softmax(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x_s = T.alloc_shared((block_M, block_N), dtype)
            x = T.alloc_fragment((block_M, block_N), accum)
            y = T.alloc_fragment((block_M, block_N), dtype)
            row_max = T.alloc_fragment((block_M,), accum)
            prev_max = T.alloc_fragment((block_M,), accum)
            row_sum = T.alloc_fragment((block_M,), accum)
            chunk_sum = T.alloc_fragment((block_M,), accum)
            shift = T.alloc_fragment((block_M,), accum)
            inv_sum = T.alloc_fragment((block_M,), accum)

            T.fill(row_max, -T.infinity(accum))
            T.clear(row_sum)
            # Pass 1: the running maximum and the running sum of exp(x - max).
            for c in T.Pipelined(chunks, num_stages=num_stages):
                T.copy(X[bx * block_M, c * block_N], x_s)
                T.copy(x_s, x)
                if ragged:
                    for i, j in T.Parallel(block_M, block_N):
                        x[i, j] = T.if_then_else(c * block_N + j < N, x[i, j],
                                                 -T.infinity(accum))
                T.copy(row_max, prev_max)
                T.reduce_max(x, row_max, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_N):
                    x[i, j] = T.exp2((x[i, j] - row_max[i]) * LOG2E)
                T.reduce_sum(x, chunk_sum, dim=1)
                for i in T.Parallel(block_M):
                    # exp(prev - new) rescales the sum so far to the new maximum
                    # (0 for the first chunk, whose prev is -inf)
                    row_sum[i] = row_sum[i] * T.exp2((prev_max[i] - row_max[i]) * LOG2E) \
                        + chunk_sum[i]
            for i in T.Parallel(block_M):
                shift[i] = row_max[i] * LOG2E
                inv_sum[i] = 1.0 / row_sum[i]
            # Pass 2: y = exp(x - max) / sum.
            for c in T.Pipelined(chunks, num_stages=num_stages):
                T.copy(X[bx * block_M, c * block_N], x_s)
                for i, j in T.Parallel(block_M, block_N):
                    y[i, j] = T.cast(
                        T.exp2(T.cast(x_s[i, j], accum) * LOG2E - shift[i]) * inv_sum[i], dtype)
                T.copy(y, Y[bx * block_M, c * block_N])

    return online_softmax


def reference(x):
    """softmax over the last axis in float64."""
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# (M, N, factory options): long rows in whole chunks, rows shorter than a
# chunk, ragged last chunks (N = 30000, 4097, 5000, 100) and other chunk widths.
GPU_CASES = [(4096, 32768, {}), (1024, 8192, {}), (8192, 1024, {}), (1000, 30000, {}),
             (333, 4097, {}), (77, 5000, {"block_N": 1024}), (4096, 32768, {"block_N": 8192}),
             (17, 100, {})]


def gpu_kernel(M, N, options):
    """The kernel gpu_check launches for the GPU case (M, N, options): the
    output passed in (NaN-filled), not allocated: the factory without out_idx."""
    return tilelang.jit(online_softmax.factory)(M, N, **options)


def gpu_kernels() -> list:
    """Compiles (no torch, no GPU) every kernel gpu_check launches."""
    return [gpu_kernel(*case) for case in GPU_CASES]


def gpu_check() -> list[str]:
    """Runs the kernel on the GPU for GPU_CASES against torch.softmax in
    fp32; returns one PASS line a shape, raises AssertionError otherwise."""
    import torch

    lines = []
    for M, N, options in GPU_CASES:
        kernel = gpu_kernel(M, N, options)
        gen = torch.Generator(device="cuda").manual_seed(M + N)
        x = (torch.randn(M, N, device="cuda", generator=gen) * 4).half()
        x[:, :: 97] += 12  # a few large logits, in several chunks
        y = torch.full_like(x, float("nan"))
        kernel(x, y)
        torch.cuda.synchronize()
        ref = torch.softmax(x.double(), dim=1)
        err = (y.double() - ref).abs()
        # fp16 rounding of the result (relative 2^-11) plus the fp32 sums' error
        ok = err <= 2.0 ** -10 * ref + 1e-6
        assert ok.all() and not torch.isnan(y).any(), (
            f"online_softmax {M}x{N} {options}: max err {err.max().item():.3g} at "
            f"{tuple(int(v) for v in (~ok).nonzero()[0])}")
        lines.append(f"PASS online_softmax {M}x{N} {options or ''} max_err={err.max().item():.2e}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=32768)
    args = ap.parse_args()
    M, N = args.rows, args.cols
    kernel = online_softmax(M, N)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} for {M} x {N} ({default_config(N)}): "
          f"{ptx.count('cp.async.cg.shared.global')} cp.async, "
          f"{ptx.count('ex2.approx')} ex2, {ptx.count('st.global.v4')} 16-byte stores")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    ms = tilelang.profiler.do_bench(lambda: kernel(x))
    ms_torch = tilelang.profiler.do_bench(lambda: torch.softmax(x, dim=1))
    gbs = 3 * M * N * 2 / (ms * 1e-3) / 1e9  # two reads and a write
    print(f"{M} x {N}: {ms * 1e3:.1f} us, {gbs:.0f} GB/s (torch.softmax {ms_torch * 1e3:.1f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
