"""FlashAttention forward: MHA and GQA, causal or not, BSHD or BHSD, any sequence length.

    python examples/attention.py [--causal] [--gqa] [--bhsd]

out = softmax(Q K^T * sm_scale [+ causal mask]) V for fp16 or bf16 Q, K, V,
with fp32 scores and accumulation. Each block owns `block_M` queries of one
head and walks the keys `block_N` at a time, keeping per query row the
running maximum m and the running denominator l of an online softmax, so the
scores never leave registers:

    S = Q K^T                          (tensor cores: K is the B operand, transposed)
    m' = max(m, rowmax(S)); c = 2^((m - m') * scale)
    P = 2^(S * scale - m' * scale);  l = l * c + rowsum(P);  O = O * c + P V

with scale = sm_scale * log2(e), so that the exponentials are exp2. P is cast
to the input dtype in registers and is the A operand of P V.

Variants, all chosen at compile time:
- `heads_kv`: K and V have `heads_kv` heads, each shared by `heads // heads_kv`
  query heads (GQA; MQA for 1); the default is `heads` (MHA).
- `causal`: query i sees keys j <= i. The loop stops at the last K block a
  block's queries can see; blocks on the diagonal are masked with -inf before
  the scores accumulate into them. A query row that a whole K block masks
  (block_N < block_M) keeps its running maximum: the first K block always has
  key 0, which every query sees, so m is finite from then on.
- `layout`: "BSHD" ([batch, seq, heads, dim], torch's usual layout for
  attention inputs) or "BHSD" ([batch, heads, seq, dim]).
- `seq_len` an int or `T.dynamic("S")`: a K block past the end is loaded as
  zeros (the copies are masked); when block_N may not divide the length, keys
  at or past `seq_len` are masked with -inf so they get no weight, and query
  rows past the end are not stored. Causal attention needs no extra mask:
  a stored query row i < seq_len only sees keys j <= i.

On sm_90a, 128 x 128 blocks with 256 threads (two consumer warpgroups) and
2 stages compile to a warp-specialized loop: a producer warpgroup loads K and
V with TMA (whole 2-d tiles of 128-byte rows: head dim 64 or more, fp16/bf16,
from tensors whose sizes after the first are static), both gemms run on
wgmma (Q K^T with K transposed, P from registers), and softmax runs on the
consumers. A dynamic sequence length puts a dynamic size after the first
dimension in both layouts, which TMA cannot map here: the loop then keeps the
cp.async pipeline (still wgmma).
"""

import math
import sys

import tlc
import tlc.language as T

LAYOUTS = ("BSHD", "BHSD")


def qkv_shapes(batch, heads, heads_kv, seq_len, dim, layout):
    """The shapes of Q (and O) and of K (and V) in `layout`."""
    if layout == "BSHD":
        return [batch, seq_len, heads, dim], [batch, seq_len, heads_kv, dim]
    return [batch, heads, seq_len, dim], [batch, heads_kv, seq_len, dim]


