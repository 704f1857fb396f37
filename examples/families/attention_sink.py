"""Attention with per-head sink logits and an optional sliding window (gpt-oss style).

    python examples/families/attention_sink.py [--window 128] [--gqa] [--bshd]

For each query row i of head h (causal; with `window`, only keys j with
i - window < j <= i):

    out_i = sum_j e^(s_ij - M) v_j / (e^(sink_h - M) + sum_j e^(s_ij - M)),
    s_ij = sm_scale * q_i . k_j,   M = max(sink_h, max_j s_ij)

The sink is a learned logit per head that takes part in the denominator but
has no value vector: a row may put its weight "nowhere". The kernel treats it
as a virtual key every row sees before the first real one: the running
maximum of the online softmax starts at the sink (in raw-score units,
sink / sm_scale) and the running denominator at 1 = e^(sink - sink). So no
extra pass is needed at the end, and a row whose real keys are all masked in
a K block (sliding windows) never has an infinite maximum.

FlashAttention forward: a block owns `block_M` queries of one head and walks
the key blocks its queries can see (from the window's first block to the
diagonal) `block_N` keys at a time, `T.Pipelined` staging K and V through
shared memory; Q K^T and P V are `T.gemm`s accumulating in fp32 (wgmma on
sm_90a, mma.sync on sm_80), the softmax uses `T.reduce_max` / `T.reduce_sum`
on fragments and exp2 with the log2(e) folded into the scale. Only the K
blocks that cross the diagonal or the window's lower edge get a mask
(a run-time branch); the others start from cleared scores. On sm_90a the
loop becomes a warp-specialized pipeline: a producer warpgroup loads K and
V tiles by TMA while the consumer warpgroups (one per 64 queries) run the
wgmmas and the softmax.

Variants (compile-time): `heads_kv` (GQA: `heads // heads_kv` query heads
share a K/V head; the sink is per query head), `window` (None: plain causal),
`layout` "BHSD" or "BSHD", fp16 or bf16 inputs; any sequence length (copies
past the end are masked, rows past the end not stored). Sinks are float32.
"""

import argparse
import math
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T

LAYOUTS = ("BHSD", "BSHD")
LOG2E = math.log2(math.e)


def tensor_shapes(batch, heads, heads_kv, seq_len, dim, layout):
    """Shapes of Q / O and of K / V in `layout`."""
    if layout == "BHSD":
        return [batch, heads, seq_len, dim], [batch, heads_kv, seq_len, dim]
    return [batch, seq_len, heads, dim], [batch, seq_len, heads_kv, dim]


# exp2 as one MUFU.EX2 (f32 denormals flushed), as FlashAttention builds with --use_fast_math.
PASS_CONFIGS = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}


