"""Compile the reduction checks to artifacts (no GPU needed).

    python bench/build_reduce.py OUT_DIR

Row softmax (reductions across lanes and warps, row vectors in T.Parallel),
the row max of A @ B (a reduction over the tensor-core accumulator), and row
vectors used by a loop whose layout places their rows differently (the
reduction of a narrow tile scaling a wide one): the compiler converts them,
by warp shuffles where the rows stay in their warps, else through shared memory;
reductions of a shared buffer and into one (row max and an accumulated
column sum); reductions of a vector shorter than the block (held in copies); a fragment indexed by a serial loop's index beside one of a
parallel loop's (mix_rows) or in chunks (chunked_sqsum); and T.alloc_reducer kernels
(examples/reducers.py).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import reducers  # noqa: E402
import softmax  # noqa: E402
from checks import save_checked  # noqa: E402

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402


def save(kernel, check, path):
    save_checked(kernel.artifact, check, path)


@tlc.jit(out_idx=[2])
def scale_rows_by_max(M, N, K, dtype="float32", threads=128):
    """C = B * rowmax(A): mx comes from an M x K tile, the loop runs over M x N."""

    @T.prim_func
    def scale(A: T.Tensor([M, K], dtype), B: T.Tensor([M, N], dtype),
              C: T.Tensor([M, N], dtype)):
        with T.Kernel(1, threads=threads) as _:
            a = T.alloc_fragment([M, K], dtype)
            b = T.alloc_fragment([M, N], dtype)
            mx = T.alloc_fragment([M], dtype)
            T.copy(A, a)
            T.copy(B, b)
            T.reduce_max(a, mx, dim=1)
            for i, j in T.Parallel(M, N):
                b[i, j] = b[i, j] * mx[i]
            T.copy(b, C)

    return scale


@tlc.jit(out_idx=[4])
def mix_rows(streams, hidden, threads=128):
    """Y[j, :] = sum_k M[k, j] * X[k, :] + c[j] * d: the serial loop's index k picks a row of
    M and X in a loop over (j, h), each beside one of the loop's indices (each thread holds
    every k for its elements)."""

    @T.prim_func
    def mix(M: T.Tensor((streams, streams), "float32"),
            X: T.Tensor((streams, hidden), "bfloat16"), c: T.Tensor((streams,), "float32"),
            d: T.Tensor((hidden,), "bfloat16"), Y: T.Tensor((streams, hidden), "bfloat16")):
        with T.Kernel(1, threads=threads):
            m = T.alloc_fragment((streams, streams), "float32")
            x = T.alloc_fragment((streams, hidden), "float32")
            cv = T.alloc_fragment((streams,), "float32")
            dv = T.alloc_fragment((hidden,), "float32")
            y = T.alloc_fragment((streams, hidden), "float32")
            T.copy(M, m)
            T.copy(X, x)
            T.copy(c, cv)
            T.copy(d, dv)
            for j, h in T.Parallel(streams, hidden):
                y[j, h] = cv[j] * dv[h]
                for k in T.serial(streams):
                    y[j, h] += m[k, j] * x[k, h]
            T.copy(y, Y)

    return mix


@tlc.jit(out_idx=[1])
def chunked_sqsum(M, K, threads=128):
    """S = rowsum(X^2) in 4-column chunks: x[i, kk * 4 + j] in a loop over (i, j) of 4 columns
    inside a serial loop over kk (each thread holds every chunk of its columns)."""

    @T.prim_func
    def sqsum(X: T.Tensor((M, K), "float32"), S: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=threads):
            x = T.alloc_fragment((M, K), "float32")
            part = T.alloc_fragment((M, 4), "float32")
            s = T.alloc_fragment((M,), "float32")
            T.copy(X, x)
            T.clear(part)
            for kk in T.serial(K // 4):
                for i, j in T.Parallel(M, 4):
                    part[i, j] += x[i, kk * 4 + j] * x[i, kk * 4 + j]
            T.reduce_sum(part, s, dim=1)
            T.copy(s, S)

    return sqsum


@tlc.jit(out_idx=[2])
def two_reductions(M, N1, N2):
    """S = rowsum(A) + rowsum(B): two reductions into one row vector from tiles the compiler
    lays out differently (the second reduces into a converted copy of it)."""

    @T.prim_func
    def reduce_twice(A: T.Tensor([M, N1], "float32"), B: T.Tensor([M, N2], "float32"),
                     S: T.Tensor([M], "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_fragment([M, N1], "float32")
            b = T.alloc_fragment([M, N2], "float32")
            v = T.alloc_fragment([M], "float32")
            T.copy(A, a)
            T.copy(B, b)
            T.reduce_sum(a, v, dim=1)
            T.reduce_sum(b, v, dim=1, clear=False)
            T.copy(v, S)

    return reduce_twice


@tlc.jit(out_idx=[1, 2])
def shared_reductions(M, N):
    """Mx = rowmax(A), S = 1 + colsum(A), reducing the shared tile A (the column sum
    accumulated into a shared vector that starts at 1)."""

    @T.prim_func
    def reduce(A: T.Tensor([M, N], "float32"), Mx: T.Tensor([M], "float32"),
               S: T.Tensor([N], "float32")):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_shared([M, N], "float32")
            mx = T.alloc_fragment([M], "float32")
            colsum = T.alloc_shared([N], "float32")
            T.copy(A, a)
            T.fill(colsum, 1)
            T.reduce_max(a, mx, dim=1)
            T.reduce_sum(a, colsum, dim=0, clear=False)
            T.copy(mx, Mx)
            T.copy(colsum, S)

    return reduce


@tlc.jit(out_idx=[1])
def small_softmax(N, threads=128):
    """Y = softmax(X) of one N-vector on more threads than N: each element is held by
    threads / N threads, whose copies the reductions combine once (TileLang's DSA indexer
    top-k normalizes its 64 scores so)."""

    @T.prim_func
    def softmax_vector(X: T.Tensor([N], "float32"), Y: T.Tensor([N], "float32")):
        with T.Kernel(1, threads=threads):
            x = T.alloc_fragment([N], "float32")
            mx = T.alloc_fragment([1], "float32")
            total = T.alloc_fragment([1], "float32")
            T.copy(X, x)
            T.reduce_max(x, mx, dim=-1)
            for i in T.Parallel(N):
                x[i] = T.exp(x[i] - mx[0])
            T.reduce_sum(x, total)
            for i in T.Parallel(N):
                Y[i] = x[i] / total[0]

    return softmax_vector


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for m, n, bm in [(1000, 1024, 8), (4096, 4096, 2), (333, 256, 16)]:
        save(softmax.softmax(m, n, bm), {"expect": {"Y": "torch.softmax(X, dim=1)"},
                                         "atol": 1e-6, "rtol": 1e-5, "seed": m},
             os.path.join(out, f"softmax_{m}x{n}.tlcart"))
    save(softmax.rowmax_of_product(1000, 1000, 520),
         # Columns past N = 1000 are zeros in the padded tile (A @ 0): pad with
         # zeros too, then take each 64-column block's max.
         {"expect": {"Out": "torch.nn.functional.pad(A.float() @ B.float(), (0, 24))"
                            ".reshape(1000, 16, 64).amax(dim=2).T"},
          "atol": 1e-2, "rtol": 1e-3, "seed": 5},
         os.path.join(out, "rowmax_of_product.tlcart"))
    # With one warp the conversion is by shuffles (fp32 and fp16); with 128
    # threads, whose rows change warps, through shared memory.
    for m, n, k, threads, dtype in [(64, 256, 8, 128, "float32"), (32, 64, 128, 128, "float32"),
                                    (16, 64, 32, 32, "float32"), (16, 64, 32, 32, "float16")]:
        suffix = (f"t{threads}" if threads != 128 else "") + ("_f16" if dtype != "float32" else "")
        save(scale_rows_by_max(m, n, k, dtype, threads),
             {"expect": {"C": "B * A.amax(dim=1, keepdim=True)"}, "atol": 1e-6, "rtol": 1e-6,
              "seed": m + k},
             os.path.join(out, f"scale_rows_by_max_{m}x{n}x{k}{suffix}.tlcart"))
    # T.alloc_reducer: sums and maxima at the loop's rows, a scalar read
    # outside T.Parallel, minima at per-thread columns, int counts.
    save(tlc.compile(reducers.row_stats(32, 64)),
         {"expect": {"S": "A.float().sum(1)", "Mx": "A.float().abs().amax().reshape(1)"},
          "atol": 1e-4, "rtol": 1e-5, "seed": 21},
         os.path.join(out, "reducer_row_stats_32x64.tlcart"))
    save(tlc.compile(reducers.rms_scale(8, 512)),
         {"expect": {"Y": "X * torch.rsqrt(X.pow(2).mean(1, keepdim=True) + 1e-6)"},
          "atol": 1e-5, "rtol": 1e-5, "seed": 22},
         os.path.join(out, "reducer_rms_8x512.tlcart"))
    save(tlc.compile(reducers.column_min_rounds(16, 64, 3)),
         {"expect": {"Out": "A.amin(1).clamp(max=0.5)"}, "atol": 0, "rtol": 0, "seed": 23},
         os.path.join(out, "reducer_colmin_16x64x3.tlcart"))
    save(tlc.compile(reducers.count_classes(1024, 5)),
         {"inputs": {"X": "randint(0, 1000)"},
          "expect": {"H": "torch.zeros(2, 5, dtype=torch.int32, device=X.device).index_put_("
                          "(torch.arange(1024, device=X.device) % 2, (X % 5).long()), "
                          "torch.ones(1024, dtype=torch.int32, device=X.device), "
                          "accumulate=True)"},
          "atol": 0, "rtol": 0, "seed": 24},
         os.path.join(out, "reducer_hist_1024.tlcart"))
    save(mix_rows(4, 512),
         {"expect": {"Y": "(M.T @ X.float() + c[:, None] * d.float()[None, :]).bfloat16()"},
          "atol": 2e-2, "rtol": 1e-2, "seed": 12},
         os.path.join(out, "mix_rows_4x512.tlcart"))
    save(chunked_sqsum(32, 256),
         {"expect": {"S": "(X * X).sum(dim=1)"}, "atol": 1e-3, "rtol": 1e-4, "seed": 13},
         os.path.join(out, "chunked_sqsum_32x256.tlcart"))
    save(two_reductions(64, 32, 128),
         {"expect": {"S": "A.sum(dim=1) + B.sum(dim=1)"}, "atol": 1e-4, "rtol": 1e-5,
          "seed": 14},
         os.path.join(out, "two_reductions_64.tlcart"))
    for n in (64, 32, 8):
        save(small_softmax(n), {"expect": {"Y": "torch.softmax(X, dim=0)"}, "atol": 1e-6,
                                "rtol": 1e-5, "seed": 15 + n},
             os.path.join(out, f"small_softmax_{n}.tlcart"))
    save(shared_reductions(64, 128),
         {"expect": {"Mx": "A.amax(dim=1)", "S": "1 + A.sum(dim=0)"}, "atol": 1e-4,
          "rtol": 1e-5, "seed": 11},
         os.path.join(out, "shared_reductions_64x128.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