# Fast math, as nvcc's --use_fast_math gives FlashAttention-3: f32 denormals
# flush to zero, so T.exp2 is one MUFU.EX2 (without it, ex2.approx.f32 takes
# a denormal fix-up of three more instructions per exponential): 0.88x ->
# 0.93x SDPA at head dim 128 on the H200 (bench/attention.md).
@tlc.jit(out_idx=[3], pass_configs={"tl.enable_fast_math": True})
def attention(batch, heads, seq_len, dim, causal=False, heads_kv=None, layout="BSHD",
              block_M=None, block_N=None, num_stages=2, threads=None, sm_scale=None,
              dtype="float16", branch_masks=True, overlap=False):
    """Attention over Q, K, V in `layout`; returns O (the shape of Q).

    `seq_len` may be `T.dynamic("S")`; `block_M` defaults to 128 queries,
    192 for head dims up to 64 (three consumer warpgroups, as FlashAttention-3
    takes them: 1.04x SDPA against 0.87x for 128 at D = 64 on the H200,
    bench/results/2026-12-04/session18/); `block_N` to 128 keys, 64
    for head dims over 128 (two stages of K and V tiles fit beside Q);
    `threads` to 128 per 64 rows of `block_M` (one warpgroup each);
    `sm_scale` to 1 / sqrt(dim).
    Where K blocks are masked (causal, or a length block_N may not divide),
    a run-time branch gives the mask only to the blocks that need one
    (crossing the diagonal, or the end of the keys) and just clears the
    scores of the others (causal 0.79x -> 0.86x SDPA on the H200, d128);
    `branch_masks=False` masks every block without a branch.
    `overlap=True` runs FlashAttention-3's schedule within each warpgroup:
    iteration j issues S_j = Q K_j^T and O += P_{j-1} V_{j-1} on the tensor
    cores without waiting (`wg_wait=-1`), waits for S_j alone
    (`T.wait_wgmma(1)`) and runs its softmax while P V still runs; the loop
    runs once more than there are K blocks (a P V of zeros first, fully
    masked scores last) so that every K and V tile comes through the
    pipeline. P is cast and O rescaled at the top of the next iteration,
    before S_j is issued. On the H200 it is not faster than the default
    schedule: ptxas moves the wait for P V up to the first row-maximum
    shuffle, so the exponentials do not run beside P V
    (bench/results/2026-12-02/fa_fast_math_experiment.txt).
    """
    heads_kv = heads if heads_kv is None else heads_kv
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
    if heads_kv < 1 or heads % heads_kv:
        raise ValueError(f"heads_kv ({heads_kv}) must divide heads ({heads})")
    if dtype not in ("float16", "bfloat16"):
        raise ValueError(f"dtype must be float16 or bfloat16, not {dtype!r}")
    group = heads // heads_kv
    block_M = (192 if dim <= 64 else 128) if block_M is None else block_M
    block_N = (128 if dim <= 128 else 64) if block_N is None else block_N
    threads = 2 * block_M if threads is None else threads
    sm_scale = 1.0 / math.sqrt(dim) if sm_scale is None else sm_scale
    scale = sm_scale * math.log2(math.e)
    # Keys past the end need a mask unless block_N divides the length (a
    # causal mask already hides them from every row that is stored).
    mask_tail = not causal and not (isinstance(seq_len, int) and seq_len % block_N == 0)
    q_shape, kv_shape = qkv_shapes(batch, heads, heads_kv, seq_len, dim, layout)
    bshd = layout == "BSHD"
    acc = "float32"
    neg_inf = -math.inf

    @T.prim_func
    def attend(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype),
               V: T.Tensor(kv_shape, dtype), O: T.Tensor(q_shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (qb, h, b):
            hk = h // group  # the K/V head this query head reads
            q0 = qb * block_M
            q_tile = T.alloc_shared([block_M, dim], dtype)
            k_tile = T.alloc_shared([block_N, dim], dtype)
            v_tile = T.alloc_shared([block_N, dim], dtype)
            # Head dim 256 leaves no room for an output tile beside two stages of
            # K and V: the output is staged in Q's buffer, which the loop no
            # longer reads (at the cost of one more barrier).
            o_tile = T.alloc_shared([block_M, dim], dtype) if dim <= 128 else q_tile
            s = T.alloc_fragment([block_M, block_N], acc)  # scores, then probabilities
            p = T.alloc_fragment([block_M, block_N], dtype)  # probabilities, A of P V
            o = T.alloc_fragment([block_M, dim], acc)
            m = T.alloc_fragment([block_M], acc)  # running row maximum
            m_old = T.alloc_fragment([block_M], acc)
            correction = T.alloc_fragment([block_M], acc)  # 2^((m_old - m) * scale)
            l = T.alloc_fragment([block_M], acc)  # running row sum of 2^(...)
            l_block = T.alloc_fragment([block_M], acc)

            if bshd:
                T.copy(Q[b, q0:q0 + block_M, h, :], q_tile)
            else:
                T.copy(Q[b, h, q0:q0 + block_M, :], q_tile)
            T.fill(m, neg_inf)
            T.fill(l, 0)
            T.fill(o, 0)

            if causal:  # the last K block holding a key some query of this block sees
                blocks = T.min(T.ceildiv(seq_len, block_N), T.ceildiv(q0 + block_M, block_N))
            else:
                blocks = T.ceildiv(seq_len, block_N)
            if overlap:
                # One iteration more than there are K blocks: iteration kb computes
                # S_kb = Q K_kb^T and O += P_{kb-1} V_{kb-1}. Iteration 0 multiplies
                # P = 0 by V_0; the last loads K_{blocks-1} again and masks all of
                # its scores, so its softmax changes nothing.
                T.clear(s)
                T.fill(correction, 1)
            for kb in T.Pipelined(blocks + 1 if overlap else blocks, num_stages=num_stages):
                k0 = kb * block_N
                if overlap:
                    T.copy(s, p)  # P_{kb-1} (zeros at kb = 0)
                    kk = T.min(kb, blocks - 1) * block_N
                    kv = T.max(kb - 1, 0) * block_N
                    if bshd:
                        T.copy(K[b, kk:kk + block_N, hk, :], k_tile)
                        T.copy(V[b, kv:kv + block_N, hk, :], v_tile)
                    else:
                        T.copy(K[b, hk, kk:kk + block_N, :], k_tile)
                        T.copy(V[b, hk, kv:kv + block_N, :], v_tile)
                    limit = T.min(q0 + block_M, seq_len) if causal else seq_len
                    if branch_masks and k0 + block_N <= (q0 if causal else seq_len):
                        T.clear(s)
                    else:
                        for i, j in T.Parallel(block_M, block_N):
                            s[i, j] = T.if_then_else(
                                (q0 + i >= k0 + j if causal else True) and k0 + j < limit,
                                0, neg_inf)
                    # S_kb and P_{kb-1} V_{kb-1} both issued; the softmax of S_kb runs
                    # while P V does.
                    for i, j in T.Parallel(block_M, dim):  # O rescaled for P_{kb-1}'s maximum
                        o[i, j] *= correction[i]
                    T.gemm(q_tile, k_tile, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow,
                           wg_wait=-1)
                    T.gemm(p, v_tile, o, policy=T.GemmWarpPolicy.FullRow, wg_wait=-1)
                    T.wait_wgmma(1)
                else:
                    if bshd:
                        T.copy(K[b, k0:k0 + block_N, hk, :], k_tile)
                    else:
                        T.copy(K[b, hk, k0:k0 + block_N, :], k_tile)
                    # The masks go in before Q K^T accumulates onto them.
                    if causal or mask_tail:
                        # A block with no key past the diagonal (causal) or the end.
                        whole = branch_masks and k0 + block_N <= (q0 if causal else seq_len)
                        if whole:
                            T.clear(s)
                        else:
                            for i, j in T.Parallel(block_M, block_N):
                                s[i, j] = T.if_then_else(
                                    q0 + i >= k0 + j if causal else k0 + j < seq_len, 0, neg_inf)
                    else:
                        T.clear(s)
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

                if overlap:
                    T.wait_wgmma(0)
                else:
                    for i, j in T.Parallel(block_M, dim):
                        o[i, j] *= correction[i]
                    T.copy(s, p)
                    if bshd:
                        T.copy(V[b, k0:k0 + block_N, hk, :], v_tile)
                    else:
                        T.copy(V[b, hk, k0:k0 + block_N, :], v_tile)
                    T.gemm(p, v_tile, o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                o[i, j] /= l[i]
            T.copy(o, o_tile)
            if bshd:  # rows past seq_len are not stored (the copy is masked)
                T.copy(o_tile, O[b, q0:q0 + block_M, h, :])
            else:
                T.copy(o_tile, O[b, h, q0:q0 + block_M, :])

    return attend


def reference(torch, q, k, v, causal, layout="BSHD"):
    """torch's scaled_dot_product_attention in fp32 on tensors in `layout`."""
    if layout == "BSHD":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = (t.float().repeat_interleave(group, dim=1) for t in (k, v))
    out = torch.nn.functional.scaled_dot_product_attention(q.float(), k, v, is_causal=causal)
    return (out.transpose(1, 2) if layout == "BSHD" else out).to(q.dtype)


def main() -> int:
    causal, gqa = "--causal" in sys.argv, "--gqa" in sys.argv
    layout = "BHSD" if "--bhsd" in sys.argv else "BSHD"
    kernel = attention(8, 32, 4096, 128, causal, heads_kv=8 if gqa else 32, layout=layout)
    ptx = kernel.get_kernel_source()
    print(f"compiled attention: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('mma.sync')} mma.sync")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    # 1000 keys: no block divides them.
    batch, heads, heads_kv, seq = 2, 8, 2 if gqa else 8, 1000
    small = attention(batch, heads, seq, 128, causal, heads_kv=heads_kv, layout=layout)
    q_shape, kv_shape = qkv_shapes(batch, heads, heads_kv, seq, 128, layout)
    q = torch.randn(q_shape, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(kv_shape, device="cuda", dtype=torch.float16) for _ in range(2))
    torch.testing.assert_close(small(q, k, v), reference(torch, q, k, v, causal, layout),
                               rtol=1e-2, atol=1e-2)
    print("matches torch.nn.functional.scaled_dot_product_attention")
    return 0


if __name__ == "__main__":
    sys.exit(main())
