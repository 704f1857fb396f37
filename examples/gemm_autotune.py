"""An fp16 GEMM in TileLang's eager style, autotuned over block shapes.

    python examples/gemm_autotune.py [M N K]

The kernel's body is the factory's body: `T.const` sizes come from the
tensors it is called with, `T.empty` is the output. `@tilelang.autotune`
compiles the candidates in parallel worker processes, checks each against
torch and times it on the GPU, and keeps the winner in the disk cache (a
second run does not tune again). Without a GPU it compiles every candidate
for the given sizes and stops there.
"""

import sys

import tlc as tilelang
import tlc.language as T

# A 128 x 256 f32 accumulator needs 256 threads (128 registers each). Small
# problems want narrow tiles that fill the SMs (1024^3 on the H200: 64 x 128
# x 128 with 4 stages 1.05x cuBLAS, 128 x 128 x 64 0.73x), large ones wide
# tiles (bench/gemm.md).
CANDIDATES = [
    {"block_M": bm, "block_N": bn, "block_K": bk, "stages": s, "threads": t}
    for bm, bn, bk, s, t in ((128, 128, 32, 3, 128), (128, 128, 64, 4, 128),
                             (128, 256, 32, 3, 256), (128, 256, 64, 3, 256),
                             (64, 128, 128, 4, 128), (128, 64, 128, 4, 128))
]


def reference(a, b):
    return a @ b


@tilelang.autotune(configs=CANDIDATES, warmup=10, rep=50, ref_prog=reference)
@tilelang.jit
def gemm(A, B, block_M=128, block_N=128, block_K=32, stages=3, threads=128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), "float16")
    B: T.Tensor((K, N), "float16")
    C = T.empty((M, N), "float16")
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        a_tile = T.alloc_shared((block_M, block_K), "float16")
        b_tile = T.alloc_shared((block_K, block_N), "float16")
        acc = T.alloc_fragment((block_M, block_N), "float32")
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
            T.copy(A[by * block_M, k * block_K], a_tile)
            T.copy(B[k * block_K, bx * block_N], b_tile)
            T.gemm(a_tile, b_tile, acc)
        T.copy(acc, C[by * block_M, bx * block_N])
    return C


def main() -> int:
    M, N, K = (int(v) for v in sys.argv[1:4]) if len(sys.argv) >= 4 else (2048, 2048, 2048)
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        eager = gemm.__wrapped__  # the @tilelang.jit kernel under the tuner
        for config in CANDIDATES:
            eager.compile(M=M, N=N, K=K, **config)
        print(f"compiled {len(CANDIDATES)} candidates for {M}x{N}x{K}")
        print("no GPU here: not run")
        return 0
    tilelang.testing.set_random_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = gemm(a, b)  # tunes once for these sizes, then runs the winner
    tilelang.testing.torch_assert_close(c, reference(a, b), rtol=1e-2, atol=1e-2)
    best = gemm.get_tuner_result(a, b)
    ms = tilelang.profiler.do_bench(lambda: best.kernel(a, b))
    print(f"matches a @ b; best {best.config}: {2 * M * N * K / ms / 1e9:.0f} TFLOP/s "
          f"({ms:.4f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
