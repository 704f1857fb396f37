"""Split-KV decoding attention (FlashDecoding) in two kernels.

    python examples/flash_decoding_split.py [--batch 2 --heads 32 --seq 4096 --split 8]

One query token per head; all heads share one K and V head (MQA, the shape
of MLA decoding): Q and O are [batch, heads, dim], K and V [batch, seq, dim].
The keys are cut into `split` chunks so that a small batch still fills the
GPU:

1. `partial_attention`, one block per (chunk, group of `block_H` heads,
   batch): an online softmax over its chunk (S = Q K^T on tensor cores,
   exp2, P V), writing the chunk's normalized output to the global scratch
   `o_partial` [batch, heads, split, dim] (float32) and its log-sum-exp (in
   log2 units, of the scaled scores) to `lse` [batch, heads, split].
2. `combine`, one block per (group of heads, batch): weights each chunk's
   output by 2^(lse - max lse), normalized, and stores O (each output
   element reads the `split` LSEs of its row: this is a test of the
   mechanism, not a tuned combine).

`batch` is a T.dynamic size: one compilation serves every batch, and the
scratch tensors are sized from the arguments at each call.
"""

import argparse
import math
import sys

import tlc
import tlc.language as T


@tlc.jit(out_idx=[3])
def flash_decoding(heads, seq_len, dim, split=4, block_H=16, block_N=32, num_stages=2,
                   dtype="float16", sm_scale=None):
    batch = T.dynamic("batch")
    if seq_len % (split * block_N):
        raise ValueError(f"seq_len ({seq_len}) must be a multiple of split * block_N "
                         f"({split} * {block_N})")
    if heads % block_H or block_H % 16:
        raise ValueError(f"block_H ({block_H}) must be a multiple of 16 dividing heads")
    chunk = seq_len // split
    chunks = list(range(split))  # a Python list: loops over it are unrolled
    threads = 32 * (block_H // 16)  # one warp per 16 heads
    sm_scale = 1.0 / math.sqrt(dim) if sm_scale is None else sm_scale
    scale = sm_scale * math.log2(math.e)  # scores in log2 units: exp2 below
    acc = "float32"

    @T.prim_func
    def decode(Q: T.Tensor((batch, heads, dim), dtype), K: T.Tensor((batch, seq_len, dim), dtype),
               V: T.Tensor((batch, seq_len, dim), dtype), O: T.Tensor((batch, heads, dim), dtype)):
        o_partial = T.alloc_global((batch, heads, split, dim), acc)
        lse = T.alloc_global((batch, heads, split), acc)

        # 1. partial_attention: each chunk of keys on its own.
        with T.Kernel(split, heads // block_H, batch, threads=threads) as (sp, hb, b):
            h0 = hb * block_H
            q_tile = T.alloc_shared((block_H, dim), dtype)
            k_tile = T.alloc_shared((block_N, dim), dtype)
            v_tile = T.alloc_shared((block_N, dim), dtype)
            s = T.alloc_fragment((block_H, block_N), acc)
            p = T.alloc_fragment((block_H, block_N), dtype)
            o = T.alloc_fragment((block_H, dim), acc)
            m = T.alloc_fragment((block_H,), acc)
            m_old = T.alloc_fragment((block_H,), acc)
            correction = T.alloc_fragment((block_H,), acc)
            l = T.alloc_fragment((block_H,), acc)  # noqa: E741
            l_block = T.alloc_fragment((block_H,), acc)
            T.copy(Q[b, h0:h0 + block_H, :], q_tile)
            T.fill(m, -math.inf)
            T.fill(l, 0)
            T.fill(o, 0)
            for kb in T.Pipelined(chunk // block_N, num_stages=num_stages):
                k0 = sp * chunk + kb * block_N
                T.copy(K[b, k0:k0 + block_N, :], k_tile)
                T.clear(s)
                T.gemm(q_tile, k_tile, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m, m_old)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    correction[i] = T.exp2((m_old[i] - m[i]) * scale)
                for i, j in T.Parallel(block_H, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, l_block, dim=1)
                for i in T.Parallel(block_H):
                    l[i] = l[i] * correction[i] + l_block[i]
                for i, j in T.Parallel(block_H, dim):
                    o[i, j] *= correction[i]
                T.copy(s, p)
                T.copy(V[b, k0:k0 + block_N, :], v_tile)
                T.gemm(p, v_tile, o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_H, dim):
                o[i, j] /= l[i]
            T.copy(o, o_partial[b, h0:h0 + block_H, sp, :])
            for i in T.Parallel(block_H):
                lse[b, h0 + i, sp] = T.log2(l[i]) + m[i] * scale

        # 2. combine: the chunks' outputs weighted by their share of the sum,
        # 2^(lse_c - max lse) / sum over chunks (the chunks unrolled).
        with T.Kernel(heads // block_H, batch, threads=threads) as (hb, b):
            h0 = hb * block_H
            for i, j in T.Parallel(block_H, dim):
                top = lse[b, h0 + i, 0]
                for c in chunks[1:]:
                    top = T.max(top, lse[b, h0 + i, c])
                total = 0.0
                value = 0.0
                for c in chunks:
                    weight = T.exp2(lse[b, h0 + i, c] - top)
                    total = total + weight
                    value = value + weight * o_partial[b, h0 + i, c, j]
                O[b, h0 + i, j] = value / total

    return decode


def reference(q, k, v, sm_scale=None):
    """Decoding attention in float32 with torch: q [b, h, d], k and v [b, s, d]."""
    import torch

    sm_scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else sm_scale
    p = torch.softmax(q.float() @ k.float().transpose(-1, -2) * sm_scale, dim=-1)
    return p @ v.float()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--split", type=int, default=8)
    args = ap.parse_args()
    kernel = flash_decoding(args.heads, args.seq, args.dim, split=args.split)
    print(f"compiled {kernel.name}: kernels "
          f"{', '.join(k['name'] for k in kernel.artifact['kernels'])}")
    torch = tlc.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    q = torch.randn(args.batch, args.heads, args.dim, device="cuda", dtype=torch.float16)
    k = torch.randn(args.batch, args.seq, args.dim, device="cuda", dtype=torch.float16)
    v = torch.randn(args.batch, args.seq, args.dim, device="cuda", dtype=torch.float16)
    o = kernel(q, k, v)
    ok = torch.allclose(o.float(), reference(q, k, v), rtol=1e-2, atol=1e-2)
    print("matches torch" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
