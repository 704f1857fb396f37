"""Dynamic fp8 (e4m3) quantization of activations, per token or per 1 x 128 group:

    scale[m, g] = max(amax[m, g], amax_floor) / 448        (fp32)
    q[m, k]     = fp8_e4m3(x[m, k] / scale[m, k // G])    (round to nearest even, saturating)

where amax[m, g] is the largest |x| of row m's group g: the whole row (G = K,
per-token scales, the default) or 128-column groups (G = 128, the 1 x 128
activation scales of DeepSeek-V3's fp8 training). x is an M x K bf16 or fp16 tensor; the kernel
returns q (M x K float8_e4m3fn) and the scales (M x ceil(K / G) float32), so
that x ~= q * scale. amax_floor (1e-4) keeps an all-zero group's scale finite.

    python examples/families/fp8_quant.py [M K [G]]

Each block quantizes a block_M x G tile: whole rows (per token) or one group
of block_M rows (per group; the grid's second dimension walks the groups).
The tile is read once from DRAM with 16-byte loads into a fragment, its row
maxima of |x| come from `T.reduce_absmax` (each thread's own elements in
registers, then warp shuffles, then shared memory when a row spans warps),
each element is divided by its row's scale in fp32 and cast to fp8 (cvt with
saturation: 448 is e4m3's largest finite value), and the fp8 tile leaves with
8-byte stores, or 16-byte ones where the compiler regroups the bytes through
shared memory. Rows past M and columns past K (a last group shorter than G)
are read as zeros, which change no maximum, and are not written.

Constructs: T.Kernel (1-d or 2-d grid), T.alloc_fragment (bf16, fp32 and
float8_e4m3fn fragments), T.copy (global <-> fragment), T.reduce_absmax,
T.Parallel (writing a global tensor of scales), T.max, T.cast to fp8.
"""

import sys

import numpy as np

import tlc as tilelang
import tlc.language as T

FP8_MAX = 448.0  # e4m3 (OCP "fn": no infinities) largest finite value
ELEMENTS_PER_THREAD = 32  # of x: four 16-byte loads in flight a thread


def default_config(K: int, group_size: int | None = None) -> dict:
    """threads and rows a block: 128 threads (more for rows longer than
    4096, so that a thread holds about 32 elements of a row), and as many
    rows (a power of two) as give each thread about 32 elements: per token
    4 rows of 1024, one row of 4096; per group 32 rows of one 128-wide group.
    The threads are halved while the tile's 16-byte vectors would not deal out
    evenly over them."""
    G = K if group_size is None else group_size
    threads = 128
    while threads < 1024 and threads * ELEMENTS_PER_THREAD < G:
        threads *= 2
    block_M = 1
    while block_M * 2 * G <= threads * ELEMENTS_PER_THREAD:
        block_M *= 2
    # fewer threads where the tile's 16-byte vectors would not deal out evenly
    # (K = 7168 per token: 128 threads with 7 vectors each, not 256 with 3.5)
    fewer = threads
    while fewer > 32 and (block_M * G) % (fewer * 8):
        fewer //= 2
    if (block_M * G) % (fewer * 8) == 0:
        threads = fewer
    return {"block_M": block_M, "threads": threads}


def check_config(K: int, G: int, block_M: int, threads: int, dtype: str) -> None:
    """ValueError naming what does not fit."""
    if dtype not in ("bfloat16", "float16", "float32"):
        raise ValueError(f"dtype must be bfloat16, float16 or float32, got {dtype!r}")
    if K <= 0 or K % 8:
        raise ValueError(f"K must be a positive multiple of 8 (16-byte rows), got {K}")
    if G <= 0 or G % 8 or G > K:
        raise ValueError(f"group_size must be a multiple of 8 up to K = {K}, got {G}")
    if threads < 32 or threads & (threads - 1):
        raise ValueError(f"threads must be a power of two >= 32, got {threads}")
    if block_M < 1 or (block_M * G) % threads:
        raise ValueError(f"block_M * group = {block_M * G} must be a multiple of threads = "
                         f"{threads} (every thread the same share of the tile)")


