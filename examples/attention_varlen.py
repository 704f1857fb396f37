"""Variable-length FlashAttention forward: sequences of different lengths, packed.

    python examples/attention_varlen.py [--causal] [--gqa]

FlashAttention's `flash_attn_varlen_func` interface: the sequences of a batch
are packed without padding, Q as `[total_q, heads, dim]` and K, V as
`[total_k, heads_kv, dim]` (tokens, heads, head dim: "THD"), and
`cu_seqlens_q` / `cu_seqlens_k` (int32, batch + 1 entries, the first 0) are
the prefix sums of the sequences' lengths: sequence b's queries are rows
`cu_seqlens_q[b]:cu_seqlens_q[b + 1]` of Q, its keys and values rows
`cu_seqlens_k[b]:cu_seqlens_k[b + 1]` of K and V. `max_seqlen_q`, an int
argument of the call, sizes the grid (it must be at least the longest
sequence's query count). For each sequence and head,

    O = softmax(Q K^T * sm_scale [+ causal mask]) V

computed as examples/attention.py computes it (online softmax in registers,
fp32 scores and accumulation, exp2 with the scale folded in, fast math).
A block owns `block_M` queries of one head of one sequence: the sequence and
the query block come from the grid; where the sequence starts and how long
it is are read from `cu_seqlens_q` / `cu_seqlens_k` when the kernel runs.
A block past its sequence's end (the grid is sized for the longest) runs no
K-block iteration and stores nothing. K and V blocks are copied from slices
that start at the sequence's run-time offset; a sequence's last, partial
block also reads the next sequence's first keys (or zeros past the tensor),
which the mask gives no weight. Query rows past a sequence's end are
computed but not stored: a full block stores its tile with one T.copy, the
last block of a sequence row by row (16-byte stores of the rows inside).

Causal masks follow FlashAttention's convention for sequences whose query and
key lengths differ: the mask is aligned to the bottom-right corner of each
sequence's attention matrix, so query i (0-based within its sequence) sees
the keys j <= i + len_k - len_q. A query that sees no key (len_q > len_k, or
len_k = 0) gets zeros, as in FlashAttention. Empty sequences (equal
consecutive offsets) are allowed; on sm_90a K and V must hold one token at
least (TMA cannot map an empty tensor: the launch says so).

`batch` is an int, or `T.dynamic("batch")`: the offsets' length is then the
size `batch_plus_1`, so one kernel serves every batch. On sm_90a the
K-block loop compiles as attention.py's does: warp-specialized, a TMA
producer warpgroup (which reads the sequence's key offset from
`cu_seqlens_k` itself) feeding wgmma consumers.
"""

import math
import sys

import tlc
import tlc.language as T


