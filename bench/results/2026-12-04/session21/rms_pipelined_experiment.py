import sys, tlc
import tlc.language as T
LOG2E = 1.4426950408889634

@tlc.jit(out_idx=[-1])
def rms_p(N, C, block_M, block_C, blocks, threads=128, stages=2, eps=1e-6):
    chunks = C // block_C
    tiles = (N + block_M - 1) // block_M
    @T.prim_func
    def k(X: T.Tensor((N, C), "float16"), G: T.Tensor((C,), "float16"), Y: T.Tensor((N, C), "float16")):
        with T.Kernel(blocks, threads=threads) as bx:
            x_shared = T.alloc_shared((block_M, C), "float16")
            xc = T.alloc_fragment((block_M, block_C), "float16")
            sq = T.alloc_fragment((block_M, block_C), "float32")
            g = T.alloc_fragment((block_C,), "float16")
            scale = T.alloc_fragment((block_M,), "float32")
            for t in T.Pipelined(T.ceildiv(tiles - bx, blocks), num_stages=stages):
                row = (bx + t * blocks) * block_M
                T.copy(X[row, 0], x_shared)
                T.clear(scale)
                for kk in T.unroll(chunks):
                    T.copy(x_shared[0, kk * block_C], xc)
                    T.copy(xc, sq)
                    for i, j in T.Parallel(block_M, block_C):
                        sq[i, j] = sq[i, j] * sq[i, j]
                    T.reduce_sum(sq, scale, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scale[i] = T.rsqrt(scale[i] / C + eps)
                for kk in T.unroll(chunks):
                    T.copy(x_shared[0, kk * block_C], xc)
                    T.copy(G[kk * block_C], g)
                    for i, j in T.Parallel(block_M, block_C):
                        v = T.cast(xc[i, j], "float32") * scale[i] * T.cast(g[j], "float32")
                        e = T.exp2(v * -LOG2E)
                        xc[i, j] = T.cast(v * T.rsqrt((1.0 + e) * (1.0 + e)), "float16")
                    T.copy(xc, Y[row, kk * block_C])
    return k

if __name__ == "__main__":
    kern = rms_p(65536, 160, 32, 32, 264)
    src = kern.get_kernel_source()
    print(len(src), src.count("cp.async.bulk.tensor"), src.count("cp.async.cg"), src.count("mbarrier"), src.count("setmaxnreg"))
