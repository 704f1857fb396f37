"""Weight-only int4 GEMM: C = A @ dequant(W)^T, A fp16, W 4-bit with fp16 group scales.

    python examples/families/dequant_gemm.py [--m 4096 --n 4096 --k 4096]

The linear layer of a weight-quantized LLM. A is M x K fp16 (the activations);
W is N x K 4-bit integers packed two to a byte, `Wq` (N x K/2, uint8): byte
`Wq[n, c]` holds column 2c of row n in its low nibble and column 2c + 1 in
its high one, each an unsigned code q in 0..15 standing for q - 8 (symmetric
quantization around the zero point 8). `Scales` (K / group_size x N, fp16,
the GPTQ / AWQ order: one row per group of K) gives the scale of each group
of `group_size` consecutive columns of a row of W:

    W[n, k] = (nibble(Wq[n, k // 2], k % 2) - 8) * Scales[k // group_size, n]
    C = A @ W^T          (fp32 accumulation, C fp16 or fp32)

A block computes a block_M x block_N tile of C. Each step of its K loop
(`T.Pipelined`: cp.async `num_stages` deep, so the next tiles of A, Wq and the
scales load while this one computes) copies A's tile and the packed bytes of
W's tile into shared memory, moves the packed bytes into registers
(`T.copy` to a fragment), unpacks and scales them in registers in one
`T.Parallel` over the block_N x block_K weights (shifts and masks on the
bytes, the scale read from its shared row), stores the fp16 weights into one
of two shared tiles (alternating by step, `w_tiles[ks % 2, :, :]`) and feeds
it with A's tile to `T.gemm(..., transpose_B=True)` (wgmma on sm_90a, which
stays pending while the next step unpacks into the other tile; mma.sync on
sm_80). W is read from memory at a quarter of
fp16's bytes, which is what makes the kernel pay off for small M (decode),
where a GEMM is bound by reading W.

M (the tokens) may be `T.dynamic("M")`: one kernel for every batch; M and N
need not be multiples of the blocks (copies past the edges read zeros and the
store is masked). K must be a multiple of group_size, and block_K and
group_size must divide one another.

TileLang constructs shown: `T.Kernel`, `T.alloc_shared` / `T.alloc_fragment`,
`T.Pipelined`, `T.copy` (global -> shared -> registers), bit operators
(`>>`, `&`) and `T.cast` in a `T.Parallel` that indexes a packed fragment as
`[n, j // 2]` beside the unpacked `[n, j]`, a hand double-buffered gemm
operand (`w_tiles[slot, :, :]`), `T.gemm` with `transpose_B`, `T.dynamic`.
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T


@tilelang.jit(out_idx=[-1])
def dequant_gemm(M, N, K, group_size=128, block_M=128, block_N=128, block_K=64, num_stages=4,
                 threads=256, out_dtype="float16"):
    """A (M x K fp16), Wq (N x K/2 uint8), Scales (K/group_size x N fp16) -> C (M x N
    out_dtype) = A @ dequant(Wq, Scales)^T."""
    if K % group_size:
        raise ValueError(f"K ({K}) must be a multiple of group_size ({group_size})")
    if block_K % group_size and group_size % block_K:
        raise ValueError(f"block_K ({block_K}) and group_size ({group_size}) must divide "
                         "one another")
    if block_K % 2 or K % 2:
        raise ValueError("K and block_K must be even (two weights a byte)")
    # Rows of Scales a K step reads: one where a group spans several steps.
    scale_rows = max(1, block_K // group_size)

    @T.prim_func
    def w4a16_gemm(A: T.Tensor((M, K), "float16"), Wq: T.Tensor((N, K // 2), "uint8"),
                   Scales: T.Tensor((K // group_size, N), "float16"),
                   C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bn, bm):
            a_tile = T.alloc_shared((block_M, block_K), "float16")
            packed_tile = T.alloc_shared((block_N, block_K // 2), "uint8")
            scale_tile = T.alloc_shared((scale_rows, block_N), "float16")
            packed = T.alloc_fragment((block_N, block_K // 2), "uint8")
            weights = T.alloc_fragment((block_N, block_K), "float16")
            w_tiles = T.alloc_shared((2, block_N, block_K), "float16")  # two: see below
            acc = T.alloc_fragment((block_M, block_N), "float32")

            # Bands of 8 column tiles walked down the rows: the blocks running together
            # share their tiles of W and rows of A in L2.
            T.use_swizzle(panel_size=8)
            T.clear(acc)
            for ks in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[bm * block_M, ks * block_K], a_tile)
                T.copy(Wq[bn * block_N, ks * (block_K // 2)], packed_tile)
                T.copy(Scales[ks * block_K // group_size, bn * block_N], scale_tile)
                # Unpack in registers: each byte a thread holds becomes two scaled fp16 weights.
                T.copy(packed_tile, packed)
                for n, j in T.Parallel(block_N, block_K):
                    code = (packed[n, j // 2] >> ((j % 2) * 4)) & 0xF
                    scale = scale_tile[j // group_size if scale_rows > 1 else 0, n]
                    weights[n, j] = (T.cast(code, "float16") - T.float16(8)) * scale
                # Alternate between two weight tiles, so that this step's unpacking need
                # not wait for the previous step's gemm to finish reading its tile (on
                # sm_90a the wgmma stays pending across the next step's unpacking).
                slot = ks % 2
                T.copy(weights, w_tiles[slot, :, :])
                T.gemm(a_tile, w_tiles[slot, :, :], acc, transpose_B=True)
            T.copy(acc, C[bm * block_M, bn * block_N])

    return w4a16_gemm


def default_config(M: int) -> dict:
    """Blocks for M tokens: for decode-sized M, 64 x 64 blocks of one warpgroup (few
    wasted rows, twice the blocks along N to keep more SMs reading W) with long K steps
    (more bytes of W in flight); 128 x 128 on two warpgroups otherwise."""
    if M <= 64:
        return {"block_M": 64, "block_N": 64, "block_K": 128, "num_stages": 4,
                "threads": 128}
    return {"block_M": 128, "block_N": 128, "block_K": 64, "num_stages": 4, "threads": 256}


def pack_int4(codes: np.ndarray) -> np.ndarray:
    """N x K codes in 0..15 -> N x K/2 uint8, column 2c in the low nibble of byte c."""
    codes = codes.astype(np.uint8)
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def unpack_int4(wq: np.ndarray) -> np.ndarray:
    """pack_int4's inverse: N x K/2 uint8 -> N x K codes (uint8, 0..15)."""
    return np.stack([wq & 0xF, wq >> 4], axis=-1).reshape(wq.shape[0], -1)


