"""GEMM + ReLU as TileLang's documentation writes it; only the imports differ.

    python examples/gemm_relu.py [--print-ir]

Builds the tile IR (printed with --print-ir), compiles it to PTX (tensor
cores through mma.sync, cp.async pipelining), and where a GPU and torch are
present runs it and checks it against relu(a @ b).
"""

import sys

import tlc as tilelang
import tlc.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def gemm_relu(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        # Initialize Kernel Context
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            # Enable rasterization for better L2 cache locality (Optional)
            T.use_swizzle(panel_size=4, order="col")

            # Clear local accumulation
            T.clear(C_local)

            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                # Copy tile of A
                T.copy(A[by * block_M, ko * block_K], A_shared)

                # Copy tile of B
                T.copy(B[ko * block_K, bx * block_N], B_shared)

                # Perform a tile-level GEMM on the shared buffers
                T.gemm(A_shared, B_shared, C_local)

            # relu
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j], 0)

            # Copy result back to global memory
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm_relu


def main() -> int:
    prim = matmul.factory(1024, 1024, 1024, 128, 128, 32)
    module = prim.build_module()
    if "--print-ir" in sys.argv:
        print(module)
    print(f"built tile IR of '{prim.name}' ({len(str(module).splitlines())} lines)")
    kernel = matmul(1024, 1024, 1024, 128, 128, 32)
    ptx = kernel.get_kernel_source()
    print(f"compiled to PTX: {ptx.count('mma.sync')} mma.sync, "
          f"{ptx.count('cp.async.cg')} cp.async")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    c = kernel(a, b)
    ref = torch.relu(a @ b)
    torch.testing.assert_close(c, ref, rtol=1e-2, atol=1e-2)
    print("matches relu(a @ b)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
