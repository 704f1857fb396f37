"""LayerNorm forward over the last dimension:

    y[m, c] = (x[m, c] - mean[m]) * rstd[m] * gamma[c] + beta[c],
    mean[m] = sum_c x[m, c] / C,  rstd[m] = 1 / sqrt(sum_c (x[m, c] - mean[m])^2 / C + eps)

for an M x C fp16 or bf16 input, statistics in fp32; the kernel also returns
mean and rstd (fp32, one per row), as a training forward does for its
backward pass.

    python examples/families/layer_norm.py [M C]

Each block normalizes `block_M` whole rows, held in registers from the one
read of DRAM to the one write: `T.copy` brings the rows into a fragment with
16-byte loads (the compiler deals the rows' 16-byte pieces to the threads,
consecutive pieces to consecutive threads, so a warp's loads coalesce), the fp32
row sums come from `T.reduce_sum` (each thread's own columns, then warp
shuffles, then shared memory when a row spans several warps), and the
variance is a second reduction over the centred squares (two passes over
registers, so no E[x^2] - mean^2 cancellation). The rows of the last block
past M are read as zeros and not written, so M need not be a multiple of
block_M.

Constructs: T.Kernel, T.alloc_fragment, T.copy (global <-> fragment, with
dtype conversion fragment -> fragment), T.reduce_sum, T.Parallel (2-d over
the rows, 1-d over the row statistics, writing global tensors), T.rsqrt,
T.cast.
"""

import sys

import numpy as np

import tlc as tilelang
import tlc.language as T

ELEMENTS_PER_THREAD = 32  # of x: four 16-byte loads in flight a thread


def default_config(C: int) -> dict:
    """threads and rows a block for rows of C channels: 128 threads up to
    4096 channels, C / 32 beyond (256 at 8192), and as many rows (a power of
    two) as give each thread about 32 elements (4 rows of 1024 channels);
    then fewer threads while the block's 16-byte vectors would not deal out
    evenly over them."""
    if C <= 0 or C % 8:
        raise ValueError(f"C must be a positive multiple of 8 (16-byte rows), got {C}")
    threads = 128
    while threads < 1024 and threads * ELEMENTS_PER_THREAD < C:
        threads *= 2
    block_M = 1
    while block_M * 2 * C <= threads * ELEMENTS_PER_THREAD:
        block_M *= 2
    # fewer threads where the rows' 16-byte vectors would not deal out evenly
    # (C = 7168: 128 threads with 7 vectors each, not 256 with 3.5)
    fewer = threads
    while fewer > 32 and (block_M * C) % (fewer * 8):
        fewer //= 2
    if (block_M * C) % (fewer * 8) == 0:
        threads = fewer
    check_config(C, block_M, threads)
    return {"block_M": block_M, "threads": threads}


def check_config(C: int, block_M: int, threads: int) -> None:
    """ValueError naming what does not fit: the block's block_M x C elements
    must spread evenly over its threads (C = 1000 on 128 threads needs 16 rows
    a block, 125 elements a thread: too many)."""
    if C <= 0 or C % 8:
        raise ValueError(f"C must be a positive multiple of 8 (16-byte rows), got {C}")
    if threads < 32 or threads & (threads - 1):
        raise ValueError(f"threads must be a power of two >= 32, got {threads}")
    if block_M < 1 or (block_M * C) % threads:
        raise ValueError(f"block_M * C = {block_M * C} must be a multiple of threads = "
                         f"{threads} (every thread the same share of the rows)")