@tilelang.jit(out_idx=[-2, -1])
def fp8_quant(M, K, group_size=None, block_M=None, threads=None, dtype="bfloat16",
              amax_floor=1e-4):
    """The kernel for an M x K tensor of `dtype`: per-token scales when
    group_size is None, else one scale per group_size columns of a row
    (a last group past K is shorter). Returns (q, scales)."""
    G = K if group_size is None else group_size
    if block_M is None or threads is None:
        config = default_config(K, group_size)
        block_M = block_M or config["block_M"]
        threads = threads or config["threads"]
    check_config(K, G, block_M, threads, dtype)
    groups = T.ceildiv(K, G)
    accum = "float32"
    fp8 = "float8_e4m3fn"

    @T.prim_func
    def quantize_fp8(X: T.Tensor((M, K), dtype), Q: T.Tensor((M, K), fp8),
                     S: T.Tensor((M, groups), accum)):
        with T.Kernel(T.ceildiv(M, block_M), groups, threads=threads) as (bm, bg):
            x = T.alloc_fragment((block_M, G), dtype)
            amax = T.alloc_fragment((block_M,), accum)
            scale = T.alloc_fragment((block_M,), accum)
            q = T.alloc_fragment((block_M, G), fp8)

            T.copy(X[bm * block_M, bg * G], x)
            T.reduce_absmax(x, amax, dim=1)
            for r in T.Parallel(block_M):
                scale[r] = T.max(amax[r], amax_floor) / FP8_MAX
                S[bm * block_M + r, bg] = scale[r]
            for r, c in T.Parallel(block_M, G):
                q[r, c] = T.cast(T.cast(x[r, c], accum) / scale[r], fp8)
            T.copy(q, Q[bm * block_M, bg * G])

    return quantize_fp8


def round_to_e4m3(v):
    """float32 values rounded to float8_e4m3fn (nearest even, saturating at
    +-448, subnormals down to 2^-9), returned as float32: ml_dtypes' cast where
    it is installed, else the same rounding in numpy."""
    v = np.clip(np.asarray(v, np.float32), -FP8_MAX, FP8_MAX)
    try:
        import ml_dtypes
    except ImportError:
        a = np.abs(v.astype(np.float64))
        # the spacing of e4m3 values around a: 2^(e - 3) for a in [2^e, 2^(e+1)),
        # e >= -6; below 2^-6 the subnormals' 2^-9
        e = np.floor(np.log2(np.maximum(a, 2.0 ** -6)))
        quantum = 2.0 ** (e - 3)
        r = np.round(a / quantum) * quantum  # np.round: half to even; a / quantum exact
        return (np.sign(v) * r).astype(np.float32)
    return v.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)


