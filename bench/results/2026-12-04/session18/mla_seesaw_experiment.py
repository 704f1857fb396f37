"""Seesaw schedule experiment (session 18, not kept; see ../README.md): both consumer
warpgroups compute scores, warpgroup 0 the even pages, 1 the odd ones, and each keeps half of
the output. Measured 658 us at batch 132 context 8192 against 580-588 us for
examples/mla_decode_ws.py in the same leases."""
import math
import os
import sys

import tlc
import tlc.language as T

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "examples"))
from mla_decode import combine_chunks, online_softmax  # noqa: E402


@tlc.jit(out_idx=[4], pass_configs={"tl.enable_fast_math": True})
def mla_decode_seesaw(batch, heads, num_pages, max_pages, kv_dim=512, rope_dim=64, block_H=64,
                      page_size=64, num_split=1, sm_scale=None, dtype="float16"):
    width = kv_dim + rope_dim
    half = kv_dim // 2
    sm_scale = 1.0 / math.sqrt(width) if sm_scale is None else sm_scale
    scale = sm_scale * math.log2(math.e)
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

        with T.Kernel(num_split, heads // block_H, batch, threads=384) as (sp, hb, b):
            h0 = hb * block_H
            kv_len = seq_lens[b]
            q_l = T.alloc_shared([block_H, half], dtype)
            q_r = T.alloc_shared([block_H, half], dtype)
            kv_l = T.alloc_shared([2, block_N, half], dtype)
            kv_r = T.alloc_shared([2, block_N, half], dtype)
            k_rope = T.alloc_shared([2, block_N, rope_dim], dtype)
            p0_s = T.alloc_shared([block_H, block_N], dtype)
            p1_s = T.alloc_shared([block_H, block_N], dtype)
            m_s = T.alloc_shared([block_H], acc)
            scale0_s = T.alloc_shared([block_H], acc)
            scale1_s = T.alloc_shared([block_H], acc)

            # warpgroup 0's registers
            s0 = T.alloc_fragment([block_H, block_N], acc)
            p0 = T.alloc_fragment([block_H, block_N], dtype)
            qr0 = T.alloc_fragment([block_H, rope_dim], dtype)
            o_l = T.alloc_fragment([block_H, half], acc)
            m0 = T.alloc_fragment([block_H], acc)
            mo0 = T.alloc_fragment([block_H], acc)
            c0 = T.alloc_fragment([block_H], acc)
            l0 = T.alloc_fragment([block_H], acc)
            lb0 = T.alloc_fragment([block_H], acc)
            # warpgroup 1's registers
            s1 = T.alloc_fragment([block_H, block_N], acc)
            p1 = T.alloc_fragment([block_H, block_N], dtype)
            qr1 = T.alloc_fragment([block_H, rope_dim], dtype)
            o_r = T.alloc_fragment([block_H, half], acc)
            m1 = T.alloc_fragment([block_H], acc)
            mo1 = T.alloc_fragment([block_H], acc)
            c1 = T.alloc_fragment([block_H], acc)
            l1 = T.alloc_fragment([block_H], acc)
            lb1 = T.alloc_fragment([block_H], acc)

            q_full = T.alloc_barrier(128)
            full_l = T.alloc_barrier([128, 128])
            full_r = T.alloc_barrier([128, 128])
            full_rope = T.alloc_barrier([128, 128])
            empty_l = T.alloc_barrier([128, 256])
            empty_r = T.alloc_barrier([256, 128])
            empty_rope = T.alloc_barrier([128, 128])
            s0_ready = T.alloc_barrier(128)
            s1_ready = T.alloc_barrier(128)
            p0_ready = T.alloc_barrier(128)
            p1_ready = T.alloc_barrier(128)
            l0_ready = T.alloc_barrier(128)
            l1_ready = T.alloc_barrier(128)

            pages = T.ceildiv(kv_len, block_N)
            per_chunk = T.ceildiv(pages, num_split)
            first = sp * per_chunk
            steps = T.max(T.min(pages - first, per_chunk), 0)
            pairs = T.ceildiv(steps, 2)

            with T.ws(2):  # producer
                T.dec_max_nreg(40)
                T.tma_copy(q[b, h0:h0 + block_H, 0:half], q_l, barrier=q_full)
                T.tma_copy(q[b, h0:h0 + block_H, half:kv_dim], q_r, barrier=q_full)
                T.barrier_arrive(q_full)
                for t in T.serial(pairs):
                    ph = (t + 1) % 2
                    pa = block_table[b, first + 2 * t]
                    has_b = 2 * t + 1 < steps
                    T.barrier_wait(empty_rope[0], ph)
                    T.tma_copy(cache[pa, 0:block_N, kv_dim:width], k_rope[0, :, :],
                               barrier=full_rope[0])
                    T.barrier_arrive(full_rope[0])
                    if has_b:
                        pb = block_table[b, first + 2 * t + 1]
                        T.barrier_wait(empty_rope[1], ph)
                        T.tma_copy(cache[pb, 0:block_N, kv_dim:width], k_rope[1, :, :],
                                   barrier=full_rope[1])
                        T.barrier_arrive(full_rope[1])
                    T.barrier_wait(empty_l[0], ph)
                    T.tma_copy(cache[pa, 0:block_N, 0:half], kv_l[0, :, :], barrier=full_l[0])
                    T.barrier_arrive(full_l[0])
                    if has_b:
                        pb = block_table[b, first + 2 * t + 1]
                        T.barrier_wait(empty_r[1], ph)
                        T.tma_copy(cache[pb, 0:block_N, half:kv_dim], kv_r[1, :, :],
                                   barrier=full_r[1])
                        T.barrier_arrive(full_r[1])
                    T.barrier_wait(empty_r[0], ph)
                    T.tma_copy(cache[pa, 0:block_N, half:kv_dim], kv_r[0, :, :], barrier=full_r[0])
                    T.barrier_arrive(full_r[0])
                    if has_b:
                        pb = block_table[b, first + 2 * t + 1]
                        T.barrier_wait(empty_l[1], ph)
                        T.tma_copy(cache[pb, 0:block_N, 0:half], kv_l[1, :, :],
                                   barrier=full_l[1])
                        T.barrier_arrive(full_l[1])

            with T.ws(0):  # even pages: scores, softmax, left half of the output
                T.inc_max_nreg(232)
                T.copy(q[b, h0:h0 + block_H, kv_dim:width], qr0)
                T.fill(m0, neg_inf)
                T.fill(l0, 0)
                T.fill(o_l, 0)
                T.barrier_wait(q_full, 0)
                for t in T.serial(pairs):
                    ph = t % 2
                    k0 = (first + 2 * t) * block_N
                    has_b = 2 * t + 1 < steps
                    T.barrier_wait(full_l[0], ph)
                    T.barrier_wait(full_rope[0], ph)
                    T.barrier_wait(full_r[0], ph)
                    if k0 + block_N <= kv_len:
                        T.clear(s0)
                    else:
                        for r, j in T.Parallel(block_H, block_N):
                            s0[r, j] = T.if_then_else(k0 + j < kv_len, 0, neg_inf)
                    T.gemm(q_l, kv_l[0, :, :], s0, transpose_B=True)
                    T.gemm(q_r, kv_r[0, :, :], s0, transpose_B=True)
                    T.gemm(qr0, k_rope[0, :, :], s0, transpose_B=True)
                    T.barrier_arrive(empty_rope[0])
                    T.barrier_arrive(empty_r[0])
                    online_softmax(s0, m0, mo0, c0, l0, lb0, scale)
                    for r, j in T.Parallel(block_H, half):
                        o_l[r, j] *= c0[r]
                    T.copy(m0, m_s)
                    T.copy(c0, scale0_s)
                    T.barrier_arrive(s0_ready)
                    T.copy(s0, p0)
                    T.gemm(p0, kv_l[0, :, :], o_l)
                    T.barrier_arrive(empty_l[0])
                    T.barrier_wait(s1_ready, ph)
                    T.copy(scale1_s, c0)
                    T.copy(m_s, m0)
                    for r, j in T.Parallel(block_H, block_N):
                        p0[r, j] = s0[r, j] * c0[r]
                    T.copy(p0, p0_s)
                    T.barrier_arrive(p0_ready)
                    for r, j in T.Parallel(block_H, half):
                        o_l[r, j] *= c0[r]
                    for r in T.Parallel(block_H):
                        l0[r] *= c0[r]
                    if has_b:
                        T.barrier_wait(p1_ready, ph)
                        T.gemm(p1_s, kv_l[1, :, :], o_l)
                        T.barrier_arrive(empty_l[1])
                T.copy(l0, scale0_s)  # free now: warpgroup 1 read the last scale
                T.barrier_arrive(l0_ready)
                T.barrier_wait(l1_ready, 0)
                T.copy(scale1_s, lb0)
                for r in T.Parallel(block_H):
                    l0[r] += lb0[r]
                if split:
                    for r, j in T.Parallel(block_H, half):
                        o_l[r, j] = T.if_then_else(l0[r] > 0, o_l[r, j] / l0[r], 0)
                    T.copy(o_l, o_partial[b, h0:h0 + block_H, sp, 0:half])
                    for r in T.Parallel(block_H):
                        lse[b, h0 + r, sp] = T.if_then_else(l0[r] > 0,
                                                            T.log2(l0[r]) + m0[r] * scale, neg_inf)
                else:
                    for r, j in T.Parallel(block_H, half):
                        o_l[r, j] /= l0[r]
                    T.copy(o_l, out[b, h0:h0 + block_H, 0:half])

            with T.ws(1):  # odd pages: scores, softmax, right half of the output
                T.inc_max_nreg(232)
                T.copy(q[b, h0:h0 + block_H, kv_dim:width], qr1)
                T.fill(l1, 0)
                T.fill(o_r, 0)
                T.barrier_wait(q_full, 0)
                for t in T.serial(pairs):
                    ph = t % 2
                    k1 = (first + 2 * t + 1) * block_N
                    has_b = 2 * t + 1 < steps
                    if has_b:
                        T.barrier_wait(full_rope[1], ph)
                        T.barrier_wait(full_r[1], ph)
                        T.barrier_wait(full_l[1], ph)
                        if k1 + block_N <= kv_len:
                            T.clear(s1)
                        else:
                            for r, j in T.Parallel(block_H, block_N):
                                s1[r, j] = T.if_then_else(k1 + j < kv_len, 0, neg_inf)
                        T.gemm(qr1, k_rope[1, :, :], s1, transpose_B=True)
                        T.gemm(q_r, kv_r[1, :, :], s1, transpose_B=True)
                        T.gemm(q_l, kv_l[1, :, :], s1, transpose_B=True)
                        T.barrier_arrive(empty_rope[1])
                        T.barrier_arrive(empty_l[1])
                    else:
                        T.fill(s1, neg_inf)
                    T.barrier_wait(s0_ready, ph)
                    T.copy(m_s, m1)
                    T.copy(scale0_s, c1)
                    for r, j in T.Parallel(block_H, half):
                        o_r[r, j] *= c1[r]
                    for r in T.Parallel(block_H):
                        l1[r] *= c1[r]
                    online_softmax(s1, m1, mo1, c1, l1, lb1, scale)
                    T.copy(m1, m_s)
                    T.copy(c1, scale1_s)
                    T.barrier_arrive(s1_ready)
                    for r, j in T.Parallel(block_H, half):
                        o_r[r, j] *= c1[r]
                    if has_b:
                        T.copy(s1, p1)
                        T.copy(p1, p1_s)
                        T.barrier_arrive(p1_ready)
                        T.gemm(p1, kv_r[1, :, :], o_r)
                        T.barrier_arrive(empty_r[1])
                    T.barrier_wait(p0_ready, ph)
                    T.gemm(p0_s, kv_r[0, :, :], o_r)
                    T.barrier_arrive(empty_r[0])
                T.copy(l1, scale1_s)  # free now: warpgroup 0 read the last scale
                T.barrier_arrive(l1_ready)
                T.barrier_wait(l0_ready, 0)
                T.copy(scale0_s, lb1)
                for r in T.Parallel(block_H):
                    l1[r] += lb1[r]
                if split:
                    for r, j in T.Parallel(block_H, half):
                        o_r[r, j] = T.if_then_else(l1[r] > 0, o_r[r, j] / l1[r], 0)
                    T.copy(o_r, o_partial[b, h0:h0 + block_H, sp, half:kv_dim])
                else:
                    for r, j in T.Parallel(block_H, half):
                        o_r[r, j] /= l1[r]
                    T.copy(o_r, out[b, h0:h0 + block_H, half:kv_dim])

        if split:
            combine_chunks(o_partial, lse, out, batch, heads, kv_dim, chunks)

    return decode
