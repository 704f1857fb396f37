"""FlashAttention backward: dQ, dK, dV of out = softmax(Q K^T * sm_scale) V, BHSD, fp16.

    python examples/attention_backward.py [--causal] [--seq 1024 --dim 64]

Written in TileLang's API. The forward kernel here also returns each query
row's log-sum-exp (lse, in log2 units: log2(sum_j 2^(s_ij * scale))), from
which the backward pass recomputes the probabilities instead of storing them.
With scale = sm_scale * log2(e):

1. `delta[i] = sum_d out[i, d] * dout[i, d]` (one row of dot products).
2. One block per key block, head and batch holds its K and V tiles and walks
   the query blocks that can see them, with the scores transposed (keys are
   rows, so the key block's dK and dV accumulate in registers):

       S^T  = K Q^T                 P^T = 2^(S^T * scale - lse)
       dV  += P^T dout              dP^T = V dout^T
       dS^T = P^T * (dP^T - delta)  dK += dS^T Q
       dQ  += dS K                  (atomic adds: other key blocks add to it too)

   dK (times sm_scale) and dV are written once at the end.
3. dQ = its fp32 accumulator * sm_scale, in fp16.

The fp32 dQ accumulator lives under a `T.Layout` that stores each 8 x 8 block
in the order the gemm's accumulator holds it: a warp's lane t has row t // 4,
columns 2 (t % 4) and 2 (t % 4) + 1 of the block, so the block is kept as its
even columns then its odd ones, each 8 rows x 4 column pairs, and one atomic
add of every lane lands on 32 consecutive floats (128 bytes, one line);
kernel 3 reads it back through the same layout. Causal attention skips the
query blocks before the key block and masks the diagonal ones.
"""

import argparse
import sys

import tlc
import tlc.language as T

LOG2E = 1.4426950408889634


def dq_accumulator_layout(buf):
    """Element (b, h, i, d) of the dQ accumulator at
    [b, h, i // 8, d // 8, d % 2, i % 8, (d % 8) // 2]: 8 x 8 blocks, each as its
    even columns then its odd ones, row by row, so that lane t of a warp (row
    t // 4, columns 2 (t % 4) + {0, 1} of an accumulator block) adds at offset
    t of each half (where 8 divides the sequence length and the head dim; else
    the accumulator keeps its row-major order)."""
    _, _, seq, dim = buf.shape
    if seq % 8 or dim % 8:
        return T.Layout(buf.shape, lambda b, h, i, d: [b, h, i, d])
    return T.Layout(buf.shape,
                    lambda b, h, i, d: [b, h, i // 8, d // 8, d % 2, i % 8, (d % 8) // 2])


@tlc.jit(out_idx=[3, 4], pass_configs={"tl.enable_fast_math": True})
def forward(batch, heads, seq, dim, causal=False, block_M=64, block_N=64, threads=128):
    """out and lse (log2 units) of softmax(Q K^T * sm_scale) V."""
    scale = dim ** -0.5 * LOG2E
    shape = [batch, heads, seq, dim]

    @T.prim_func
    def attention_forward(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"),
                          V: T.Tensor(shape, "float16"), Out: T.Tensor(shape, "float16"),
                          Lse: T.Tensor([batch, heads, seq], "float32")):
        with T.Kernel(T.ceildiv(seq, block_M), heads, batch, threads=threads) as (qb, h, b):
            q = T.alloc_shared([block_M, dim], "float16")
            k = T.alloc_shared([block_N, dim], "float16")
            v = T.alloc_shared([block_N, dim], "float16")
            s = T.alloc_fragment([block_M, block_N], "float32")
            p = T.alloc_fragment([block_M, block_N], "float16")
            o = T.alloc_fragment([block_M, dim], "float32")
            m = T.alloc_fragment([block_M], "float32")
            m_old = T.alloc_fragment([block_M], "float32")
            rescale = T.alloc_fragment([block_M], "float32")
            row_sum = T.alloc_fragment([block_M], "float32")
            denom = T.alloc_fragment([block_M], "float32")
            T.copy(Q[b, h, qb * block_M:(qb + 1) * block_M, :], q)
            T.fill(o, 0)
            T.fill(denom, 0)
            T.fill(m, -T.infinity("float32"))
            blocks = T.ceildiv((qb + 1) * block_M, block_N) if causal else T.ceildiv(seq, block_N)
            for kb in T.Pipelined(blocks, num_stages=2):
                T.copy(K[b, h, kb * block_N:(kb + 1) * block_N, :], k)
                T.copy(V[b, h, kb * block_N:(kb + 1) * block_N, :], v)
                T.clear(s)
                T.gemm(q, k, s, transpose_B=True)
                for i, j in T.Parallel(block_M, block_N):
                    seen = (kb * block_N + j <= qb * block_M + i) if causal else True
                    s[i, j] = T.if_then_else(seen and kb * block_N + j < seq, s[i, j] * scale,
                                             -T.infinity("float32"))
                T.copy(m, m_old)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    rescale[i] = T.exp2(m_old[i] - m[i])
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] - m[i])
                T.reduce_sum(s, row_sum, dim=1)
                for i in T.Parallel(block_M):
                    denom[i] = denom[i] * rescale[i] + row_sum[i]
                for i, d in T.Parallel(block_M, dim):
                    o[i, d] *= rescale[i]
                T.copy(s, p)
                T.gemm(p, v, o)
            for i, d in T.Parallel(block_M, dim):
                o[i, d] /= denom[i]
            T.copy(o, Out[b, h, qb * block_M, 0])
            for i in T.Parallel(block_M):
                m[i] += T.log2(denom[i])
            T.copy(m, Lse[b, h, qb * block_M])

    return attention_forward


