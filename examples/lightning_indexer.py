"""DeepSeek-V3.2's lightning indexer: which earlier tokens each query token attends to.

    python examples/lightning_indexer.py

DeepSeek Sparse Attention picks, for every query token, the top-k keys it
attends to by an index score computed with small fp8 heads: each token has
`heads` index queries of `dim` values (fp8 e4m3) and each key position one
index key (fp8, with a per-position scale), and

    logits[s, n] = sum over h of relu(q[s, h] . k[n]) * weight[s, h] * k_scale[n]

for n in the query's window [starts[s], ends[s]), -inf elsewhere.

Written in TileLang's eager style: the sizes (`heads`, `dim`) come from the
tensors, the query rows of a token block are `seq * heads` (an expression of
the run-time length), and the output is allocated by the call. A block takes
`block_q` query tokens, whose `block_q * heads` index queries (128: the N of
one m64nNk32 fp8 wgmma) meet `block_n` keys per step in one gemm. The
accumulator, `block_n` x (`block_q` * `heads`), is viewed as `block_n` x
`block_q` x `heads` (T.reshape of a fragment: the same registers) so the
per-head weights apply and the heads are summed by a reduction along the last
dimension; the result, scaled per key, is written transposed (`logits[q, n]`
from a fragment indexed `[n, q]`). A second kernel in the same function puts -inf outside
each query's window.
"""

import sys

import tlc
import tlc.language as T


@tlc.jit
def indexer_logits(q, k, k_scale, weights, starts, ends, block_n: int = 128, stages: int = 2,
                   threads: int = 256, window_threads: int = 256):
    """q: [seq * heads, dim] fp8, k: [seq_kv, dim] fp8, k_scale: [seq_kv] f32,
    weights: [seq, heads] f32, starts / ends: [seq] int32 (each query's window)
    -> logits: [seq, seq_kv] f32."""
    heads, dim = T.const("heads, dim")
    seq = T.dynamic("seq")
    seq_kv = T.dynamic("seq_kv")
    block_q = 128 // heads  # query tokens per block: 128 index queries

    q: T.Tensor([seq * heads, dim], T.float8_e4m3fn)
    k: T.Tensor([seq_kv, dim], T.float8_e4m3fn)
    k_scale: T.Tensor([seq_kv], T.float32)
    weights: T.Tensor([seq, heads], T.float32)
    starts: T.Tensor([seq], T.int32)
    ends: T.Tensor([seq], T.int32)
    logits = T.empty([seq, seq_kv], T.float32)

    with T.Kernel(T.ceildiv(seq, block_q), threads=threads) as bq:
        q_s = T.alloc_shared([block_q * heads, dim], T.float8_e4m3fn)
        k_s = T.alloc_shared([block_n, dim], T.float8_e4m3fn)
        w = T.alloc_fragment([block_q, heads], T.float32)
        scale = T.alloc_fragment([block_n], T.float32)
        score = T.alloc_fragment([block_n, block_q * heads], T.float32)
        per_head = T.reshape(score, (block_n, block_q, heads))
        total = T.alloc_fragment([block_n, block_q], T.float32)

        # The union of the block's windows.
        lo = T.alloc_var(T.int32)
        hi = T.alloc_var(T.int32)
        lo = seq_kv
        hi = 0
        for t in T.serial(block_q):
            if bq * block_q + t < seq:
                lo = T.min(lo, starts[bq * block_q + t])
                hi = T.max(hi, ends[bq * block_q + t])

        T.copy(q[bq * block_q * heads, 0], q_s)
        T.copy(weights[bq * block_q, 0], w)
        for step in T.Pipelined(T.ceildiv(T.max(hi - lo, 0), block_n), num_stages=stages):
            n0 = lo + step * block_n
            T.copy(k[n0, 0], k_s)
            T.copy(k_scale[n0], scale)
            T.gemm(k_s, q_s, score, transpose_B=True, clear_accum=True)
            for n, t, h in T.Parallel(block_n, block_q, heads):
                per_head[n, t, h] = T.max(per_head[n, t, h], 0) * w[t, h]
            T.reduce_sum(per_head, total, dim=2)
            for t, n in T.Parallel(block_q, block_n):
                logits[bq * block_q + t, n0 + n] = total[n, t] * scale[n]

    # -inf outside each query's window, over the whole row.
    with T.Kernel(seq, threads=window_threads) as s:
        tx = T.thread_binding(0, window_threads, thread="threadIdx.x")
        for c in T.serial(T.ceildiv(seq_kv, window_threads)):
            n = c * window_threads + tx
            if n < seq_kv:
                if n < starts[s] or n >= ends[s]:
                    logits[s, n] = -T.infinity(T.float32)
    return logits


def reference(torch, q, k, k_scale, weights, starts, ends):
    """The same math in fp32 torch."""
    seq, heads = weights.shape
    qf = q.float().view(seq, heads, -1)
    score = torch.einsum("shd,nd->shn", qf, k.float()).relu()
    out = (score * weights[:, :, None]).sum(dim=1) * k_scale[None, :]
    n = torch.arange(k.shape[0], device=q.device)
    inside = (n[None, :] >= starts[:, None]) & (n[None, :] < ends[:, None])
    return out.masked_fill(~inside, float("-inf"))


def random_inputs(torch, seq, seq_kv, heads=32, dim=64):
    """Queries, keys (fp8, keys with a per-position scale), weights and causal-style
    windows: query s sees keys [s // 2, s // 2 + seq_kv - seq + 1)."""
    q = (torch.randn(seq * heads, dim, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    k = (torch.randn(seq_kv, dim, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    k_scale = torch.rand(seq_kv, device="cuda") + 0.5
    weights = torch.randn(seq, heads, device="cuda")
    s = torch.arange(seq, device="cuda", dtype=torch.int32)
    starts = s // 2
    ends = torch.clamp(s // 2 + seq_kv - seq + 1 + s // 3, max=seq_kv).to(torch.int32)
    return q, k, k_scale, weights, starts, ends


def main() -> int:
    kernel = indexer_logits.compile(heads=32, dim=64)
    ptx = kernel.get_kernel_source()
    print(f"compiled lightning indexer: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for seq, seq_kv in ((256, 1024), (1000, 3001)):
        args = random_inputs(torch, seq, seq_kv)
        got = indexer_logits(*args)
        torch.testing.assert_close(got, reference(torch, *args), rtol=1e-4, atol=1e-3)
    print("matches the torch reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
