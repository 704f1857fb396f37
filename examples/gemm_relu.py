"""relu(A @ B) in one kernel: the ReLU is applied to the accumulator while it
is still in registers, so C is written once, already rectified.

    python examples/gemm_relu.py [--print-ir]

A tlc program in TileLang's API (`import tlc as tilelang` is the only change
a TileLang user makes). It prints the size of its tile IR (the IR itself with
--print-ir), compiles it to PTX for the default target (sm_90a: a TMA
producer warpgroup and one wgmma warpgroup holding the block's two m64 row
blocks; sm_80: mma.sync fed by cp.async), and on a machine with a GPU and
torch runs it on random fp16 matrices against torch.relu(a @ b).
"""

import sys

import tlc as tilelang
import tlc.language as T

SIZE = (1024, 1024, 1024)  # M, N, K of the demonstration
TILING = (128, 128, 32)  # rows and columns of C per block, K per pipeline stage


@tilelang.jit(out_idx=[-1])
def relu_matmul(M, N, K, tile_m, tile_n, tile_k, stages=3, dtype="float16"):
    """The kernel for one problem size and tiling: A is M x K, B is K x N,
    both `dtype`; C = relu(A @ B) is returned (out_idx) in `dtype`, summed in
    float32."""
    k_steps = T.ceildiv(K, tile_k)

    @T.prim_func
    def gemm_relu(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
                  C: T.Tensor((M, N), dtype)):
        # One block per tile of C: blockIdx.x walks the columns, blockIdx.y the rows.
        with T.Kernel(T.ceildiv(N, tile_n), T.ceildiv(M, tile_m), threads=128) as (tn, tm):
            a_tile = T.alloc_shared((tile_m, tile_k), dtype)
            b_tile = T.alloc_shared((tile_k, tile_n), dtype)
            acc = T.alloc_fragment((tile_m, tile_n), "float32")
            # Launch order: bands four tile-columns wide, walked down the rows,
            # so the blocks in flight share a few tiles of A and B in L2.
            T.use_swizzle(panel_size=4, order="col")
            T.fill(acc, 0.0)
            # `stages` K steps are loaded ahead of the gemm consuming them.
            for step in T.Pipelined(k_steps, num_stages=stages):
                T.copy(A[tm * tile_m, step * tile_k], a_tile)
                T.copy(B[step * tile_k, tn * tile_n], b_tile)
                T.gemm(a_tile, b_tile, acc)
            # The epilogue: negative sums become zero, in place, before the store
            # (which converts them to `dtype` and masks rows and columns past C).
            for r, c in T.Parallel(tile_m, tile_n):
                acc[r, c] = T.max(acc[r, c], 0.0)
            T.copy(acc, C[tm * tile_m, tn * tile_n])

    return gemm_relu


def report_compilation(print_ir: bool):
    """Builds and compiles the demonstration kernel; returns it."""
    program = relu_matmul.factory(*SIZE, *TILING)
    module = program.build_module()
    if print_ir:
        print(module)
    print(f"built tile IR of '{program.name}' ({len(str(module).splitlines())} lines)")
    kernel = relu_matmul(*SIZE, *TILING)
    ptx = kernel.get_kernel_source()
    # On sm_90a: a TMA producer warpgroup and one wgmma warpgroup (two m64
    # row blocks of 128 columns, K 32 in two slices); on sm_80 mma.sync.
    print(f"compiled to PTX: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('mma.sync')} mma.sync, "
          f"{ptx.count('cp.async.cg')} cp.async")
    return kernel


def check_on_gpu(kernel) -> None:
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return
    M, N, K = SIZE
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=gen)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16, generator=gen)
    c = kernel(a, b)
    torch.testing.assert_close(c, torch.relu(a @ b), rtol=1e-2, atol=1e-2)
    print("matches relu(a @ b)")


if __name__ == "__main__":
    check_on_gpu(report_compilation("--print-ir" in sys.argv))