@tlc.jit(out_idx=[2])
def delta_rows(batch, heads, seq, dim, block=64):
    """delta[b, h, i] = sum_d out * dout, in fp32."""
    shape = [batch, heads, seq, dim]

    @T.prim_func
    def attention_delta(Out: T.Tensor(shape, "float16"), dOut: T.Tensor(shape, "float16"),
                        Delta: T.Tensor([batch, heads, seq], "float32")):
        with T.Kernel(T.ceildiv(seq, block), heads, batch, threads=128) as (qb, h, b):
            o = T.alloc_fragment([block, dim], "float32")
            do = T.alloc_fragment([block, dim], "float32")
            row = T.alloc_fragment([block], "float32")
            T.copy(Out[b, h, qb * block:(qb + 1) * block, :], o)
            T.copy(dOut[b, h, qb * block:(qb + 1) * block, :], do)
            for i, d in T.Parallel(block, dim):
                o[i, d] *= do[i, d]
            T.reduce_sum(o, row, dim=1)
            T.copy(row, Delta[b, h, qb * block])

    return attention_delta


@tlc.jit(pass_configs={"tl.enable_fast_math": True})
def backward(batch, heads, seq, dim, causal=False, block_M=64, block_N=64, threads=128):
    sm_scale = dim ** -0.5
    scale = sm_scale * LOG2E
    shape = [batch, heads, seq, dim]
    chunks = list(range(dim // 64))

    @T.prim_func
    def attention_backward(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"),
                           V: T.Tensor(shape, "float16"), dOut: T.Tensor(shape, "float16"),
                           Lse: T.Tensor([batch, heads, seq], "float32"),
                           Delta: T.Tensor([batch, heads, seq], "float32"),
                           dQacc: T.Tensor(shape, "float32"), dK: T.Tensor(shape, "float16"),
                           dV: T.Tensor(shape, "float16")):
        with T.Kernel(T.ceildiv(seq, block_N), heads, batch, threads=threads) as (kb, h, b):
            T.annotate_layout({dQacc: dq_accumulator_layout(dQacc)})
            k = [T.alloc_shared([block_N, 64], "float16") for _ in chunks]
            v = [T.alloc_shared([block_N, 64], "float16") for _ in chunks]
            q = [T.alloc_shared([block_M, 64], "float16") for _ in chunks]
            do = [T.alloc_shared([block_M, 64], "float16") for _ in chunks]
            lse = T.alloc_shared([block_M], "float32")
            delta = T.alloc_shared([block_M], "float32")
            ds_t = T.alloc_shared([block_N, block_M], "float16")
            s_t = T.alloc_fragment([block_N, block_M], "float32")
            dp_t = T.alloc_fragment([block_N, block_M], "float32")
            p_t = T.alloc_fragment([block_N, block_M], "float16")
            dv = [T.alloc_fragment([block_N, 64], "float32") for _ in chunks]
            dk = [T.alloc_fragment([block_N, 64], "float32") for _ in chunks]
            dq = T.alloc_fragment([block_M, 64], "float32")
            for c in chunks:
                T.copy(K[b, h, kb * block_N:(kb + 1) * block_N, c * 64:(c + 1) * 64], k[c])
                T.copy(V[b, h, kb * block_N:(kb + 1) * block_N, c * 64:(c + 1) * 64], v[c])
                T.clear(dv[c])
                T.clear(dk[c])
            first = (kb * block_N) // block_M if causal else 0
            for qb in T.Pipelined(first, T.ceildiv(seq, block_M), num_stages=2):
                for c1 in chunks:
                    T.copy(Q[b, h, qb * block_M:(qb + 1) * block_M, c1 * 64:(c1 + 1) * 64], q[c1])
                    T.copy(dOut[b, h, qb * block_M:(qb + 1) * block_M, c1 * 64:(c1 + 1) * 64], do[c1])
                T.copy(Lse[b, h, qb * block_M:(qb + 1) * block_M], lse)
                T.copy(Delta[b, h, qb * block_M:(qb + 1) * block_M], delta)
                T.clear(s_t)
                for c2 in chunks:
                    T.gemm(k[c2], q[c2], s_t, transpose_B=True)
                for j, i in T.Parallel(block_N, block_M):
                    seen = (kb * block_N + j <= qb * block_M + i) if causal else True
                    s_t[j, i] = T.if_then_else(seen and kb * block_N + j < seq,
                                               T.exp2(s_t[j, i] * scale - lse[i]), 0)
                T.copy(s_t, p_t)
                for c3 in chunks:
                    T.gemm(p_t, do[c3], dv[c3])
                T.clear(dp_t)
                for c4 in chunks:
                    T.gemm(v[c4], do[c4], dp_t, transpose_B=True)
                for j, i in T.Parallel(block_N, block_M):
                    dp_t[j, i] = s_t[j, i] * (dp_t[j, i] - delta[i])
                T.copy(dp_t, ds_t)
                for c5 in chunks:
                    T.gemm(ds_t, q[c5], dk[c5])
                for c6 in chunks:
                    T.clear(dq)
                    T.gemm(ds_t, k[c6], dq, transpose_A=True)
                    for i, d in T.Parallel(block_M, 64):
                        if qb * block_M + i < seq:
                            T.atomic_add(dQacc[b, h, qb * block_M + i, c6 * 64 + d], dq[i, d])
            for e in chunks:
                for j, d in T.Parallel(block_N, 64):
                    dk[e][j, d] *= sm_scale
                T.copy(dk[e], dK[b, h, kb * block_N, e * 64])
                T.copy(dv[e], dV[b, h, kb * block_N, e * 64])

    return attention_backward


@tlc.jit(out_idx=[1])
def dq_from_accumulator(batch, heads, seq, dim, block=64):
    """dQ = accumulator * sm_scale in fp16, read through dq_accumulator_layout."""
    shape = [batch, heads, seq, dim]
    sm_scale = dim ** -0.5

    @T.prim_func
    def attention_dq(dQacc: T.Tensor(shape, "float32"), dQ: T.Tensor(shape, "float16")):
        with T.Kernel(T.ceildiv(seq, block), heads, batch, threads=128) as (qb, h, b):
            T.annotate_layout({dQacc: dq_accumulator_layout(dQacc)})
            acc = T.alloc_fragment([block, dim], "float32")
            T.copy(dQacc[b, h, qb * block:(qb + 1) * block, :], acc)
            for i, d in T.Parallel(block, dim):
                acc[i, d] *= sm_scale
            T.copy(acc, dQ[b, h, qb * block, 0])

    return attention_dq


def reference(q, k, v, dout, causal: bool):
    """(out, dQ, dK, dV) of softmax(Q K^T / sqrt(d)) V in float64 numpy."""
    import numpy as np

    q, k, v, dout = (x.astype(np.float64) for x in (q, k, v, dout))
    s = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    dp = dout @ v.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / np.sqrt(q.shape[-1])
    return p @ v, ds @ k, ds.swapaxes(-1, -2) @ q, p.swapaxes(-1, -2) @ dout


def interpret(batch, heads, seq, dim, causal, seed=0):
    """The four kernels in tlc's interpreter on random inputs: (out, dQ, dK, dV)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    q, k, v, dout = (rng.standard_normal((batch, heads, seq, dim)).astype(np.float16)
                     for _ in range(4))
    shape = (batch, heads, seq, dim)
    out, lse = np.zeros(shape, np.float16), np.zeros(shape[:3], np.float32)
    tlc.interpret(forward.factory(batch, heads, seq, dim, causal), q, k, v, out, lse)
    delta = np.zeros(shape[:3], np.float32)
    tlc.interpret(delta_rows.factory(batch, heads, seq, dim), out, dout, delta)
    dq_acc = np.zeros(shape, np.float32)
    dk, dv = np.zeros(shape, np.float16), np.zeros(shape, np.float16)
    tlc.interpret(backward.factory(batch, heads, seq, dim, causal), q, k, v, dout, lse, delta,
                  dq_acc, dk, dv)
    dq = np.zeros(shape, np.float16)
    tlc.interpret(dq_from_accumulator.factory(batch, heads, seq, dim), dq_acc, dq)
    return (q, k, v, dout), (out, dq, dk, dv)


def run_on_gpu(torch, batch, heads, seq, dim, causal):
    """The four kernels on the GPU beside torch's SDPA backward: max |error|
    of out, dQ, dK, dV."""
    q, k, v, dout = (torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.float16)
                     for _ in range(4))
    out, lse = forward(batch, heads, seq, dim, causal)(q, k, v)
    delta = delta_rows(batch, heads, seq, dim)(out, dout)
    dq_acc = torch.zeros(batch, heads, seq, dim, device="cuda", dtype=torch.float32)
    dk, dv = torch.empty_like(k), torch.empty_like(v)
    backward(batch, heads, seq, dim, causal)(q, k, v, dout, lse, delta, dq_acc, dk, dv)
    dq = dq_from_accumulator(batch, heads, seq, dim)(dq_acc)
    qr, kr, vr = (x.detach().clone().requires_grad_() for x in (q, k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)
    ref.backward(dout)
    return [float((a.float() - b.float()).abs().max())
            for a, b in zip((out, dq, dk, dv), (ref, qr.grad, kr.grad, vr.grad))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args(argv)
    kernels = [forward(1, 1, args.seq, args.dim, args.causal),
               delta_rows(1, 1, args.seq, args.dim),
               backward(1, 1, args.seq, args.dim, args.causal),
               dq_from_accumulator(1, 1, args.seq, args.dim)]
    print("compiled " + ", ".join(k.name for k in kernels))
    inputs, outputs = interpret(1, 2, 128, args.dim, args.causal)
    expected = reference(*inputs, args.causal)
    errors = [float(abs(o.astype("float64") - e).max()) for o, e in zip(outputs, expected)]
    ok = max(errors) < 1e-2
    print(f"interpreter (1 x 2 x 128 x {args.dim}): out, dQ, dK, dV "
          f"{'match' if ok else 'DO NOT match'} the float64 reference (max |error| "
          + ", ".join(f"{e:.1e}" for e in errors) + ")")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0 if ok else 1
    gpu = run_on_gpu(torch, 2, 4, args.seq, args.dim, args.causal)
    gpu_ok = max(gpu) < 2e-2
    print(f"GPU (2 x 4 x {args.seq} x {args.dim}): out, dQ, dK, dV "
          f"{'match' if gpu_ok else 'DO NOT match'} torch's SDPA backward (max |error| "
          + ", ".join(f"{e:.1e}" for e in gpu) + ")")
    return 0 if ok and gpu_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
