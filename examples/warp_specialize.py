"""Hand-written warp specialization, as TileLang writes it with T.ws and
T.alloc_barrier: the program decides which warpgroup does what.

    python examples/warp_specialize.py [--m 1024 --n 1024 --k 1024]

`producer_consumer`: warpgroup 0 loads the A and B tiles of each K step into
shared memory, warpgroup 1 multiplies them; two mbarriers pass the tiles
back and forth (`full`: the tiles of step k are in, `empty`: warpgroup 1 is
done with them), with `stages` tile buffers in a ring so that the loads of
the next steps overlap the current multiply.

On sm_90a the copies warpgroup 0 makes just before arriving at `full` are
TMA loads completing on that barrier (one thread issues them and arrives
expecting their bytes); elsewhere they are the warpgroup's own loads and
stores.

`staged_ring`: the same pipeline in TileLang's other style: stages of one
buffer named by a run-time index (`A_s[k % stages, :, :]`), one list of
barriers, the producer (warpgroup 1 here) issuing T.tma_copy loads that complete on the stage's
barrier (sm_90a only).

`pipelined_bodies`: producer_consumer written for one stage (one A and one
B tile, one barrier each way, waits for `k % 2` and `(k + 1) % 2`) inside
`T.Pipelined(..., num_stages=stages)`: the compiler gives the tiles and the
barriers `stages` copies and rewrites the waits, so it runs the ring of
producer_consumer (TileLang's "software-pipelined" warp-specialized GEMMs
are written this way).

`split_columns`: both warpgroups multiply, each into its own half of the
output tile's columns, from an A tile the whole block loads;
`split_columns_by_thread` is the same program with `if tx < 128: ... else:
...` branches on the thread index in place of T.ws.

Without T.ws, tlc specializes a T.Pipelined loop by itself on sm_90a (TMA
producer, wgmma consumers: examples/gemm.py); these programs show the
language pieces. Where a GPU is, the results are compared with torch.
"""

import argparse
import sys

import tlc
import tlc.language as T


