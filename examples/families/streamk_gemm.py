"""Stream-K GEMM written by hand: C += A @ B^T (A M x K, B N x K, fp16; C fp32,
zeroed by the caller), for shapes with few tiles of C and a long K, where one
block per tile would leave most SMs idle.

    python examples/families/streamk_gemm.py [--m 256 --n 1024 --k 16384]

The kernel is launched on one block per SM (`num_sms`). The tiles of C are
split in two parts:

* whole waves of tiles (`num_sms` of them per wave) are data-parallel: a block
  runs the whole K loop of its tile and stores it (`T.copy(acc, C[...])`);
* the tiles left over (the last partial wave, plus one whole wave when there
  is one, so that each block's share is at least a tile's worth of work) are
  stream-K: their K iterations, tile after tile, form one range that is cut
  into `num_sms` nearly equal pieces. Every stretch of a block's piece that
  falls inside one tile is accumulated into a fresh fragment and added into C
  with a tile `T.atomic_add` (a stretch covering the tile's whole K is stored
  directly instead).

Each block walks its whole work list (its data-parallel tiles, then its
stream-K piece) with one `while` loop over a `T.alloc_var` cursor, each step
one `T.Pipelined` K loop over a run-time range of iterations, so one
pipeline serves both parts.

Constructs: `T.Kernel` of `num_sms` blocks, `T.alloc_var`, a run-time `while`,
`T.Pipelined` with a run-time trip count, `T.gemm(transpose_B=True)` into an
fp32 `T.alloc_fragment`, tile `T.atomic_add` into global memory, `T.min`. M, N
and K need not be multiples of the blocks (copies read zeros past the edges,
stores and atomics are clipped).
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T


def streamk_plan(M, N, K, block_M, block_N, block_K, num_sms):
    """How the work is divided: (blocks, data-parallel tiles, stream-K tiles,
    K iterations per tile). Plain Python, shared by the kernel and the tests."""
    tiles = T.ceildiv(M, block_M) * T.ceildiv(N, block_N)
    k_iters = T.ceildiv(K, block_K)
    full_waves, rest = divmod(tiles, num_sms)
    if rest and full_waves:
        full_waves -= 1  # stream-K over one wave plus the remainder
    dp_tiles = full_waves * num_sms
    sk_tiles = tiles - dp_tiles
    blocks = min(num_sms, max(sk_tiles * k_iters, dp_tiles))
    return blocks, dp_tiles, sk_tiles, k_iters


@tilelang.jit
def streamk_matmul(M, N, K, block_M=128, block_N=128, block_K=64, threads=256, num_stages=3,
                   num_sms=None, dtype="float16", accum_dtype="float32"):
    """C (M x N, float32, zero on entry) += A (M x K) @ B (N x K)^T."""
    sms = num_sms if num_sms is not None else tilelang.carver.arch.driver.get_num_sms()
    blocks, dp_tiles, sk_tiles, k_iters = streamk_plan(M, N, K, block_M, block_N, block_K, sms)
    tiles_n = T.ceildiv(N, block_N)
    dp_waves = dp_tiles // blocks
    # The stream-K range: iterations [0, sk_tiles * k_iters) of the last sk_tiles
    # tiles, tile after tile; block b takes `share` of them, one more if b < extra.
    sk_total = sk_tiles * k_iters
    share, extra = divmod(sk_total, blocks)

    @T.prim_func
    def gemm_streamk(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype),
                     C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(blocks, threads=threads) as pid:
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_N, block_K), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)

            # The block's work as one list of K iterations: its data-parallel tiles
            # first (dp_waves whole tiles), then its stream-K piece [sk_first, sk_stop)
            # of the remaining tiles' iterations. `done` counts what it has walked.
            sk_first = pid * share + T.min(pid, extra)
            sk_stop = (pid + 1) * share + T.min(pid + 1, extra)
            work = dp_waves * k_iters + (sk_stop - sk_first)
            done = T.alloc_var("int32", 0)
            tile = T.alloc_var("int32")
            k_first = T.alloc_var("int32")
            k_last = T.alloc_var("int32")
            while done < work:
                if done < dp_waves * k_iters:
                    tile = (done // k_iters) * blocks + pid  # a whole tile of a wave
                    k_first = 0
                    k_last = k_iters
                else:
                    g = sk_first + done - dp_waves * k_iters  # into the stream-K range
                    tile = dp_tiles + g // k_iters
                    k_first = g % k_iters
                    k_last = T.min(k_iters, k_first + (work - done))  # the stretch ends here
                tm = tile // tiles_n
                tn = tile % tiles_n
                T.clear(acc)
                for ko in T.Pipelined(k_last - k_first, num_stages=num_stages):
                    T.copy(A[tm * block_M, (k_first + ko) * block_K], A_s)
                    T.copy(B[tn * block_N, (k_first + ko) * block_K], B_s)
                    T.gemm(A_s, B_s, acc, transpose_B=True)
                if k_first == 0 and k_last == k_iters:
                    T.copy(acc, C[tm * block_M, tn * block_N])  # the whole tile is ours
                else:
                    T.atomic_add(C[tm * block_M, tn * block_N], acc)  # a partial sum
                done += k_last - k_first

    return gemm_streamk


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A @ B^T in float64."""
    return a.astype(np.float64) @ b.astype(np.float64).T


# (M, N, K, config)
GPU_SHAPES = [
    (256, 1024, 16384, {}),            # 16 tiles of 256 iterations over the SMs
    (128, 2048, 8192, {}),
    (512, 512, 32768, {}),
    (4096, 4096, 2048, {}),            # 1024 tiles: 6 data-parallel waves, 232 stream-K
    (300, 1000, 10000, {}),            # no block divides M, N or K
    (256, 1024, 16384, {"block_N": 256, "num_stages": 4}),
]


def gpu_kernel(M, N, K, config):
    """The kernel gpu_check launches for one GPU_SHAPES entry."""
    return streamk_matmul(M, N, K, **config)


def gpu_kernels() -> list:
    """Every kernel gpu_check launches, compiled (no torch, no GPU needed)."""
    return [gpu_kernel(*case) for case in GPU_SHAPES]


def gpu_check() -> list[str]:
    """Runs the kernel on a CUDA GPU against torch (float64 math) at GPU_SHAPES."""
    import torch

    lines = []
    for M, N, K, config in GPU_SHAPES:
        kernel = gpu_kernel(M, N, K, config)
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(N, K, device="cuda", dtype=torch.float16)
        c = torch.zeros(M, N, device="cuda", dtype=torch.float32)  # the kernel adds into C
        kernel(a, b, c)
        ref = a.double() @ b.double().T
        # fp32 sums of K products: bounded by a small multiple of eps * sum |a b|.
        scale = a.double().abs() @ b.double().abs().T
        err = (c.double() - ref).abs()
        tol = 1e-3 + 1e-5 * scale
        shape = f"{M}x{N}x{K} {config or ''}".strip()
        if not bool(torch.isfinite(c).all()) or bool((err > tol).any()):
            raise AssertionError(f"streamk_gemm {shape}: max_err={err.max().item():.4g} "
                                 f"({int((err > tol).sum())} elements out of tolerance)")
        lines.append(f"PASS streamk_gemm {shape} max_err={err.max().item():.4g}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, default=256)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=16384)
    args = ap.parse_args()
    kernel = streamk_matmul(args.m, args.n, args.k)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} on {kernel.artifact['grid'][0]} blocks: "
          f"{ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('red.global.add') + ptx.count('atom.global.add')} global atomic adds "
          f"in the PTX")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