def reference(x, group_size=None, amax_floor=1e-4):
    """(q as float32 values, scales): the kernel's fp32 arithmetic (max of
    |x|, one division for the scale, one per element) in numpy, then e4m3
    rounding, so that q matches bit for bit."""
    x = np.asarray(x, np.float32)
    M, K = x.shape
    G = K if group_size is None else group_size
    groups = -(-K // G)
    padded = np.zeros((M, groups * G), np.float32)
    padded[:, :K] = x
    amax = np.abs(padded.reshape(M, groups, G)).max(axis=2)
    scale = np.maximum(amax, np.float32(amax_floor)) / np.float32(FP8_MAX)
    q = round_to_e4m3(padded.reshape(M, groups, G) / scale[:, :, None])
    return q.reshape(M, groups * G)[:, :K], scale


# (M, K, group_size, dtype): per-token and per-group on LLM activation sizes,
# fp16 and bf16, and sizes no block divides (M; K for the groups).
GPU_CASES = [
    (4096, 4096, None, "bfloat16"),
    (8192, 7168, None, "bfloat16"),
    (4096, 7168, 128, "bfloat16"),
    (8192, 4096, 128, "float16"),
    (1001, 1024, None, "float16"),
    (333, 1000, 128, "bfloat16"),
    (77, 16384, None, "bfloat16"),
]


def gpu_kernel(M, K, G, dtype):
    """The kernel gpu_check launches for the GPU case (M, K, group_size, dtype):
    outputs passed in (NaN-filled), not allocated: the factory without out_idx."""
    return tilelang.jit(fp8_quant.factory)(M, K, group_size=G, dtype=dtype)


def gpu_kernels() -> list:
    """Compiles (no torch, no GPU) every kernel gpu_check launches."""
    return [gpu_kernel(*case) for case in GPU_CASES]


def gpu_check() -> list[str]:
    """Runs the kernel on the GPU for GPU_CASES; q must equal torch's fp8
    cast of the same fp32 quotients, the scales the correctly rounded fp32 max / 448."""
    import torch

    tdt = {"float16": torch.float16, "bfloat16": torch.bfloat16}
    lines = []
    for M, K, G, dtype in GPU_CASES:
        kernel = gpu_kernel(M, K, G, dtype)
        gs = K if G is None else G
        groups = -(-K // gs)
        x = (torch.randn(M, K, device="cuda") * torch.rand(M, 1, device="cuda") * 10).to(
            tdt[dtype])
        x[M // 2] = 0  # an all-zero row: the floor keeps its scale finite
        q = torch.full((M, K), float("nan"), device="cuda").to(torch.float8_e4m3fn)
        s = torch.full((M, groups), float("nan"), device="cuda")
        kernel(x, q, s)
        xf = torch.nn.functional.pad(x.float(), (0, groups * gs - K)).view(M, groups, gs)
        # correctly rounded fp32 quotients (torch divides a tensor by a number
        # as a product with its reciprocal, one fp32 ulp off at times)
        ref_s = (xf.abs().amax(dim=2).clamp(min=1e-4).double() / FP8_MAX).float()
        # torch's cast saturates nothing; |x / scale| <= 448 up to fp32 rounding,
        # below e4m3's rounding boundary 464, so clamping first changes nothing
        ref_q = (xf / ref_s[:, :, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
        ref_q = ref_q.view(M, groups * gs)[:, :K]
        if torch.isnan(s).any() or not torch.equal(s, ref_s):
            bad = int(torch.argmax(((s - ref_s).abs()).nan_to_num(float("inf")).flatten()))
            raise AssertionError(f"fp8_quant {M}x{K} G={G} {dtype}: scale.flatten()[{bad}] = "
                                 f"{s.flatten()[bad].item()}, reference "
                                 f"{ref_s.flatten()[bad].item()}")
        qf, rf = q.float(), ref_q.float()
        diff = (qf != rf) | torch.isnan(qf)
        if diff.any():
            m, k = (int(i) for i in diff.nonzero()[0])
            raise AssertionError(f"fp8_quant {M}x{K} G={G} {dtype}: {int(diff.sum())} fp8 "
                                 f"values differ, first q[{m}, {k}] = {qf[m, k].item()}, "
                                 f"reference {rf[m, k].item()} (x = {x[m, k].item()})")
        # how close x is to q * scale: at most half an e4m3 ulp of |x| / scale
        deq = (qf.view(M, -1) * torch.repeat_interleave(s, gs, dim=1)[:, :K])
        err = (deq - x.float()).abs().max().item()
        lines.append(f"PASS fp8_quant {M}x{K} G={G or 'row'} {dtype} max_err={err:.3g} "
                     f"(q and scales bit-exact)")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    M, K = (int(a) for a in argv[:2]) if argv else (8192, 7168)
    G = int(argv[2]) if len(argv) > 2 else None
    try:
        kernel = fp8_quant(M, K, group_size=G)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} for {M} x {K}, {'per token' if G is None else f'groups of {G}'}"
          f" {default_config(K, G)}: {ptx.count('ld.global.v4')} 16-byte loads, "
          f"{ptx.count('cvt.rn.satfinite.e4m3x2.f32')} saturating fp8 conversions (cvt)")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
