"""DeepSeek MLA decode with both consumer warpgroups computing scores (a seesaw schedule).

    python examples/mla_decode_seesaw.py

The same kernel as examples/mla_decode.py and examples/mla_decode_ws.py (same
arguments, same paged cache, same split-KV), with the work divided the way
FlashMLA's later Hopper kernel divides it. In mla_decode_ws.py warpgroup 0
computes every page's scores and softmax while warpgroup 1 only accumulates
its half of the output, so warpgroup 0's chain is the kernel's time. Here the
pages go in pairs (a, b):

- warpgroup 0 computes page a's 64 x 64 scores (m64n64 wgmma), its softmax
  against the running row maximum, publishes P_a and its new maximum in
  shared memory, and accumulates P_a V_a into the left 256 output columns
  (P_a from its registers);
- warpgroup 1 computes page b's scores meanwhile, waits for warpgroup 0's
  maximum, runs its softmax from there, publishes P_b and the maximum after
  b, and accumulates P_a V_a (from shared memory) and then P_b V_b (from its
  registers) into the right 256 columns;
- warpgroup 0 then rescales its columns to warpgroup 1's maximum and adds
  P_b V_b (from shared memory).

Each warpgroup does half of the tensor-core work of every pair; only the two
softmaxes wait for each other. Each warpgroup sums its own probabilities'
rows (both kept relative to the latest maximum), and the two sums meet once,
after the loop. Warpgroup 2, the producer, loads the queries and then each
page with TMA into a ring of two stages (a pair's two pages). Both consumers
read the queries, so neither may copy them in itself: nothing but the
program's barriers orders one `T.ws` body's writes before another's reads
(warpgroup 1's first gemm could read them before warpgroup 0 wrote them).

A page's probabilities are written over its rope keys (64 x 64 fp16 both,
when the page holds as many tokens as the rope has dimensions): the keys are
dead once the page's scores are computed, and a 232 KB kernel would not fit
otherwise.

Measured on an H100 (2026-12-05, bench/results/2026-12-05/session29/): batch
132, context 8192, 603-613 us = 0.86-0.87x a device copy of the same cache,
against 572-582 us = 0.91-0.92x for mla_decode_ws.py in the same runs. The
ring has two stages and a pair uses both, so the next pair's page b loads
only after both warpgroups are done with this pair's; mla_decode_ws.py frees
each page one page ahead. (Session 18's seesaw, which kept the query's rope
part in registers instead, measured 13% slower than mla_decode_ws.py.)

Barriers: `q_full` (the queries landed), `full[s]` (stage s landed),
`empty[s]` (both warpgroups are done with stage s), `p_a` / `p_b` (the
pair's probabilities and maximum are published by warpgroup 0 / 1), `sums`
(both warpgroups' row sums are in shared memory).
"""

import math
import os
import sys

import tlc
import tlc.language as T

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The online softmax step and the split-KV combine kernel, T.macros of mla_decode.py; the
# argument checks and the producer's loop, mla_decode_ws.py's.
from mla_decode import combine_chunks, online_softmax  # noqa: E402
from mla_decode_ws import check_arguments, load_pages  # noqa: E402


