"""DeepSeek MLA decode: one new query token per sequence against a latent KV cache.

    python examples/mla_decode.py

Multi-head latent attention keeps one compressed KV vector per token, shared
by every head: `kv_dim` (512) latent values, which serve as both key and
value, then `rope_dim` (64) rotary-embedded key values. A query head is the
same split. For each sequence b and head h:

    scores[j] = q[b, h, :512] . cache[b, j, :512] + q[b, h, 512:] . cache[b, j, 512:]
    out[b, h] = softmax(scores * sm_scale) @ cache[b, :, :512]

Each block takes `block_H` heads of one sequence (64: an m64 row block) and
walks the cache `block_N` tokens at a time with an online softmax, like
FlashAttention. Its two warpgroups split every gemm by columns
(`GemmWarpPolicy.FullCol`), and the compiler divides the work as FlashMLA
does (tile-divide-warpgroup-roles, sm_90a): split by columns, the 64 x 64
scores would give each warpgroup 32 columns (m64n32 wgmmas, each reading the
query tile again), so warpgroup 0 computes them whole, with the softmax,
publishes P and the rows' rescale factors in shared memory, and accumulates
the left 256 columns of the 64 x 512 output with P from its registers;
warpgroup 1 accumulates the right 256 (128 fp32 registers a thread each; the
whole 512 columns in one warpgroup would spill), one page behind. A TMA
producer warpgroup loads the pages into a ring under mbarriers. None of that
is written below: examples/mla_decode_ws.py writes the same kernel out by
hand (the two compile to the same instructions but for a few integer
conversions and loads of the page table).

The cache is paged, as inference engines keep it (vLLM, SGLang, FlashMLA's
interface): `cache[num_pages, page_size, 576]`, sequence b's token t in page
`block_table[b, t // page_size]` at row `t % page_size`, and `seq_lens[b]`
tokens in sequence b. Each step copies one page (`block_N = page_size`):
the copy's start is read from the table at run time, by the producer
warpgroup. Tokens past a sequence's length (in its last page) are masked
with -inf. A contiguous cache is the table `arange(pages).view(batch, -1)`.

With `num_split` > 1 (FlashDecoding) each sequence's pages are cut into that
many chunks, a block each, which write their normalized outputs and
log-sum-exps to global scratch (`T.alloc_global`); a second `T.Kernel`
combines them. One call launches both.
"""

import math
import sys

import tlc
import tlc.language as T


