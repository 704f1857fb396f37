"""Reductions that T.Parallel loops accumulate per thread: T.alloc_reducer.

    python examples/reducers.py

A reducer keeps, in every thread, partial results of the whole reducer
between T.fill/T.clear and T.finalize_reducer; the loops update it at any
index from any iteration (`r[i] += v`, `r[j] = T.min(r[j], v)`), and the
finalize combines the threads' partials (warp shuffles, then shared memory
across warps), after which every thread holds the result: it is read in
T.Parallel at any index and outside it as a scalar.
"""

import sys

import tlc
import tlc.language as T


def row_stats(M, N, threads=128):
    """S = row sums of A, Mx = max |A| (two reducers over one loop)."""

    @T.prim_func
    def stats(A: T.Tensor((M, N), "float16"), S: T.Tensor((M,), "float32"),
              Mx: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=threads) as _:
            a = T.alloc_fragment((M, N), "float16")
            rs = T.alloc_reducer((M,), "float32", replication="all")
            mx = T.alloc_reducer(1, "float32", op="max")
            T.copy(A, a)
            T.clear(rs)
            T.fill(mx, -T.infinity("float32"))
            for i, j in T.Parallel(M, N):
                rs[i] += a[i, j]
                mx[0] = T.max(T.abs(T.cast(a[i, j], "float32")), mx[0])
            T.finalize_reducer(rs)
            T.finalize_reducer(mx)
            T.copy(rs, S)
            if T.get_thread_binding() == 0:
                Mx[0] = mx[0]

    return stats


def rms_scale(N, D, eps=1e-6):
    """Y[n] = X[n] * rsqrt(mean(X[n]^2) + eps): the sum read outside T.Parallel
    as a scalar, then used by another loop."""

    @T.prim_func
    def rms(X: T.Tensor((N, D), "float32"), Y: T.Tensor((N, D), "float32")):
        with T.Kernel(N, threads=128) as row:
            x = T.alloc_fragment((D,), "float32")
            sq = T.alloc_reducer((1,), "float32", replication="all")
            T.copy(X[row, 0], x)
            T.fill(sq, 0.0)
            for d in T.Parallel(D):
                sq[0] += x[d] * x[d]
            T.finalize_reducer(sq)
            inv = T.rsqrt(sq[0] / D + eps)
            for d in T.Parallel(D):
                Y[row, d] = x[d] * inv

    return rms


def column_min_rounds(M, N, rounds):
    """Out[r, j] = min over rows of A[r] (one reduction per round, in a serial
    loop: filled, updated and finalized each iteration), clamped at 0.5 by the
    fill (a max/min reducer combines its fill value too)."""

    @T.prim_func
    def colmin(A: T.Tensor((rounds, M, N), "float32"), Out: T.Tensor((rounds, N), "float32")):
        with T.Kernel(1, threads=64) as _:
            a = T.alloc_shared((M, N), "float32")
            cm = T.alloc_reducer((N,), "float32", op="min")
            for r in T.serial(rounds):
                T.copy(A[r, 0, 0], a)
                T.fill(cm, 0.5)
                for i, j in T.Parallel(M, N):
                    cm[j] = T.min(cm[j], a[i, j])
                T.finalize_reducer(cm)
                for j in T.Parallel(N):
                    Out[r, j] = cm[j]

    return colmin


def count_classes(N, C):
    """H[c] = how many X equal c (an int32 sum reducer, 2-d)."""

    @T.prim_func
    def hist(X: T.Tensor((N,), "int32"), H: T.Tensor((2, C), "int32")):
        with T.Kernel(1, threads=256) as _:
            h = T.alloc_reducer((2, C), "int32")
            T.clear(h)
            for i in T.Parallel(N):
                h[i % 2, X[i] % C] += 1
            T.finalize_reducer(h)
            T.copy(h, H)

    return hist


def main() -> int:
    kernels = {"row_stats": row_stats(32, 64), "rms": rms_scale(8, 512),
               "colmin": column_min_rounds(16, 64, 3), "hist": count_classes(1024, 5)}
    compiled = {name: tlc.compile(prim) for name, prim in kernels.items()}
    shuffles = sum(k.get_kernel_source().count("shfl.sync") for k in compiled.values())
    print(f"compiled {len(compiled)} reducer kernels: {shuffles} shuffles")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    a = torch.randn(32, 64, device="cuda", dtype=torch.float16)
    s = torch.full((32,), float("nan"), device="cuda")
    mx = torch.full((1,), float("nan"), device="cuda")
    compiled["row_stats"](a, s, mx)
    torch.testing.assert_close(s, a.float().sum(1), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(mx, a.float().abs().amax().reshape(1))
    x = torch.randn(8, 512, device="cuda")
    y = torch.full_like(x, float("nan"))
    compiled["rms"](x, y)
    torch.testing.assert_close(y, x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6))
    g = torch.rand(3, 16, 64, device="cuda") * 2
    out = torch.full((3, 64), float("nan"), device="cuda")
    compiled["colmin"](g, out)
    torch.testing.assert_close(out, g.amin(1).clamp(max=0.5))
    xs = torch.arange(1024, device="cuda", dtype=torch.int32) * 7
    h = torch.full((2, 5), -1, device="cuda", dtype=torch.int32)
    compiled["hist"](xs, h)
    ref = torch.zeros(2, 5, device="cuda", dtype=torch.int32)
    ref.index_put_((torch.arange(1024, device="cuda") % 2, (xs % 5).long()),
                   torch.ones(1024, device="cuda", dtype=torch.int32), accumulate=True)
    assert torch.equal(h, ref), (h, ref)
    print("matches torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
