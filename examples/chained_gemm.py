"""Two chained GEMMs, the second one's A in registers: O = cast(A @ B) @ V.

    python examples/chained_gemm.py

The pattern of attention's P @ V: the first gemm's fp32 accumulator is cast
to fp16 in registers (T.copy between fragments) and fed to the second gemm as
its A operand. With the FullRow policy for both (the default), each warp
holds whole rows, the accumulator layout of the first is the A-operand layout
of the second, and the cast stays in registers. With another policy for the
first gemm (first_policy=T.GemmWarpPolicy.Square) the layouts differ and tlc
converts through shared memory (also when the cast is a T.Parallel loop,
scale=...). On sm_90a the first gemm (64 x 64, K 64)
runs on wgmma, whose warpgroup layout is the FullRow one whatever the policy.
"""

import sys

import tlc
import tlc.language as T


@tlc.jit(out_idx=[-1])
def chained(M, N, K, D, block_M=64, threads=128, first_policy=T.GemmWarpPolicy.FullRow,
            scale=None):
    @T.prim_func
    def chain(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
              V: T.Tensor((N, D), "float16"), O: T.Tensor((M, D), "float16")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            a = T.alloc_shared((block_M, K), "float16")
            b = T.alloc_shared((K, N), "float16")
            v = T.alloc_shared((N, D), "float16")
            s = T.alloc_fragment((block_M, N), "float32")
            p = T.alloc_fragment((block_M, N), "float16")
            o = T.alloc_fragment((block_M, D), "float32")
            T.copy(A[bx * block_M, 0], a)
            T.copy(B[0, 0], b)
            T.copy(V[0, 0], v)
            T.gemm(a, b, s, clear_accum=True, policy=first_policy)
            if scale is None:
                T.copy(s, p)
            else:  # the cast in a T.Parallel that scales on the way
                for i, j in T.Parallel(block_M, N):
                    p[i, j] = s[i, j] * scale
            T.gemm(p, v, o, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(o, O[bx * block_M, 0])

    return chain


def main() -> int:
    kernel = chained(1000, 64, 64, 64)
    ptx = kernel.get_kernel_source()
    print(f"compiled {kernel.name}: {ptx.count('mma.sync')} mma.sync, "
          f"{ptx.count('wgmma.mma_async')} wgmma, {ptx.count('ldmatrix')} ldmatrix")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    a, b, v = (torch.randn(*s, device="cuda", dtype=torch.float16)
               for s in [(1000, 64), (64, 64), (64, 64)])
    ref = ((a.float() @ b.float()).half().float() @ v.float()).half()
    torch.testing.assert_close(kernel(a, b, v), ref, rtol=1e-2, atol=1e-1)
    print("matches torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