# Fast math (f32 denormals flushed: T.exp2 is one MUFU.EX2), as nvcc's
# --use_fast_math gives FlashMLA: B=132 ctx 8192 726 -> 706 us on the H200.
@tlc.jit(out_idx=[4], pass_configs={"tl.enable_fast_math": True})
def mla_decode(batch, heads, num_pages, max_pages, kv_dim=512, rope_dim=64, block_H=64,
               page_size=64, num_split=1, num_stages=2, threads=256, sm_scale=None,
               dtype="float16"):
    """q: [batch, heads, kv_dim + rope_dim], cache: [num_pages, page_size, kv_dim + rope_dim],
    block_table: [batch, max_pages] int32, seq_lens: [batch] int32 (each from 1 to
    max_pages * page_size) -> out: [batch, heads, kv_dim]. `num_pages` and `max_pages` may
    be `T.dynamic`; `sm_scale` defaults to 1 / sqrt(kv_dim + rope_dim).

    `num_split` > 1 splits each sequence's pages into that many chunks, one block each
    (FlashDecoding: a small batch still fills the GPU); each writes its chunk's output and
    log-sum-exp to global scratch, and a second kernel combines the chunks."""
    if heads % block_H:
        raise ValueError(f"block_H ({block_H}) must divide heads ({heads})")
    if num_split < 1:
        raise ValueError(f"num_split must be at least 1, not {num_split}")
    width = kv_dim + rope_dim
    sm_scale = 1.0 / math.sqrt(width) if sm_scale is None else sm_scale
    scale = sm_scale * math.log2(math.e)  # exponentials in base 2
    acc = "float32"
    neg_inf = -math.inf
    block_N = page_size
    split = num_split > 1
    chunks = list(range(num_split))  # a Python list: the combine's loops over it unroll

    @T.prim_func
    def decode(q: T.Tensor([batch, heads, width], dtype),
               cache: T.Tensor([num_pages, page_size, width], dtype),
               block_table: T.Tensor([batch, max_pages], "int32"),
               seq_lens: T.Tensor([batch], "int32"),
               out: T.Tensor([batch, heads, kv_dim], dtype)):
        if split:  # each chunk's output (normalized) and log2-sum-exp of its scaled scores
            o_partial = T.alloc_global([batch, heads, num_split, kv_dim], acc)
            lse = T.alloc_global([batch, heads, num_split], acc)

        with T.Kernel(num_split, heads // block_H, batch, threads=threads) as (sp, hb, b):
            h0 = hb * block_H
            kv_len = seq_lens[b]
            q_latent = T.alloc_shared([block_H, kv_dim], dtype)
            q_rope = T.alloc_shared([block_H, rope_dim], dtype)
            kv = T.alloc_shared([block_N, kv_dim], dtype)  # keys and values
            k_rope = T.alloc_shared([block_N, rope_dim], dtype)
            p_shared = T.alloc_shared([block_H, block_N], dtype)
            s = T.alloc_fragment([block_H, block_N], acc)
            o = T.alloc_fragment([block_H, kv_dim], acc)
            m = T.alloc_fragment([block_H], acc)  # running row maximum
            m_old = T.alloc_fragment([block_H], acc)
            correction = T.alloc_fragment([block_H], acc)
            l = T.alloc_fragment([block_H], acc)  # running row sum
            l_block = T.alloc_fragment([block_H], acc)

            T.copy(q[b, h0:h0 + block_H, 0:kv_dim], q_latent)
            T.copy(q[b, h0:h0 + block_H, kv_dim:width], q_rope)
            T.fill(m, neg_inf)
            T.fill(l, 0)
            T.fill(o, 0)

            # This block's pages: chunk sp of the sequence's, all of them unsplit.
            pages = T.ceildiv(kv_len, block_N)
            per_chunk = T.ceildiv(pages, num_split)
            first = sp * per_chunk
            for i in T.Pipelined(T.max(T.min(pages - first, per_chunk), 0),
                                 num_stages=num_stages):
                kb = first + i
                k0 = kb * block_N
                page = block_table[b, kb]
                T.copy(cache[page, 0:block_N, 0:kv_dim], kv)
                T.copy(cache[page, 0:block_N, kv_dim:width], k_rope)
                if k0 + block_N <= kv_len:
                    T.clear(s)
                else:  # the sequence's last page: its rows past the end get no weight
                    for i, j in T.Parallel(block_H, block_N):
                        s[i, j] = T.if_then_else(k0 + j < kv_len, 0, neg_inf)
                T.gemm(q_latent, kv, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.gemm(q_rope, k_rope, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)

                online_softmax(s, m, m_old, correction, l, l_block, scale)
                for i, j in T.Parallel(block_H, kv_dim):
                    o[i, j] *= correction[i]
                T.copy(s, p_shared)
                T.gemm(p_shared, kv, o, policy=T.GemmWarpPolicy.FullCol)

            if split:  # a chunk past the sequence's pages has l = 0: no weight
                for i, j in T.Parallel(block_H, kv_dim):
                    o[i, j] = T.if_then_else(l[i] > 0, o[i, j] / l[i], 0)
                T.copy(o, o_partial[b, h0:h0 + block_H, sp, :])
                for i in T.Parallel(block_H):
                    lse[b, h0 + i, sp] = T.if_then_else(l[i] > 0, T.log2(l[i]) + m[i] * scale,
                                                        neg_inf)
            else:  # staged through shared memory (the bytes of Q, no longer read)
                o_shared = T.alloc_shared([block_H, kv_dim], dtype)
                for i, j in T.Parallel(block_H, kv_dim):
                    o[i, j] /= l[i]
                T.copy(o, o_shared)
                T.copy(o_shared, out[b, h0:h0 + block_H, :])

        if split:
            combine_chunks(o_partial, lse, out, batch, heads, kv_dim, chunks)

    return decode


@T.macro
def online_softmax(s, m, m_old, correction, l, l_block, scale):
    """One block's step of the online softmax over the rows of the scores `s`
    (examples/mla_decode_ws.py's too): the running row maximum m (m_old, the
    previous), `correction` = 2^((m_old - m) * scale) for what was summed before,
    s = 2^((s - m) * scale) in place, and the running row sum l."""
    rows, columns = s.shape
    T.copy(m, m_old)
    T.reduce_max(s, m, dim=1, clear=False)
    for i in T.Parallel(rows):
        correction[i] = T.exp2((m_old[i] - m[i]) * scale)
    for i, j in T.Parallel(rows, columns):
        s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
    T.reduce_sum(s, l_block, dim=1)
    for i in T.Parallel(rows):
        l[i] = l[i] * correction[i] + l_block[i]


@T.macro
def combine_chunks(o_partial, lse, out, batch, heads, kv_dim, chunks):
    """The split-KV combine, a kernel of its own (examples/mla_decode_ws.py's too):
    out = sum over the chunks c of 2^(lse_c - max lse) o_c / the sum of those weights.
    `chunks` is a Python list of the chunk indices: the loops over it unroll."""
    with T.Kernel(heads, batch, threads=128) as (h, b):
        for j in T.Parallel(kv_dim):
            top = lse[b, h, 0]
            for c in chunks[1:]:
                top = T.max(top, lse[b, h, c])
            total = 0.0
            value = 0.0
            for c in chunks:
                weight = T.exp2(lse[b, h, c] - top)
                total = total + weight
                value = value + weight * o_partial[b, h, c, j]
            out[b, h, j] = value / total


def reference(torch, q, cache, block_table, seq_lens, kv_dim=512, sm_scale=None):
    """The same math in eager torch, fp32, one sequence at a time: its tokens gathered from
    the pages its table names, softmax(q tokens^T * scale) tokens[:, :kv_dim]."""
    width = q.shape[-1]
    sm_scale = 1.0 / math.sqrt(width) if sm_scale is None else sm_scale
    page_size = cache.shape[1]
    out = torch.empty(q.shape[0], q.shape[1], kv_dim, device=q.device, dtype=q.dtype)
    for b, n in enumerate(seq_lens.tolist()):
        pages = block_table[b, :(n + page_size - 1) // page_size].long()
        tokens = cache[pages].reshape(-1, width)[:n].float()
        p = (q[b].float() @ tokens.T * sm_scale).softmax(dim=-1)
        out[b] = (p @ tokens[:, :kv_dim]).to(q.dtype)
    return out


def random_inputs(torch, batch, heads, seq_lens, page_size=64, width=576, shuffle=True):
    """q, a cache whose pages hold every sequence's tokens (in shuffled order), the block
    table (padded with page 0) and the lengths, on the GPU."""
    pages_of = [(n + page_size - 1) // page_size for n in seq_lens]
    total, most = sum(pages_of), max(pages_of)
    order = torch.randperm(total) if shuffle else torch.arange(total)
    table = torch.zeros(batch, most, dtype=torch.int32)
    at = 0
    for b, n in enumerate(pages_of):
        table[b, :n] = order[at:at + n].to(torch.int32)
        at += n
    q = torch.randn(batch, heads, width, device="cuda", dtype=torch.float16)
    cache = torch.randn(total, page_size, width, device="cuda", dtype=torch.float16)
    lens = torch.tensor(seq_lens, dtype=torch.int32, device="cuda")
    return q, cache, table.cuda(), lens


def main() -> int:
    kernel = mla_decode(132, 128, T.dynamic("pages"), 128)
    ptx = kernel.get_kernel_source()
    print(f"compiled MLA decode: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('setmaxnreg')} setmaxnreg")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    lens = [1000, 64, 4096, 77]  # no page divides 1000 or 77
    q, cache, table, seq_lens = random_inputs(torch, len(lens), 128, lens)
    small = mla_decode(len(lens), 128, T.dynamic("pages"), table.shape[1])
    torch.testing.assert_close(small(q, cache, table, seq_lens),
                               reference(torch, q, cache, table, seq_lens), rtol=1e-2, atol=1e-2)
    print("matches the torch reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