@tilelang.jit(out_idx=[-3, -2, -1])
def layer_norm(M, C, block_M=None, threads=None, eps=1e-5, dtype="float16"):
    """The kernel for an M x C input of `dtype` (float16 or bfloat16):
    returns (y of `dtype`, mean and rstd in float32)."""
    if block_M is None or threads is None:
        config = default_config(C)
        block_M = block_M or config["block_M"]
        threads = threads or config["threads"]
    check_config(C, block_M, threads)
    accum = "float32"

    @T.prim_func
    def layer_norm_fwd(X: T.Tensor((M, C), dtype), gamma: T.Tensor((C,), dtype),
                       beta: T.Tensor((C,), dtype), Y: T.Tensor((M, C), dtype),
                       Mean: T.Tensor((M,), accum), Rstd: T.Tensor((M,), accum)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bm:
            x = T.alloc_fragment((block_M, C), dtype)
            work = T.alloc_fragment((block_M, C), accum)
            g = T.alloc_fragment((C,), dtype)
            b = T.alloc_fragment((C,), dtype)
            mean = T.alloc_fragment((block_M,), accum)
            rstd = T.alloc_fragment((block_M,), accum)

            T.copy(X[bm * block_M, 0], x)
            T.copy(gamma, g)
            T.copy(beta, b)

            # pass 1: the mean
            T.copy(x, work)
            T.reduce_sum(work, mean, dim=1)
            for r in T.Parallel(block_M):
                mean[r] = mean[r] * (1.0 / C)
            # pass 2: the variance, from the centred values
            for r, c in T.Parallel(block_M, C):
                d = work[r, c] - mean[r]
                work[r, c] = d * d
            T.reduce_sum(work, rstd, dim=1)
            for r in T.Parallel(block_M):
                rstd[r] = T.rsqrt(rstd[r] * (1.0 / C) + eps)
                Mean[bm * block_M + r] = mean[r]
                Rstd[bm * block_M + r] = rstd[r]
            # normalize, scale and shift, back to the input's dtype in place
            for r, c in T.Parallel(block_M, C):
                x[r, c] = T.cast(
                    (T.cast(x[r, c], accum) - mean[r]) * rstd[r] * T.cast(g[c], accum)
                    + T.cast(b[c], accum), dtype)
            T.copy(x, Y[bm * block_M, 0])

    return layer_norm_fwd


def reference(x, gamma, beta, eps=1e-5):
    """(y, mean, rstd) in float64."""
    xf = np.asarray(x, np.float64)
    mean = xf.mean(axis=-1)
    var = ((xf - mean[:, None]) ** 2).mean(axis=-1)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (xf - mean[:, None]) * rstd[:, None] * np.asarray(gamma, np.float64) \
        + np.asarray(beta, np.float64)
    return y, mean, rstd


# (M, C, dtype): the usual hidden sizes, bf16 and fp16, and row counts no
# block divides (C = 1024 takes 4 rows a block).
GPU_CASES = [
    (4096, 1024, "float16"),
    (8192, 4096, "float16"),
    (4096, 8192, "bfloat16"),
    (16384, 4096, "bfloat16"),
    (1001, 1024, "float16"),
    (333, 768, "bfloat16"),
    (77, 8192, "float16"),
]


def gpu_kernel(M, C, dtype):
    """The kernel gpu_check launches for the GPU case (M, C, dtype): outputs
    passed in (NaN-filled), not allocated: the factory without out_idx."""
    return tilelang.jit(layer_norm.factory)(M, C, dtype=dtype)


def gpu_kernels() -> list:
    """Compiles (no torch, no GPU) every kernel gpu_check launches."""
    return [gpu_kernel(*case) for case in GPU_CASES]


def gpu_check() -> list[str]:
    """Runs the kernel on the GPU for GPU_CASES against torch in float64."""
    import torch

    tdt = {"float16": torch.float16, "bfloat16": torch.bfloat16}
    lines = []
    for M, C, dtype in GPU_CASES:
        kernel = gpu_kernel(M, C, dtype)
        x = (torch.randn(M, C, device="cuda") * 2 + 0.5).to(tdt[dtype])
        gamma = torch.randn(C, device="cuda").to(tdt[dtype])
        beta = torch.randn(C, device="cuda").to(tdt[dtype])
        y = torch.full((M, C), float("nan"), device="cuda", dtype=tdt[dtype])
        mean = torch.full((M,), float("nan"), device="cuda")
        rstd = torch.full((M,), float("nan"), device="cuda")
        kernel(x, gamma, beta, y, mean, rstd)
        xd = x.double()
        ref_mean = xd.mean(-1)
        ref_var = ((xd - ref_mean[:, None]) ** 2).mean(-1)
        ref_rstd = torch.rsqrt(ref_var + 1e-5)
        ref_y = (xd - ref_mean[:, None]) * ref_rstd[:, None] * gamma.double() + beta.double()
        # y: the output dtype's rounding (half an ulp: 2^-11 fp16, 2^-8 bf16)
        # of an fp32 computation, plus fp32 error scaled by |gamma|.
        ulp = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}[dtype]
        tol_y = ulp * ref_y.abs() + 1e-5 * (gamma.double().abs() + 1)
        checks = [("y", y.double(), ref_y, tol_y),
                  ("mean", mean.double(), ref_mean, 1e-5 * (1 + ref_mean.abs())),
                  ("rstd", rstd.double(), ref_rstd, 1e-5 * ref_rstd)]
        worst = 0.0
        for name, got, ref, tol in checks:
            err = (got - ref).abs()
            if torch.isnan(got).any() or not bool((err <= tol).all()):
                bad = int(torch.argmax((err - tol).nan_to_num(float("inf")).flatten()))
                raise AssertionError(
                    f"layer_norm {M}x{C} {dtype}: {name}.flatten()[{bad}] = "
                    f"{got.flatten()[bad].item()} but the reference is "
                    f"{ref.flatten()[bad].item()}")
            worst = max(worst, err.max().item())
        lines.append(f"PASS layer_norm {M}x{C} {dtype} max_err={worst:.3g}")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    M, C = (int(a) for a in argv) if argv else (8192, 4096)
    try:
        kernel = layer_norm(M, C)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} for {M} x {C} {default_config(C)}: "
          f"{ptx.count('ld.global.v4')} 16-byte loads, {ptx.count('st.global.v4')} 16-byte "
          f"stores, {ptx.count('shfl.sync')} warp shuffles")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
