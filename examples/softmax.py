"""Row softmax in the tile language: reductions and row vectors.

    python examples/softmax.py

Each block holds BLOCK_M whole rows in registers: T.reduce_max / T.reduce_sum
combine each row inside threads, across a warp's lanes (shuffles) and across
warps (shared memory); T.Parallel reads the row results m[i], s[i].
"""

import sys

import tlc
import tlc.language as T


@tlc.jit(out_idx=[-1])
def softmax(M, N, block_M=8, threads=128, dtype="float32"):
    @T.prim_func
    def row_softmax(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), dtype)
            m = T.alloc_fragment((block_M,), "float32")
            s = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, m, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp(x[i, j] - m[i])
            T.reduce_sum(x, s, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / s[i]
            T.copy(x, Y[bx * block_M, 0])

    return row_softmax


@tlc.jit(out_idx=[-1])
def rowmax_of_product(M, N, K, block_M=64, block_N=64, block_K=32):
    """m[i] = max_j (A @ B)[i, j] per block of columns: a reduction over the
    tensor-core accumulator layout (4 lanes and 2 warps share each row)."""

    @T.prim_func
    def rowmax(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
               Out: T.Tensor((-(-N // block_N), M), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            a = T.alloc_shared((block_M, block_K), "float16")
            b = T.alloc_shared((block_K, block_N), "float16")
            c = T.alloc_fragment((block_M, block_N), "float32")
            m = T.alloc_fragment((block_M,), "float32")
            T.clear(c)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], a)
                T.copy(B[k * block_K, bx * block_N], b)
                T.gemm(a, b, c)
            T.reduce_max(c, m, dim=1)
            T.copy(m, Out[bx, by * block_M])

    return rowmax


def main() -> int:
    kernel = softmax(1000, 1024)
    print(f"compiled {kernel.name}: {kernel.get_kernel_source().count('shfl.sync')} shuffles")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    x = torch.randn(1000, 1024, device="cuda")
    torch.testing.assert_close(kernel(x), torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    print("matches torch.softmax")
    return 0


if __name__ == "__main__":
    sys.exit(main())