@tlc.jit(out_idx=[4], pass_configs={"tl.enable_fast_math": True})
def mla_decode_seesaw(batch, heads, num_pages, max_pages, kv_dim=512, rope_dim=64, block_H=64,
                      page_size=64, num_split=1, sm_scale=None, dtype="float16"):
    """q: [batch, heads, kv_dim + rope_dim], cache: [num_pages, page_size, kv_dim + rope_dim],
    block_table: [batch, max_pages] int32, seq_lens: [batch] int32 (each from 1 to
    max_pages * page_size) -> out: [batch, heads, kv_dim], as examples/mla_decode.py's
    mla_decode (sm_90a: TMA, mbarriers, wgmma, setmaxnreg)."""
    check_arguments(heads, block_H, num_split)
    width = kv_dim + rope_dim
    half = kv_dim // 2
    sm_scale = 1.0 / math.sqrt(width) if sm_scale is None else sm_scale
    scale = sm_scale * math.log2(math.e)  # exponentials in base 2
    acc = "float32"
    neg_inf = -math.inf
    block_N = page_size
    split = num_split > 1
    chunks = list(range(num_split))
    # P (block_H x block_N) over the page's rope keys (block_N x rope_dim) where they match.
    p_over_rope = block_N == rope_dim

    @T.prim_func
    def decode(q: T.Tensor([batch, heads, width], dtype),
               cache: T.Tensor([num_pages, page_size, width], dtype),
               block_table: T.Tensor([batch, max_pages], "int32"),
               seq_lens: T.Tensor([batch], "int32"),
               out: T.Tensor([batch, heads, kv_dim], dtype)):
        if split:
            o_partial = T.alloc_global([batch, heads, num_split, kv_dim], acc)
            lse = T.alloc_global([batch, heads, num_split], acc)

        with T.Kernel(num_split, heads // block_H, batch, threads=384) as (sp, hb, b):
            h0 = hb * block_H
            kv_len = seq_lens[b]
            q_l = T.alloc_shared([block_H, half], dtype)
            q_r = T.alloc_shared([block_H, half], dtype)
            q_rope = T.alloc_shared([block_H, rope_dim], dtype)
            # Stage 0 holds each pair's page a, stage 1 its page b.
            kv_l = T.alloc_shared([2, block_N, half], dtype)  # keys and values
            kv_r = T.alloc_shared([2, block_N, half], dtype)
            k_rope = T.alloc_shared([2, block_N, rope_dim], dtype)
            if p_over_rope:
                p_sh = k_rope
            else:
                p_sh = T.alloc_shared([2, block_H, block_N], dtype)
            m_sh = T.alloc_shared([2, block_H], acc)  # the maximum after page a / page b
            l_sh = T.alloc_shared([2, block_H], acc)  # each warpgroup's row sums

            q_full = T.alloc_barrier(128)
            full = T.alloc_barrier([128, 128])
            empty = T.alloc_barrier([256, 256])
            p_a = T.alloc_barrier(128)
            p_b = T.alloc_barrier(128)
            sums = T.alloc_barrier(256)

            pages = T.ceildiv(kv_len, block_N)
            per_chunk = T.ceildiv(pages, num_split)
            first = sp * per_chunk
            steps = T.max(T.min(pages - first, per_chunk), 0)
            pairs = T.ceildiv(steps, 2)

            with T.ws(2):  # the producer: TMA loads of the queries, then of each page into the ring
                T.dec_max_nreg(56)
                T.tma_copy(q[b, h0:h0 + block_H, 0:half], q_l, barrier=q_full)
                T.tma_copy(q[b, h0:h0 + block_H, half:kv_dim], q_r, barrier=q_full)
                T.tma_copy(q[b, h0:h0 + block_H, kv_dim:width], q_rope, barrier=q_full)
                T.barrier_arrive(q_full)
                load_pages(cache, block_table, kv_l, kv_r, k_rope, full, empty, b, first, steps)

            with T.ws(0):  # pages a: scores and softmax; the left output columns
                T.inc_max_nreg(224)  # 224 + 224 + 56 = 3 x 168, the registers at launch
                s, p_local, o, m, m_old, correction, l, l_block = consumer_fragments(
                    block_H, block_N, half, dtype, acc)
                T.barrier_wait(q_full, 0)
                for t in T.serial(pairs):
                    page_scores(q_l, q_r, q_rope, kv_l, kv_r, k_rope, s, 0, t,
                                (first + 2 * t) * block_N, kv_len, full, neg_inf)
                    # m: the maximum after the previous pair's page b (warpgroup 1's).
                    own_page(s, p_local, o, m, m_old, correction, l, l_block, p_sh, m_sh, 0,
                             p_a, kv_l, empty, scale)
                    if 2 * t + 1 < steps:
                        T.barrier_wait(p_b, t % 2)
                        take_maximum(m_sh, 1, m, m_old, correction, l, o, scale)
                        T.gemm(p_sh[1, :, :], kv_l[1, :, :], o)
                        T.barrier_arrive(empty[1])
                finish(o, m, l, l_sh, sums, 0, out, o_partial if split else None,
                       lse if split else None, b, h0, sp, 0, half, block_H, scale, neg_inf)

            with T.ws(1):  # pages b: scores and softmax; the right output columns
                T.inc_max_nreg(224)
                s, p_local, o, m, m_old, correction, l, l_block = consumer_fragments(
                    block_H, block_N, half, dtype, acc)
                T.barrier_wait(q_full, 0)
                for t in T.serial(pairs):
                    if 2 * t + 1 < steps:
                        page_scores(q_l, q_r, q_rope, kv_l, kv_r, k_rope, s, 1, t,
                                    (first + 2 * t + 1) * block_N, kv_len, full, neg_inf)
                    # Warpgroup 0's maximum after page a, and its probabilities.
                    T.barrier_wait(p_a, t % 2)
                    take_maximum(m_sh, 0, m, m_old, correction, l, o, scale)
                    T.gemm(p_sh[0, :, :], kv_r[0, :, :], o)
                    T.barrier_arrive(empty[0])
                    if 2 * t + 1 < steps:
                        own_page(s, p_local, o, m, m_old, correction, l, l_block, p_sh, m_sh,
                                 1, p_b, kv_r, empty, scale)
                finish(o, m, l, l_sh, sums, 1, out, o_partial if split else None,
                       lse if split else None, b, h0, sp, half, kv_dim, block_H, scale, neg_inf)

        if split:
            combine_chunks(o_partial, lse, out, batch, heads, kv_dim, chunks)

    return decode


@T.macro
def consumer_fragments(block_H, block_N, half, dtype, acc):
    """A consumer warpgroup's registers: the scores s, P (wgmma's A in registers), its 256
    output columns, the running maximum it knows (m; m_old, the one before), the rescale
    factor, its own probabilities' row sums (l) and a page's (l_block); m, l and the
    output start at -inf, 0 and 0."""
    s = T.alloc_fragment([block_H, block_N], acc)
    p_local = T.alloc_fragment([block_H, block_N], dtype)
    o = T.alloc_fragment([block_H, half], acc)
    m = T.alloc_fragment([block_H], acc)
    m_old = T.alloc_fragment([block_H], acc)
    correction = T.alloc_fragment([block_H], acc)
    l = T.alloc_fragment([block_H], acc)
    l_block = T.alloc_fragment([block_H], acc)
    T.fill(m, -math.inf)
    T.fill(l, 0)
    T.fill(o, 0)
    return s, p_local, o, m, m_old, correction, l, l_block


@T.macro
def page_scores(q_l, q_r, q_rope, kv_l, kv_r, k_rope, s, st, t, k0, kv_len, full, neg_inf):
    """The scores of the page in stage `st` of pair `t`, whose first token is `k0`: tokens
    past the sequence's end (in its last page) get -inf."""
    rows, columns = s.shape
    T.barrier_wait(full[st], t % 2)
    if k0 + columns <= kv_len:
        T.clear(s)
    else:
        for r, j in T.Parallel(rows, columns):
            s[r, j] = T.if_then_else(k0 + j < kv_len, 0, neg_inf)
    T.gemm(q_l, kv_l[st, :, :], s, transpose_B=True)
    T.gemm(q_r, kv_r[st, :, :], s, transpose_B=True)
    T.gemm(q_rope, k_rope[st, :, :], s, transpose_B=True)


@T.macro
def own_page(s, p_local, o, m, m_old, correction, l, l_block, p_sh, m_sh, w, published, kv,
             empty, scale):
    """Warpgroup w's own page of the pair (in stage w), its scores in s: the online softmax,
    P and the new maximum published for the other warpgroup (p_sh[w], m_sh[w], then an
    arrival on `published`), and P V on this warpgroup's columns (kv: its half of the
    stages) with P from registers; then the stage is released."""
    rows, columns = o.shape
    online_softmax(s, m, m_old, correction, l, l_block, scale)
    T.copy(s, p_local)
    T.copy(p_local, p_sh[w, :, :])
    T.copy(m, m_sh[w, :])
    T.barrier_arrive(published)
    for r, j in T.Parallel(rows, columns):
        o[r, j] *= correction[r]
    T.gemm(p_local, kv[w, :, :], o)
    T.barrier_arrive(empty[w])


@T.macro
def take_maximum(m_sh, w, m, m_old, correction, l, o, scale):
    """The row maximum warpgroup w published (m_sh[w, :]) becomes this one's: its sums
    l and output columns o are rescaled by 2^((m_old - m) * scale)."""
    rows, columns = o.shape
    T.copy(m, m_old)
    T.copy(m_sh[w, :], m)
    for r in T.Parallel(rows):
        correction[r] = T.exp2((m_old[r] - m[r]) * scale)
        l[r] *= correction[r]
    for r, j in T.Parallel(rows, columns):
        o[r, j] *= correction[r]


@T.macro
def finish(o, m, l, l_sh, sums, w, out, o_partial, lse, b, h0, sp, c0, c1, block_H, scale,
           neg_inf):
    """Warpgroup `w`'s end: the two warpgroups' row sums (both relative to the last
    maximum) meet in shared memory, and its columns c0:c1 of the output (or of the chunk's
    partial output, and warpgroup 0 the chunk's log-sum-exp) are written."""
    T.copy(l, l_sh[w, :])
    T.barrier_arrive(sums)
    T.barrier_wait(sums, 0)
    for r in T.Parallel(block_H):
        l[r] = l_sh[0, r] + l_sh[1, r]
    if o_partial is not None:
        for r, j in T.Parallel(block_H, c1 - c0):
            o[r, j] = T.if_then_else(l[r] > 0, o[r, j] / l[r], 0)
        T.copy(o, o_partial[b, h0:h0 + block_H, sp, c0:c1])
        if w == 0:
            for r in T.Parallel(block_H):
                lse[b, h0 + r, sp] = T.if_then_else(l[r] > 0, T.log2(l[r]) + m[r] * scale,
                                                    neg_inf)
    else:
        for r, j in T.Parallel(block_H, c1 - c0):
            o[r, j] /= l[r]
        T.copy(o, out[b, h0:h0 + block_H, c0:c1])


def main() -> int:
    kernel = mla_decode_seesaw(132, 128, T.dynamic("pages"), 128)
    ptx = kernel.get_kernel_source()
    print(f"compiled MLA decode (seesaw): {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('setmaxnreg')} setmaxnreg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