# Fast math, as in examples/attention.py: f32 denormals flush to zero, so
# T.exp2 is one MUFU.EX2.
@tlc.jit(out_idx=[6], pass_configs={"tl.enable_fast_math": True})
def attention_varlen(batch, heads, dim, causal=False, heads_kv=None, block_M=128, block_N=None,
                     num_stages=2, threads=None, sm_scale=None, dtype="float16"):
    """Q [total_q, heads, dim], K and V [total_k, heads_kv, dim], cu_seqlens_q and
    cu_seqlens_k [batch + 1] int32, max_seqlen_q (int) -> O [total_q, heads, dim].

    `total_q` and `total_k` are `T.dynamic` sizes: one kernel serves every packing.
    `heads_kv` defaults to `heads` (MHA; fewer heads dividing `heads`: GQA, each K/V
    head serving `heads // heads_kv` query heads); `block_N` to 128 keys, 64 for head
    dims over 128; `threads` to 128 per 64 rows of `block_M`; `sm_scale` to
    1 / sqrt(dim)."""
    heads_kv = heads if heads_kv is None else heads_kv
    if isinstance(batch, T.SymbolicDim):
        offsets = T.dynamic(f"{batch.name}_plus_1")
    elif isinstance(batch, int) and not isinstance(batch, bool) and batch >= 1:
        offsets = batch + 1
    else:
        raise ValueError(f"batch must be a positive int or T.dynamic(...), not {batch!r}")
    if not isinstance(heads_kv, int) or heads_kv < 1 or heads % heads_kv:
        raise ValueError(f"heads_kv ({heads_kv}) must divide heads ({heads})")
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype must be float16 or bfloat16, not {dtype!r}")
    group = heads // heads_kv
    block_N = (128 if dim <= 128 else 64) if block_N is None else block_N
    threads = 2 * block_M if threads is None else threads
    sm_scale = 1.0 / math.sqrt(dim) if sm_scale is None else sm_scale
    scale = sm_scale * math.log2(math.e)
    total_q, total_k = T.dynamic("total_q"), T.dynamic("total_k")
    acc = "float32"
    neg_inf = -math.inf

    @T.prim_func
    def attend(Q: T.Tensor([total_q, heads, dim], dtype),
               K: T.Tensor([total_k, heads_kv, dim], dtype),
               V: T.Tensor([total_k, heads_kv, dim], dtype),
               cu_seqlens_q: T.Tensor([offsets], "int32"),
               cu_seqlens_k: T.Tensor([offsets], "int32"),
               max_seqlen_q: T.int32,
               O: T.Tensor([total_q, heads, dim], dtype)):
        with T.Kernel(T.ceildiv(max_seqlen_q, block_M), heads, offsets - 1,
                      threads=threads) as (qb, h, b):
            hk = h // group  # the K/V head this query head reads
            q_start = cu_seqlens_q[b]
            q_len = cu_seqlens_q[b + 1] - q_start
            k_start = cu_seqlens_k[b]
            k_len = cu_seqlens_k[b + 1] - k_start
            q0 = qb * block_M  # the block's first query, within its sequence
            shift = k_len - q_len  # query i sees keys j <= i + shift (causal)
            q_tile = T.alloc_shared([block_M, dim], dtype)
            k_tile = T.alloc_shared([block_N, dim], dtype)
            v_tile = T.alloc_shared([block_N, dim], dtype)
            # Head dim 256: the output is staged in Q's buffer (attention.py says why).
            o_tile = T.alloc_shared([block_M, dim], dtype) if dim <= 128 else q_tile
            s = T.alloc_fragment([block_M, block_N], acc)  # scores, then probabilities
            p = T.alloc_fragment([block_M, block_N], dtype)  # probabilities, A of P V
            o = T.alloc_fragment([block_M, dim], acc)
            m = T.alloc_fragment([block_M], acc)  # running row maximum
            m_old = T.alloc_fragment([block_M], acc)
            correction = T.alloc_fragment([block_M], acc)  # 2^((m_old - m) * scale)
            l = T.alloc_fragment([block_M], acc)  # running row sum of 2^(...)
            l_block = T.alloc_fragment([block_M], acc)

            if q0 < q_len:  # a block past its sequence's end loads nothing
                T.copy(Q[q_start + q0:q_start + q0 + block_M, h, :], q_tile)
            T.fill(m, neg_inf)
            T.fill(l, 0)
            T.fill(o, 0)

            # The K blocks holding a key some query of this block sees; none for a
            # block past its sequence's end. (Not an `if` around the loop: the loop
            # stays directly in the kernel, which warp specialization needs.)
            seen = T.min(k_len, q0 + block_M + shift) if causal else k_len
            blocks = T.if_then_else(q0 < q_len, T.max(T.ceildiv(seen, block_N), 0), 0)
            for kb in T.Pipelined(blocks, num_stages=num_stages):
                k0 = kb * block_N  # within the sequence
                T.copy(K[k_start + k0:k_start + k0 + block_N, hk, :], k_tile)
                # The masks go in before Q K^T accumulates onto them; a block with no
                # key past the diagonal (causal) or the sequence's end needs none.
                if k0 + block_N <= (q0 + shift + 1 if causal else k_len):
                    T.clear(s)
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(
                            k0 + j <= q0 + i + shift if causal else k0 + j < k_len, 0, neg_inf)
                T.gemm(q_tile, k_tile, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                # Online softmax: reduce_max without clearing folds in m_old.
                T.copy(m, m_old)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    correction[i] = T.exp2((m_old[i] - m[i]) * scale)
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, l_block, dim=1)
                for i in T.Parallel(block_M):
                    l[i] = l[i] * correction[i] + l_block[i]
                for i, j in T.Parallel(block_M, dim):
                    o[i, j] *= correction[i]
                T.copy(s, p)
                T.copy(V[k_start + k0:k_start + k0 + block_N, hk, :], v_tile)
                T.gemm(p, v_tile, o, policy=T.GemmWarpPolicy.FullRow)

            # A query that sees no key has l = 0 (no iteration) or NaN (every score
            # -inf, so 2^(-inf - -inf)): its output is 0, as FlashAttention's.
            for i, j in T.Parallel(block_M, dim):
                o[i, j] = T.if_then_else(l[i] > 0, o[i, j] / l[i], 0)
            T.copy(o, o_tile)
            row = q_start + q0
            if q0 + block_M <= q_len:
                T.copy(o_tile, O[row:row + block_M, h, :])
            else:  # the sequence's last block: the rows past its end are the next one's
                for i, c in T.Parallel(block_M, dim // 8):
                    if q0 + i < q_len:
                        for v in T.vectorized(8):
                            O[row + i, h, c * 8 + v] = o_tile[i, c * 8 + v]

    return attend


def offsets_of(lengths) -> list[int]:
    """cu_seqlens for sequences of these lengths: [0, l0, l0 + l1, ...]."""
    out = [0]
    for n in lengths:
        out.append(out[-1] + n)
    return out


def reference(torch, q, k, v, cu_seqlens_q, cu_seqlens_k, causal, sm_scale=None):
    """The same attention in fp32 with torch, one sequence at a time: its queries against
    its keys, the causal mask aligned bottom-right, rows that see no key zero."""
    sm_scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else sm_scale
    group = q.shape[1] // k.shape[1]
    out = torch.zeros_like(q)
    cq, ck = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    for b in range(len(cq) - 1):
        len_q, len_k = cq[b + 1] - cq[b], ck[b + 1] - ck[b]
        if len_q == 0:
            continue
        qs = q[cq[b]:cq[b + 1]].float().transpose(0, 1)  # [heads, len_q, dim]
        ks, vs = (t[ck[b]:ck[b + 1]].float().repeat_interleave(group, 1).transpose(0, 1)
                  for t in (k, v))
        scores = qs @ ks.transpose(1, 2) * sm_scale
        if causal:  # query i sees keys j <= i + len_k - len_q
            i = torch.arange(len_q, device=q.device)[:, None]
            j = torch.arange(len_k, device=q.device)[None, :]
            scores = scores.masked_fill(j > i + (len_k - len_q), -math.inf)
        probs = scores.softmax(dim=-1).nan_to_num(0.0)  # a row with no key: zeros
        out[cq[b]:cq[b + 1]] = (probs @ vs).transpose(0, 1).to(q.dtype)
    return out


def random_inputs(torch, lengths_q, lengths_k, heads, heads_kv, dim, dtype):
    """Packed q, k, v (randn) and the int32 offsets of these lengths, on the GPU."""
    cu_q, cu_k = (torch.tensor(offsets_of(n), dtype=torch.int32, device="cuda")
                  for n in (lengths_q, lengths_k))
    q = torch.randn(sum(lengths_q), heads, dim, device="cuda", dtype=dtype)
    k, v = (torch.randn(sum(lengths_k), heads_kv, dim, device="cuda", dtype=dtype)
            for _ in range(2))
    return q, k, v, cu_q, cu_k


def main() -> int:
    causal, gqa = "--causal" in sys.argv, "--gqa" in sys.argv
    heads_kv = 8 if gqa else 32
    kernel = attention_varlen(T.dynamic("batch"), 32, 128, causal, heads_kv=heads_kv)
    ptx = kernel.get_kernel_source()
    print(f"compiled varlen attention: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('setmaxnreg')} setmaxnreg, "
          f"{ptx.count('mma.sync')} mma.sync")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    # Lengths no block divides, a single token, an empty sequence, one of 4096.
    lengths = [1000, 1, 0, 4096, 77, 300]
    q, k, v, cu_q, cu_k = random_inputs(torch, lengths, lengths, 32, heads_kv, 128,
                                        torch.float16)
    out = kernel(q, k, v, cu_q, cu_k, max(lengths))
    torch.testing.assert_close(out, reference(torch, q, k, v, cu_q, cu_k, causal),
                               rtol=1e-2, atol=1e-2)
    print("matches the per-sequence torch reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
