"""GEMV: y = A @ x, A an N x K row-major fp16 (or bf16) matrix, x a K-vector,
y an N-vector in fp32 (or fp16/bf16), accumulated in fp32.

    python examples/families/gemv.py [N K]

A matrix-vector product reads every element of A once and does two flops per
element, so it is bound by DRAM bandwidth: the kernel's job is to keep enough
bytes of A in flight. Each block owns `block_N` consecutive rows of A and walks
along K in `block_K`-wide slabs:

* `T.Pipelined` over the slabs with `num_stages` buffers: the block's slab of
  A (block_N x block_K, 8 KiB with the defaults) and the matching piece of x
  are copied global -> shared with asynchronous 16-byte copies (cp.async),
  `num_stages - 1` slabs ahead of the one being multiplied;
* a `T.Parallel` loop multiplies the slab elementwise by x and adds the
  products into an fp32 fragment of the slab's shape, so each thread keeps
  its own running partial sums in registers and nothing is reduced per slab;
* after the last slab one `T.reduce_sum` over the columns combines the
  threads' partial sums of each row (register adds, then warp shuffles), and
  `T.copy` writes the block's rows of y (converted to y's dtype).

A slab hanging past K, and rows past N, are masked by `T.copy` (read as
zeros, never written), so N and K need not be multiples of the block; K need
not even be a multiple of 8 (rows that do not start on 16-byte boundaries are
copied with 8- or 4-byte cp.async, or element by element for odd K).

Constructs: T.Kernel, T.alloc_shared, T.alloc_fragment, T.clear, T.Pipelined,
T.copy (global -> shared, fragment -> global with conversion), T.Parallel,
T.cast, T.reduce_sum.
"""

import sys

import numpy as np

import tlc as tilelang
import tlc.language as T

SM_COUNT = 132  # H100 / H200 SXM


def default_config(N: int, K: int) -> dict:
    """Block shape for an N x K matrix: 128 threads, 3 stages, 8 rows a
    block, fewer where that would leave fewer than two blocks an SM (N = 1024:
    2 rows, 512 blocks), and slabs of 512 columns, wider for fewer rows, so
    that a slab is at least one 16-byte vector of A a thread (four with the
    defaults: 8 x 512 fp16 = 8 KiB), narrower where K is short."""
    block_N = 8
    while block_N > 1 and T.ceildiv(N, block_N) < 2 * SM_COUNT:
        block_N //= 2
    block_K = max(512, 1024 // block_N)
    while block_K > 64 and block_K >= 2 * K:
        block_K //= 2
    return {"block_N": block_N, "block_K": block_K, "threads": 128, "num_stages": 3}


@tilelang.jit(out_idx=[-1])
def gemv(N, K, block_N=None, block_K=None, threads=None, num_stages=None,
         dtype="float16", out_dtype="float32"):
    """The kernel for an N x K matrix; block sizes default to default_config."""
    config = default_config(N, K)
    block_N = block_N or config["block_N"]
    block_K = block_K or config["block_K"]
    threads = threads or config["threads"]
    num_stages = config["num_stages"] if num_stages is None else num_stages
    accum = "float32"

    @T.prim_func
    def gemv_kernel(A: T.Tensor((N, K), dtype), x: T.Tensor((K,), dtype),
                    y: T.Tensor((N,), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bn:
            a_slab = T.alloc_shared((block_N, block_K), dtype)
            x_slab = T.alloc_shared((block_K,), dtype)
            partial = T.alloc_fragment((block_N, block_K), accum)
            row_sum = T.alloc_fragment((block_N,), accum)

            T.clear(partial)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[bn * block_N, ko * block_K], a_slab)
                T.copy(x[ko * block_K], x_slab)
                for r, c in T.Parallel(block_N, block_K):
                    partial[r, c] += T.cast(a_slab[r, c], accum) * T.cast(x_slab[c], accum)
            T.reduce_sum(partial, row_sum, dim=1)
            T.copy(row_sum, y[bn * block_N])

    return gemv_kernel


def reference(A, x):
    """y = A @ x in float64."""
    return np.asarray(A, np.float64) @ np.asarray(x, np.float64)


# (N, K, dtype, out_dtype): the two LLM-decode shapes, an fp16 output, bf16,
# and sizes no block divides (K not even a multiple of 8).
GPU_CASES = [
    (8192, 8192, "float16", "float32"),
    (4096, 16384, "float16", "float32"),
    (8192, 8192, "float16", "float16"),
    (4096, 4096, "bfloat16", "float32"),
    (1000, 3000, "float16", "float32"),
    (4099, 8193, "float16", "float16"),
]


def gpu_kernel(N, K, dtype, out_dtype):
    """The kernel gpu_check launches for the GPU case (N, K, dtype, out_dtype):
    outputs passed in (NaN-filled), not allocated: the factory without out_idx."""
    return tilelang.jit(gemv.factory)(N, K, dtype=dtype, out_dtype=out_dtype)


def gpu_kernels() -> list:
    """Compiles (no torch, no GPU) every kernel gpu_check launches."""
    return [gpu_kernel(*case) for case in GPU_CASES]


def gpu_check() -> list[str]:
    """Runs the kernel on the GPU for GPU_CASES against torch in float64."""
    import torch

    tdt = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
    lines = []
    for N, K, dtype, out_dtype in GPU_CASES:
        kernel = gpu_kernel(N, K, dtype, out_dtype)
        A = torch.randn(N, K, device="cuda", dtype=tdt[dtype])
        x = torch.randn(K, device="cuda", dtype=tdt[dtype])
        y = torch.full((N,), float("nan"), device="cuda", dtype=tdt[out_dtype])
        kernel(A, x, y)
        ref = A.double() @ x.double()
        # fp32 sums of the exact fp16 x fp16 products: a few fp32 ulps of the
        # sum of |terms| (a loose bound, far below fp16's resolution); an fp16 or
        # bf16 output adds half an ulp of its own rounding.
        out_eps = {"float32": 0.0, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}[out_dtype]
        tol = 2.0 ** -20 * (A.double().abs() @ x.double().abs()) + out_eps * ref.abs()
        err = (y.double() - ref).abs()
        if not bool((err <= tol).all()) or bool(torch.isnan(y).any()):
            bad = int(torch.argmax((err - tol).nan_to_num(float("inf"))))
            raise AssertionError(
                f"gemv {N}x{K} {dtype}->{out_dtype}: y[{bad}] = {y[bad].item()} but the "
                f"reference is {ref[bad].item()} (tolerance {tol[bad].item():.3g})")
        lines.append(f"PASS gemv {N}x{K} {dtype}->{out_dtype} max_err={err.max().item():.3g}")
    return lines


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    N, K = (int(a) for a in argv) if argv else (8192, 8192)
    kernel = gemv(N, K)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name} for {N} x {K} {default_config(N, K)}: "
          f"{ptx.count('cp.async.cg.shared.global')} 16-byte cp.async instructions, "
          f"{ptx.count('shfl.sync')} warp shuffles")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