@tlc.jit(out_idx=[-1])
def producer_consumer(M, N, K, block_M=128, block_N=128, block_K=64, stages=2,
                      dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_ring = [T.alloc_shared((block_M, block_K), dtype) for _ in range(stages)]
            B_ring = [T.alloc_shared((block_K, block_N), dtype) for _ in range(stages)]
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            # full[s]: warpgroup 0's 128 threads stored stage s; empty[s]:
            # warpgroup 1's 128 threads are done reading it.
            full = T.alloc_barrier([128] * stages)
            empty = T.alloc_barrier([128] * stages)
            steps = T.ceildiv(K, block_K)
            with T.ws(1):
                T.clear(acc)
            for k0 in T.serial(0, steps, stages):
                for s in T.unroll(stages):  # stage s of the ring: compile-time buffers
                    k = k0 + s
                    if k < steps:
                        # Round k // stages of the ring: the first round's
                        # waits on `empty` pass at once (parity 1).
                        with T.ws(0):
                            T.barrier_wait(empty[s], (k // stages + 1) % 2)
                            T.copy(A[by * block_M, k * block_K], A_ring[s])
                            T.copy(B[k * block_K, bx * block_N], B_ring[s])
                            T.barrier_arrive(full[s])
                        with T.ws(1):
                            T.barrier_wait(full[s], (k // stages) % 2)
                            T.gemm(A_ring[s], B_ring[s], acc)
                            T.barrier_arrive(empty[s])
            with T.ws(1):
                T.copy(acc, C[by * block_M, bx * block_N])

    return gemm


@tlc.jit(out_idx=[-1])
def staged_ring(M, N, K, block_M=128, block_N=128, block_K=64, stages=2, dtype="float16",
                accum_dtype="float32"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_s = T.alloc_shared((stages, block_M, block_K), dtype)
            B_s = T.alloc_shared((stages, block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            # bars[s]: stage s is loaded; bars[stages + s]: stage s is consumed.
            bars = T.alloc_barrier([128] * (2 * stages))
            # Two warpgroups: each may use 255 registers a thread from the start
            # (T.dec_max_nreg / T.inc_max_nreg move registers in blocks of three
            # or more: examples/mla_decode_ws.py).
            with T.ws(0):
                T.clear(acc)
            for k in range(T.ceildiv(K, block_K)):
                s = k % stages
                with T.ws(1):  # the producer
                    T.mbarrier_wait_parity(bars[stages + s], (k // stages + 1) % 2)
                    T.tma_copy(A[by * block_M, k * block_K], A_s[s, :, :], barrier=bars[s])
                    T.tma_copy(B[k * block_K, bx * block_N], B_s[s, :, :], barrier=bars[s])
                    T.mbarrier_arrive(bars[s])
                with T.ws(0):  # the consumer
                    T.mbarrier_wait_parity(bars[s], (k // stages) % 2)
                    T.gemm(A_s[s, :, :], B_s[s, :, :], acc)
                    T.mbarrier_arrive(bars[stages + s])
            with T.ws(0):
                T.copy(acc, C[by * block_M, bx * block_N])

    return gemm


@tlc.jit(out_idx=[-1])
def pipelined_bodies(M, N, K, block_M=128, block_N=128, block_K=64, stages=2,
                     dtype="float16", accum_dtype="float32"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_tile = T.alloc_shared((block_M, block_K), dtype)
            B_tile = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            loaded = T.alloc_barrier(128)  # warpgroup 0 stored the tiles of step k
            consumed = T.alloc_barrier(128)  # warpgroup 1 is done with them
            with T.ws(1):
                T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                with T.ws(0):
                    T.barrier_wait(consumed, (k + 1) % 2)  # passes at once for k = 0
                    T.copy(A[by * block_M, k * block_K], A_tile)
                    T.copy(B[k * block_K, bx * block_N], B_tile)
                    T.barrier_arrive(loaded)
                with T.ws(1):
                    T.barrier_wait(loaded, k % 2)
                    T.gemm(A_tile, B_tile, acc)
                    T.barrier_arrive(consumed)
            with T.ws(1):
                T.copy(acc, C[by * block_M, bx * block_N])

    return gemm


@tlc.jit(out_idx=[-1])
def split_columns(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16",
                  accum_dtype="float32"):
    half = block_N // 2

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_left = T.alloc_shared((block_K, half), dtype)
            B_right = T.alloc_shared((block_K, half), dtype)
            left = T.alloc_fragment((block_M, half), accum_dtype)
            right = T.alloc_fragment((block_M, half), accum_dtype)
            with T.ws(0):
                T.clear(left)
            with T.ws(1):
                T.clear(right)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=0):
                T.copy(A[by * block_M, k * block_K], A_shared)  # the whole block
                with T.ws(0):
                    T.copy(B[k * block_K, bx * block_N], B_left)
                    T.gemm(A_shared, B_left, left)
                with T.ws(1):
                    T.copy(B[k * block_K, bx * block_N + half], B_right)
                    T.gemm(A_shared, B_right, right)
            with T.ws(0):
                T.copy(left, C[by * block_M, bx * block_N])
            with T.ws(1):
                T.copy(right, C[by * block_M, bx * block_N + half])

    return gemm


@tlc.jit(out_idx=[-1])
def split_columns_by_thread(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16",
                            accum_dtype="float32"):
    """split_columns as TileLang's hand-specialized kernels write it: branches on the
    thread index, each a whole warpgroup (the compiler builds each as that warpgroup's
    T.ws body)."""
    half = block_N // 2

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_half = T.alloc_shared((block_K, half), dtype)
            B_other = T.alloc_shared((block_K, half), dtype)
            acc = T.alloc_fragment((block_M, half), accum_dtype)
            acc_other = T.alloc_fragment((block_M, half), accum_dtype)
            tx = T.get_thread_binding()
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=0):
                T.copy(A[by * block_M, k * block_K], A_shared)  # the whole block
                if tx < 128:
                    if k == 0:
                        T.clear(acc)
                    T.copy(B[k * block_K, bx * block_N], B_half)
                    T.gemm(A_shared, B_half, acc)
                else:
                    if k == 0:
                        T.clear(acc_other)
                    T.copy(B[k * block_K, bx * block_N + half], B_other)
                    T.gemm(A_shared, B_other, acc_other)
            if tx < 128:
                T.copy(acc, C[by * block_M, bx * block_N])
            elif tx >= 128:
                T.copy(acc_other, C[by * block_M, bx * block_N + half])

    return gemm


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--m", type=int, default=1024)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--k", type=int, default=1024)
    args = p.parse_args(argv)
    kernels = {"producer_consumer": producer_consumer(args.m, args.n, args.k),
               "staged_ring": staged_ring(args.m, args.n, args.k),
               "pipelined_bodies": pipelined_bodies(args.m, args.n, args.k),
               "split_columns": split_columns(args.m, args.n, args.k),
               "split_columns_by_thread": split_columns_by_thread(args.m, args.n, args.k)}
    sizes = ", ".join(f"{name} {len(k.get_kernel_source())} bytes" for name, k in kernels.items())
    print(f"compiled {len(kernels)} programs to PTX: {sizes}")
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("no GPU here: not run")
        return 0
    a = torch.randn(args.m, args.k, device="cuda", dtype=torch.float16)
    b = torch.randn(args.k, args.n, device="cuda", dtype=torch.float16)
    ref = (a.float() @ b.float()).half()
    for name, kernel in kernels.items():
        torch.testing.assert_close(kernel(a, b), ref, rtol=1e-2, atol=1e-2)
        print(f"{name}: matches torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
