"""DeepSeek MLA decode with the warpgroups' roles written out (FlashMLA's schedule).

    python examples/mla_decode_ws.py

The same kernel as examples/mla_decode.py (same arguments, same paged cache,
same split-KV), written the way TileLang's hand-specialized MLA examples and
FlashMLA lay out the work, with `T.ws` bodies and barriers of the program's
own (`T.alloc_barrier`) instead of one `T.Pipelined` loop the compiler
specializes. Since 2026-12-05 the compiler derives this division from
examples/mla_decode.py itself (tile-divide-warpgroup-roles): the two compile
to the same instructions but for a few integer conversions and page-table
loads. Written out, the roles are:

- warpgroup 2, the producer, loads each page's latent and rope rows with TMA
  (`T.tma_copy`) into a ring of `num_stages` stages;
- warpgroup 0 computes all 64 x 64 scores of a page (one m64n64 wgmma per
  K step, so shared memory feeds the tensor cores at their rate; split by
  columns between two warpgroups, every K step would read the 64 x 16 query
  slice twice for half as much work), the online softmax, publishes the
  probabilities and the rows' rescale factors in shared memory, and
  accumulates the left 256 output columns with P from its registers;
- warpgroup 1 rescales and accumulates the right 256 columns from the
  published probabilities, while warpgroup 0 already computes the next
  page's scores.

Barriers: `full[s]` (the producer's TMA of stage s landed), `empty[s]` (both
consumers are done with stage s), `p_ready` / `p_free` (the probabilities of
the current page are published / warpgroup 1 is done with them), `l_ready`
(warpgroup 0's final row sums are in shared memory).

H200, fp16, 128 heads, batch 132, context 8192 (bench/results/2026-12-04/):
580-604 us over four leases, 0.77-0.82x a device copy of the same 1.2 GB
measured in the same run (2.2 TB/s; smaller copies run at 4.2 TB/s),
502-519 TFLOP/s, against 655-682 us for examples/mla_decode.py as it then
compiled (each gemm split by columns; 2026-12-05, divided: 597-620 us, this
program 599-617 us in the same runs, bench/results/2026-12-05/session30/). Nsight
Compute: about 3270 SM cycles a page at any clock, bound on chip (the
scores' m64n64 wgmma fed from shared memory), not by DRAM.
"""

import math
import os
import sys

import tlc
import tlc.language as T

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The online softmax step and the split-KV combine kernel, T.macros of mla_decode.py.
from mla_decode import combine_chunks, online_softmax  # noqa: E402