@tilelang.jit(out_idx=[-1], pass_configs=PASS_CONFIGS)
def sink_attention(batch, heads, seq_len, dim, heads_kv=None, window=None, layout="BHSD",
                   block_M=None, block_N=None, num_stages=2, threads=None, sm_scale=None,
                   dtype="float16"):
    """O = sink-softmax(Q K^T) V over Q, K, V in `layout` and Sinks [heads] (float32).

    Blocks for an H100/H200: `block_M` 192 queries at head dim 64 without a
    window (three consumer warpgroups beside the TMA producer), else 128 (a
    128-key window then reads two 128-key blocks per query block, half of
    whose scores are masked, against three for 192 queries); `block_N` 128
    keys, 64 at head dim 256; `threads` one warpgroup per 64 queries."""
    heads_kv = heads if heads_kv is None else heads_kv
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if heads_kv < 1 or heads % heads_kv:
        raise ValueError(f"heads_kv ({heads_kv}) must divide heads ({heads})")
    if window is not None and window < 1:
        raise ValueError(f"window must be None or a positive number of keys, got {window}")
    if block_M is None:
        block_M = 192 if dim <= 64 and window is None else 128
    if block_N is None:
        block_N = 128 if dim <= 128 else 64  # two stages of K and V beside Q at d256
    threads = 2 * block_M if threads is None else threads
    group = heads // heads_kv
    sm_scale = 1.0 / math.sqrt(dim) if sm_scale is None else sm_scale
    scale = sm_scale * LOG2E  # raw score -> base-2 exponent
    sink_to_raw = 1.0 / sm_scale  # natural-log sink logit -> raw-score units
    q_shape, kv_shape = tensor_shapes(batch, heads, heads_kv, seq_len, dim, layout)
    bhsd = layout == "BHSD"
    accum = "float32"
    neg_inf = -math.inf

    @T.prim_func
    def sink_attn_fwd(Q: T.Tensor(q_shape, dtype), K: T.Tensor(kv_shape, dtype),
                      V: T.Tensor(kv_shape, dtype), Sinks: T.Tensor([heads], "float32"),
                      O: T.Tensor(q_shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bq, h, b):
            hkv = h // group
            row0 = bq * block_M
            q_s = T.alloc_shared([block_M, dim], dtype)
            k_s = T.alloc_shared([block_N, dim], dtype)
            v_s = T.alloc_shared([block_N, dim], dtype)
            out_s = T.alloc_shared([block_M, dim], dtype)
            scores = T.alloc_fragment([block_M, block_N], accum)
            probs = T.alloc_fragment([block_M, block_N], dtype)
            acc = T.alloc_fragment([block_M, dim], accum)
            row_max = T.alloc_fragment([block_M], accum)
            prev_max = T.alloc_fragment([block_M], accum)
            rescale = T.alloc_fragment([block_M], accum)
            denom = T.alloc_fragment([block_M], accum)
            block_sum = T.alloc_fragment([block_M], accum)

            if bhsd:
                T.copy(Q[b, h, row0:row0 + block_M, :], q_s)
            else:
                T.copy(Q[b, row0:row0 + block_M, h, :], q_s)
            # The sink: a key of logit Sinks[h] and value 0 that every row has seen.
            for i in T.Parallel(block_M):
                row_max[i] = Sinks[h] * sink_to_raw
                denom[i] = 1.0
            T.fill(acc, 0)

            # Key blocks some row of this block sees: up to the diagonal, and
            # from the block holding key row0 - window + 1 when windowed.
            stop = T.min(T.ceildiv(seq_len, block_N), T.ceildiv(row0 + block_M, block_N))
            start = T.max(row0 - window + 1, 0) // block_N if window is not None else 0
            for kb in T.Pipelined(start, stop, num_stages=num_stages):
                col0 = kb * block_N
                if bhsd:
                    T.copy(K[b, hkv, col0:col0 + block_N, :], k_s)
                else:
                    T.copy(K[b, col0:col0 + block_N, hkv, :], k_s)
                # Masks go in before Q K^T accumulates onto them; a block wholly
                # below the diagonal and inside every row's window needs none.
                inside = col0 + block_N <= row0 + 1
                if window is not None:
                    inside = inside and col0 + window >= row0 + block_M
                if inside:
                    T.clear(scores)
                else:
                    for i, j in T.Parallel(block_M, block_N):
                        dist = row0 + i - col0 - j  # query index - key index
                        if window is not None:
                            scores[i, j] = T.if_then_else(dist >= 0 and dist < window, 0, neg_inf)
                        else:
                            scores[i, j] = T.if_then_else(dist >= 0, 0, neg_inf)
                T.gemm(q_s, k_s, scores, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                # Online softmax (reduce_max without clear folds the old maximum in).
                T.copy(row_max, prev_max)
                T.reduce_max(scores, row_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    rescale[i] = T.exp2((prev_max[i] - row_max[i]) * scale)
                for i, j in T.Parallel(block_M, block_N):
                    scores[i, j] = T.exp2(scores[i, j] * scale - row_max[i] * scale)
                T.reduce_sum(scores, block_sum, dim=1)
                for i in T.Parallel(block_M):
                    denom[i] = denom[i] * rescale[i] + block_sum[i]
                for i, j in T.Parallel(block_M, dim):
                    acc[i, j] *= rescale[i]
                T.copy(scores, probs)
                if bhsd:
                    T.copy(V[b, hkv, col0:col0 + block_N, :], v_s)
                else:
                    T.copy(V[b, col0:col0 + block_N, hkv, :], v_s)
                T.gemm(probs, v_s, acc, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc[i, j] /= denom[i]
            T.copy(acc, out_s)
            if bhsd:  # the copy stores only rows before seq_len
                T.copy(out_s, O[b, h, row0:row0 + block_M, :])
            else:
                T.copy(out_s, O[b, row0:row0 + block_M, h, :])

    return sink_attn_fwd


def reference(q, k, v, sinks, window=None, layout="BHSD", sm_scale=None):
    """float64 numpy: causal (windowed) softmax with one extra sink logit per head."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    if layout == "BSHD":
        q, k, v = (t.transpose(0, 2, 1, 3) for t in (q, k, v))
    heads, seq, dim = q.shape[1], q.shape[2], q.shape[3]
    group = heads // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    sm_scale = 1.0 / math.sqrt(dim) if sm_scale is None else sm_scale
    logits = np.einsum("bhid,bhjd->bhij", q, k) * sm_scale
    dist = np.arange(seq)[:, None] - np.arange(seq)[None, :]
    visible = dist >= 0 if window is None else (dist >= 0) & (dist < window)
    logits = np.where(visible, logits, -np.inf)
    sink = np.broadcast_to(np.asarray(sinks, np.float64)[None, :, None, None],
                           logits.shape[:3] + (1,))
    top = np.maximum(logits.max(axis=-1, keepdims=True), sink)
    weights = np.exp(logits - top)
    out = weights @ v / (weights.sum(axis=-1, keepdims=True) + np.exp(sink - top))
    return out.transpose(0, 2, 1, 3) if layout == "BSHD" else out


def _torch_reference(torch, q, k, v, sinks, window, layout):
    """The same math in fp32 torch on the GPU."""
    q, k, v = (t.float() for t in (q, k, v))
    if layout == "BSHD":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    heads, seq, dim = q.shape[1], q.shape[2], q.shape[3]
    group = heads // k.shape[1]
    k, v = (t.repeat_interleave(group, dim=1) for t in (k, v))
    logits = q @ k.transpose(-1, -2) / math.sqrt(dim)
    pos = torch.arange(seq, device=q.device)
    dist = pos[:, None] - pos[None, :]
    visible = dist >= 0 if window is None else (dist >= 0) & (dist < window)
    logits = logits.masked_fill(~visible, float("-inf"))
    sink = sinks.float().view(1, heads, 1, 1).expand(q.shape[0], heads, seq, 1)
    probs = torch.softmax(torch.cat([logits, sink], dim=-1), dim=-1)[..., :-1]
    out = probs @ v
    return out.transpose(1, 2) if layout == "BSHD" else out



# (batch, heads, heads_kv, seq_len, dim, window, layout)
GPU_SHAPES = [
    (2, 16, 16, 2048, 128, None, "BHSD"),   # MHA, causal with sinks
    (2, 16, 2, 1000, 128, None, "BSHD"),    # GQA 8, 1000: no block divides it
    (1, 32, 4, 4096, 64, 128, "BHSD"),      # gpt-oss: 128-key windows, head dim 64
    (2, 8, 8, 777, 128, 100, "BSHD"),       # a window no block divides
    (1, 8, 2, 3000, 64, 1024, "BHSD"),
]


def gpu_kernel(batch, heads, heads_kv, seq, dim, window, layout):
    """The kernel gpu_check launches for one GPU_SHAPES entry: without out_idx,
    so that the output can be passed in filled with NaN."""
    return tilelang.jit(sink_attention.factory, pass_configs=PASS_CONFIGS)(
        batch, heads, seq, dim, heads_kv=heads_kv, window=window, layout=layout)


def gpu_kernels() -> list:
    """Every kernel gpu_check launches, compiled (no torch, no GPU needed)."""
    return [gpu_kernel(*case) for case in GPU_SHAPES]


def gpu_check() -> list[str]:
    torch = tilelang.runtime.torch_if_gpu()
    assert torch is not None, "gpu_check needs torch and a CUDA GPU"
    lines = []
    for batch, heads, heads_kv, seq, dim, window, layout in GPU_SHAPES:
        kernel = gpu_kernel(batch, heads, heads_kv, seq, dim, window, layout)
        q_shape, kv_shape = tensor_shapes(batch, heads, heads_kv, seq, dim, layout)
        torch.manual_seed(seq + heads)
        q = torch.randn(q_shape, device="cuda", dtype=torch.float16)
        k = torch.randn(kv_shape, device="cuda", dtype=torch.float16)
        v = torch.randn(kv_shape, device="cuda", dtype=torch.float16)
        sinks = torch.randn(heads, device="cuda", dtype=torch.float32) * 2
        out = torch.full(q_shape, float("nan"), device="cuda", dtype=torch.float16)
        kernel(q, k, v, sinks, out)
        torch.cuda.synchronize()
        ref = _torch_reference(torch, q, k, v, sinks, window, layout)
        err = (out.float() - ref).abs().max().item()
        shape = f"B{batch} H{heads}/{heads_kv} S{seq} D{dim} window={window} {layout}"
        if not err <= 1e-2:  # also catches NaN
            raise AssertionError(f"attention_sink {shape}: max |out - ref| = {err} > 1e-2")
        lines.append(f"PASS attention_sink {shape} max_err={err:.2e}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=None)
    parser.add_argument("--gqa", action="store_true", help="8 KV heads for 64 query heads")
    parser.add_argument("--bshd", action="store_true")
    args = parser.parse_args()
    heads, heads_kv = 64, 8 if args.gqa else 64
    kernel = sink_attention(4, heads, 4096, 64, heads_kv=heads_kv, window=args.window,
                            layout="BSHD" if args.bshd else "BHSD")
    ptx = kernel.get_kernel_source()
    print(f"compiled sink_attn_fwd: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('mma.sync')} mma.sync")
    if tilelang.runtime.torch_if_gpu() is None:
        print("no torch with a CUDA GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