def reference(a: np.ndarray, wq: np.ndarray, scales: np.ndarray,
              group_size: int = 128) -> np.ndarray:
    """C = A @ dequant(W)^T in float64."""
    codes = unpack_int4(wq).astype(np.float64) - 8.0
    w = codes * np.repeat(scales.astype(np.float64).T, group_size, axis=1)
    return a.astype(np.float64) @ w.T


def _torch_reference(torch, a, wq, scales, group_size):
    codes = torch.stack([wq & 0xF, wq >> 4], dim=-1).reshape(wq.shape[0], -1)
    w = (codes.double() - 8.0) * scales.double().T.repeat_interleave(group_size, dim=1)
    return a.double() @ w.T


SHAPES = [  # M, N, K: decode, prefill, and sizes no block divides
    (1, 4096, 4096),
    (16, 11008, 4096),
    (128, 4096, 4096),
    (4096, 4096, 4096),
    (257, 1000, 1536),
    (77, 4104, 2048),
]


# Each shape's kernels: (out_dtype, dynamic M), fp16 and fp32 outputs of a kernel for
# its M, and fp16 from one kernel over a dynamic M (shared by the shapes with the same
# config, N and K).
GPU_VARIANTS = (("float16", False), ("float32", False), ("float16", True))

# gpu_check's kernels are called with C too (no out_idx), so that C can be NaN-filled first.
_in_place = tilelang.jit(dequant_gemm.factory)


def gpu_kernel(M: int, N: int, K: int, out_dtype: str, dynamic: bool, made: dict):
    """The kernel gpu_check launches for shape (M, N, K) and variant (out_dtype,
    dynamic), compiled once per distinct factory call: `made` (call -> kernel) holds
    those already made."""
    config = default_config(M)
    if dynamic:
        args, kwargs = (T.dynamic("M"), N, K), config
    else:
        args, kwargs = (M, N, K), {"out_dtype": out_dtype, **config}
    call = repr((args, sorted(kwargs.items())))
    if call not in made:
        made[call] = _in_place(*args, **kwargs)
    return made[call]


def gpu_kernels() -> list:
    """Compiles every kernel gpu_check launches (no torch, no GPU needed)."""
    made = {}
    for M, N, K in SHAPES:
        for out_dtype, dynamic in GPU_VARIANTS:
            gpu_kernel(M, N, K, out_dtype, dynamic, made)
    return list(made.values())


def gpu_check() -> list[str]:
    """Runs the kernel on the GPU for SHAPES (fp16 and fp32 outputs, and one kernel
    over a dynamic M) against a float64 torch reference; returns PASS lines."""
    import torch

    lines = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    made = {}
    for (M, N, K) in SHAPES:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=gen)
        wq = torch.randint(0, 256, (N, K // 2), device="cuda", dtype=torch.uint8, generator=gen)
        scales = (torch.rand(K // 128, N, device="cuda", generator=gen) * 0.02 + 0.005).half()
        ref = _torch_reference(torch, a, wq, scales, 128)
        for out_dtype, dynamic in GPU_VARIANTS:
            kernel = gpu_kernel(M, N, K, out_dtype, dynamic, made)
            c = torch.full((M, N), float("nan"), device="cuda",
                           dtype=getattr(torch, out_dtype))
            kernel(a, wq, scales, c)
            torch.cuda.synchronize()
            err = (c.double() - ref).abs()
            # The weights rounded to fp16 once, fp32 sums; fp16 outputs their own rounding.
            rounding = 2.0 ** -10 if out_dtype == "float16" else 0.0
            tol = 1e-3 * ref.abs().max().item() + rounding * ref.abs()
            bad = ~(err <= tol)
            if bad.any():
                i, j = (int(x) for x in bad.nonzero()[0])
                raise AssertionError(
                    f"dequant_gemm M={M} N={N} K={K} out={out_dtype} dynamic={dynamic}: "
                    f"{int(bad.sum())} elements off, first C[{i}, {j}] = {c[i, j].item()} "
                    f"against {ref[i, j].item()}")
            lines.append(f"PASS dequant_gemm M={M} N={N} K={K} out={out_dtype}"
                         f"{' dynamic M' if dynamic else ''} max_err={err.max().item():.3g}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    args = ap.parse_args()
    kernel = dequant_gemm(args.m, args.n, args.k, **default_config(args.m))
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} for M={args.m} N={args.n} K={args.k}: "
          f"{ptx.count('wgmma.mma_async')} wgmma, {ptx.count('mma.sync')} mma.sync, "
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