@tlc.jit(out_idx=[4], pass_configs={"tl.enable_fast_math": True})
def mla_decode_ws(batch, heads, num_pages, max_pages, kv_dim=512, rope_dim=64, block_H=64,
                  page_size=64, num_split=1, num_stages=2, sm_scale=None, dtype="float16",
                  multicast=False):
    """q: [batch, heads, kv_dim + rope_dim], cache: [num_pages, page_size, kv_dim + rope_dim],
    block_table: [batch, max_pages] int32, seq_lens: [batch] int32 (each from 1 to
    max_pages * page_size) -> out: [batch, heads, kv_dim], as examples/mla_decode.py's
    mla_decode (sm_90a: TMA, mbarriers, wgmma, setmaxnreg).

    `multicast=True` launches each sequence's two head blocks as a cluster
    (`cluster_dims`): the pair's first block loads every page once into both
    by TMA multicast (`cluster_mask`), and each block's consumer warps also
    release the stage at the other block (`T.mbarrier_arrive(..., cta_id=)`).
    It halves the pages' traffic from L2, and the power: on an H100 at its 700 W
    cap the SM clock rose from 1395 to 1620 MHz, but the pair now waits for
    its slower block at every stage, and batch 132, context 8192 took 645-657 us
    against 566-571 us without it (bench/results/2026-12-05/session32/)."""
    check_arguments(heads, block_H, num_split)
    if multicast and heads // block_H % 2:
        raise ValueError(f"multicast pairs the head blocks of a sequence: heads // block_H "
                         f"({heads // block_H}) must be even")
    width = kv_dim + rope_dim
    half = kv_dim // 2
    sm_scale = 1.0 / math.sqrt(width) if sm_scale is None else sm_scale
    scale = sm_scale * math.log2(math.e)  # exponentials in base 2
    acc = "float32"
    neg_inf = -math.inf
    block_N = page_size
    split = num_split > 1
    chunks = list(range(num_split))

    @T.prim_func
    def decode(q: T.Tensor([batch, heads, width], dtype),
               cache: T.Tensor([num_pages, page_size, width], dtype),
               block_table: T.Tensor([batch, max_pages], "int32"),
               seq_lens: T.Tensor([batch], "int32"),
               out: T.Tensor([batch, heads, kv_dim], dtype)):
        if split:
            o_partial = T.alloc_global([batch, heads, num_split, kv_dim], acc)
            lse = T.alloc_global([batch, heads, num_split], acc)

        with T.Kernel(num_split, heads // block_H, batch, threads=384,
                      cluster_dims=(1, 2, 1) if multicast else None) as (sp, hb, b):
            h0 = hb * block_H
            kv_len = seq_lens[b]
            q_l = T.alloc_shared([block_H, half], dtype)
            q_r = T.alloc_shared([block_H, half], dtype)
            q_rope = T.alloc_shared([block_H, rope_dim], dtype)
            kv_l = T.alloc_shared([num_stages, block_N, half], dtype)  # keys and values
            kv_r = T.alloc_shared([num_stages, block_N, half], dtype)
            k_rope = T.alloc_shared([num_stages, block_N, rope_dim], dtype)
            p_shared = T.alloc_shared([block_H, block_N], dtype)
            rescale = T.alloc_shared([block_H], acc)
            l_shared = T.alloc_shared([block_H], acc)

            s = T.alloc_fragment([block_H, block_N], acc)
            p_local = T.alloc_fragment([block_H, block_N], dtype)  # P, wgmma's A in registers
            o_l = T.alloc_fragment([block_H, half], acc)
            o_r = T.alloc_fragment([block_H, half], acc)
            m = T.alloc_fragment([block_H], acc)
            m_old = T.alloc_fragment([block_H], acc)
            correction = T.alloc_fragment([block_H], acc)
            l = T.alloc_fragment([block_H], acc)
            l_block = T.alloc_fragment([block_H], acc)

            full = T.alloc_barrier([128] * num_stages)
            # With multicast a stage is refilled in both blocks of the pair at once:
            # each counts its 256 consumers and the other block's 8 consumer warps.
            empty = T.alloc_barrier([256 + 8 if multicast else 256] * num_stages)
            p_ready = T.alloc_barrier(128)
            p_free = T.alloc_barrier(128)
            l_ready = T.alloc_barrier(128)

            pages = T.ceildiv(kv_len, block_N)
            per_chunk = T.ceildiv(pages, num_split)
            first = sp * per_chunk
            steps = T.max(T.min(pages - first, per_chunk), 0)

            with T.ws(2):  # the producer: TMA loads of each page into the ring
                T.dec_max_nreg(56)
                load_pages(cache, block_table, kv_l, kv_r, k_rope, full, empty, b, first, steps,
                           0b11 if multicast else None)

            with T.ws(0):  # scores, softmax, left half of the output
                T.inc_max_nreg(240)  # 240 + 208 + 56 = 3 x 168, the registers at launch
                T.copy(q[b, h0:h0 + block_H, 0:half], q_l)
                T.copy(q[b, h0:h0 + block_H, half:kv_dim], q_r)
                T.copy(q[b, h0:h0 + block_H, kv_dim:width], q_rope)
                T.fill(m, neg_inf)
                T.fill(l, 0)
                T.fill(o_l, 0)
                for i in T.serial(steps):
                    st = i % num_stages
                    k0 = (first + i) * block_N
                    T.barrier_wait(full[st], (i // num_stages) % 2)
                    if k0 + block_N <= kv_len:
                        T.clear(s)
                    else:  # the sequence's last page: rows past the end get no weight
                        for r, j in T.Parallel(block_H, block_N):
                            s[r, j] = T.if_then_else(k0 + j < kv_len, 0, neg_inf)
                    T.gemm(q_l, kv_l[st, :, :], s, transpose_B=True)
                    T.gemm(q_r, kv_r[st, :, :], s, transpose_B=True)
                    T.gemm(q_rope, k_rope[st, :, :], s, transpose_B=True)
                    online_softmax(s, m, m_old, correction, l, l_block, scale)
                    for r, j in T.Parallel(block_H, half):
                        o_l[r, j] *= correction[r]
                    # Warpgroup 1 is done with the previous page's probabilities.
                    T.barrier_wait(p_free, (i + 1) % 2)
                    T.copy(s, p_local)
                    T.copy(p_local, p_shared)
                    T.copy(correction, rescale)
                    T.barrier_arrive(p_ready)
                    T.gemm(p_local, kv_l[st, :, :], o_l)
                    T.barrier_arrive(empty[st])
                    if multicast:
                        release_other(empty, st)
                T.copy(l, l_shared)
                T.barrier_arrive(l_ready)
                if split:
                    for r, j in T.Parallel(block_H, half):
                        o_l[r, j] = T.if_then_else(l[r] > 0, o_l[r, j] / l[r], 0)
                    T.copy(o_l, o_partial[b, h0:h0 + block_H, sp, 0:half])
                    for r in T.Parallel(block_H):
                        lse[b, h0 + r, sp] = T.if_then_else(l[r] > 0,
                                                            T.log2(l[r]) + m[r] * scale, neg_inf)
                else:
                    for r, j in T.Parallel(block_H, half):
                        o_l[r, j] /= l[r]
                    T.copy(o_l, out[b, h0:h0 + block_H, 0:half])

            with T.ws(1):  # right half of the output
                T.inc_max_nreg(208)
                T.fill(o_r, 0)
                for i in T.serial(steps):
                    st = i % num_stages
                    T.barrier_wait(p_ready, i % 2)
                    for r, j in T.Parallel(block_H, half):
                        o_r[r, j] *= rescale[r]
                    T.gemm(p_shared, kv_r[st, :, :], o_r)
                    T.barrier_arrive(p_free)
                    T.barrier_arrive(empty[st])
                    if multicast:
                        release_other(empty, st)
                T.barrier_wait(l_ready, 0)
                if split:
                    for r, j in T.Parallel(block_H, half):
                        o_r[r, j] = T.if_then_else(l_shared[r] > 0, o_r[r, j] / l_shared[r], 0)
                    T.copy(o_r, o_partial[b, h0:h0 + block_H, sp, half:kv_dim])
                else:
                    for r, j in T.Parallel(block_H, half):
                        o_r[r, j] /= l_shared[r]
                    T.copy(o_r, out[b, h0:h0 + block_H, half:kv_dim])

        if split:
            combine_chunks(o_partial, lse, out, batch, heads, kv_dim, chunks)

    return decode


def check_arguments(heads, block_H, num_split) -> None:
    """ValueError for a block of other than 64 heads, heads it does not divide, or no
    split (examples/mla_decode_seesaw.py's too)."""
    if block_H != 64:
        raise ValueError(f"block_H must be 64 (one m64 row block a warpgroup), not {block_H}")
    if heads % block_H:
        raise ValueError(f"block_H ({block_H}) must divide heads ({heads})")
    if num_split < 1:
        raise ValueError(f"num_split must be at least 1, not {num_split}")


@T.macro
def release_other(bars, i):
    """One arrival per warp at barrier `bars[i]` of the other block of a pair's
    cluster (the warp's wgmma reads of the stage are complete: it waited for them)."""
    if T.get_lane_idx() == 0:
        T.mbarrier_arrive(bars[i], cta_id=1 - T.block_rank_in_cluster())


@T.macro
def load_pages(cache, block_table, kv_l, kv_r, k_rope, full, empty, b, first, steps,
               cluster_mask=None):
    """The producer's loop (examples/mla_decode_seesaw.py's too): page `first + i` of
    sequence b's table, i < steps, into stage i % S of the ring (S: kv_l's first
    dimension) as its left and right latent halves and its rope keys, once both
    consumers released the stage (`empty`, waited one phase back) and under `full`.
    With `cluster_mask`, the mask's lowest block of the cluster loads each page into
    every block of the mask (a TMA multicast)."""
    num_stages, block_N, half = kv_l.shape
    kv_dim = 2 * half
    width = kv_dim + k_rope.shape[2]
    for i in T.serial(steps):
        st = i % num_stages
        page = block_table[b, first + i]
        T.barrier_wait(empty[st], (i // num_stages + 1) % 2)
        T.tma_copy(cache[page, 0:block_N, 0:half], kv_l[st, :, :], barrier=full[st],
                   cluster_mask=cluster_mask)
        T.tma_copy(cache[page, 0:block_N, half:kv_dim], kv_r[st, :, :], barrier=full[st],
                   cluster_mask=cluster_mask)
        T.tma_copy(cache[page, 0:block_N, kv_dim:width], k_rope[st, :, :], barrier=full[st],
                   cluster_mask=cluster_mask)
        T.barrier_arrive(full[st])


def main() -> int:
    kernel = mla_decode_ws(132, 128, T.dynamic("pages"), 128)
    ptx = kernel.get_kernel_source()
    print(f"compiled MLA decode (warpgroup roles written out): {ptx.count('wgmma.mma_async')} "
          f"wgmma, {ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('setmaxnreg')} setmaxnreg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
