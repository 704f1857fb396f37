"""RetNet retention forward, chunked: causal linear attention with a per-head decay.

    python examples/families/retention.py [--seq 4096] [--dim 128]

For Q, K of shape (B, H, T, DK), V of shape (B, H, T, DV) (fp16) and one decay
0 < gamma_h <= 1 per head (float32):

    O[t] = scale * sum_{s <= t} gamma^(t - s) (q_t . k_s) v_s
    S_T  = sum_s gamma^(T - 1 - s) k_s^T v_s          (DK x DV, float32)

A block owns one head and `block_V` columns of V and O and walks the
sequence in chunks of `chunk` tokens, carrying the decayed state of every
earlier chunk in an fp32 fragment. For the chunk starting at t0 with n
valid rows (n = chunk except at the end), rows i, j = 0 .. n - 1:

    O_c[i] = scale * (gamma^(i+1) q_i S + sum_{j <= i} gamma^(i-j) (q_i . k_j) v_j)
    S      = gamma^n S + sum_j gamma^(n-1-j) k_j^T v_j

Every power of gamma used is at most 1 (the decay only shrinks terms), so
nothing overflows however small gamma is. All four decays are distances
from -(chunk - 1) to chunk, the same in every chunk: before the loop the
block tabulates gamma^d once in shared memory (2 * chunk floats, 0 for
negative d, from `T.exp2` of d * log2(gamma), the head's log2(gamma) a
`T.alloc_var` scalar read from the Gamma tensor), and the loop only looks
the factors up: the decayed causal mask on the Q K^T scores, the rows of the
Q S accumulator (scaled before A V_c accumulates onto it), the rows of a
decayed copy of the V tile in shared memory (the B operand of K^T V; past
the end of the sequence they get weight 0) and the state. (Written inline
as T.exp2((i - j) * log2_gamma), the mask's exponentials do not change from
chunk to chunk: the compiler computes them once before the loop and keeps
each thread's share of the chunk x chunk tile in registers, 64 more a
thread at chunk 128, and the kernel spills.) TileLang constructs: `T.Pipelined` over chunks (TMA or cp.async
staging), four `T.gemm`s with fp32 accumulators (`transpose_A` /
`transpose_B`, register A operand), `T.Parallel` masks and row scalings
reading a shared table, `T.alloc_var`. Any T, DK up to 256, any DV.
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T


def default_config(dim_k):
    """Chunk, V columns a block and threads for an H100/H200 (sm_90a): as for
    linear attention, chunks of 128 on two consumer warpgroups at DK 128
    (plus the TMA producer), chunks of 64 on one at DK 64, 256 threads at
    DK 256 (Q S and A V_c then on mma.sync: see linear_attention.py)."""
    if dim_k <= 64:
        return {"chunk": 64, "block_V": 64, "threads": 128}
    if dim_k <= 128:
        return {"chunk": 128, "block_V": 64, "threads": 256}
    return {"chunk": 64, "block_V": 64, "threads": 256}


def retnet_gammas(heads):
    """RetNet's per-head decays, 1 - 2^(-5 - h)."""
    return (1.0 - 2.0 ** (-5.0 - np.arange(heads))).astype(np.float32)


@tilelang.jit(out_idx=[4, 5])
def retention(batch, heads, seq_len, dim_k, dim_v, scale=None, chunk=None, block_V=None,
              num_stages=2, threads=None, dtype="float16"):
    """(Q, K, V, Gamma) -> (O, final state); O (B, H, T, DV) in `dtype`, state f32.

    `chunk`, `block_V`, `threads` default to `default_config(dim_k)`."""
    if dim_k > 256 or dim_k % 16:
        raise ValueError(f"dim_k must be a multiple of 16 up to 256, got {dim_k}")
    config = default_config(dim_k)
    chunk = config["chunk"] if chunk is None else chunk
    block_V = config["block_V"] if block_V is None else block_V
    threads = config["threads"] if threads is None else threads
    scale = dim_k ** -0.5 if scale is None else scale
    accum = "float32"
    full_row = T.GemmWarpPolicy.FullRow

    @T.prim_func
    def retention_fwd(Q: T.Tensor([batch, heads, seq_len, dim_k], dtype),
                      K: T.Tensor([batch, heads, seq_len, dim_k], dtype),
                      V: T.Tensor([batch, heads, seq_len, dim_v], dtype),
                      Gamma: T.Tensor([heads], accum),
                      O: T.Tensor([batch, heads, seq_len, dim_v], dtype),
                      S_final: T.Tensor([batch, heads, dim_k, dim_v], accum)):
        with T.Kernel(T.ceildiv(dim_v, block_V), heads, batch, threads=threads) as (bv, h, b):
            col0 = bv * block_V
            q_s = T.alloc_shared([chunk, dim_k], dtype)
            k_s = T.alloc_shared([chunk, dim_k], dtype)
            v_s = T.alloc_shared([chunk, block_V], dtype)
            v_decayed = T.alloc_shared([chunk, block_V], dtype)  # gamma^(n-1-j) v_j
            state_s = T.alloc_shared([dim_k, block_V], dtype)
            out_s = T.alloc_shared([chunk, block_V], dtype)
            scores = T.alloc_fragment([chunk, chunk], accum)
            scores_lo = T.alloc_fragment([chunk, chunk], dtype)  # decayed causal part
            out = T.alloc_fragment([chunk, block_V], accum)
            state = T.alloc_fragment([dim_k, block_V], accum)
            log2_gamma = T.alloc_var(accum)
            # The head's decays, shared by every chunk: decay[zero + d] = gamma^d for
            # d = 0 .. chunk and 0 for d < 0 (a "key after the query" weighs nothing).
            decay = T.alloc_shared([2 * chunk], accum)
            zero = chunk - 1

            log2_gamma = T.log2(Gamma[h])
            for r in T.Parallel(2 * chunk):
                decay[r] = T.if_then_else(r >= zero, T.exp2((r - zero) * log2_gamma), 0)
            T.clear(state)
            for c in T.Pipelined(T.ceildiv(seq_len, chunk), num_stages=num_stages):
                t0 = c * chunk
                n = T.min(chunk, seq_len - t0)  # valid rows of this chunk
                T.copy(Q[b, h, t0:t0 + chunk, :], q_s)
                T.copy(K[b, h, t0:t0 + chunk, :], k_s)
                T.copy(V[b, h, t0:t0 + chunk, col0:col0 + block_V], v_s)

                # Intra-chunk scores times gamma^(i-j), which is 0 above the diagonal.
                T.gemm(q_s, k_s, scores, transpose_B=True, clear_accum=True, policy=full_row)
                for i, j in T.Parallel(chunk, chunk):
                    scores_lo[i, j] = scores[i, j] * decay[zero + i - j]
                # Earlier chunks: gamma^(i+1) q_i S, then the chunk's own part on top.
                T.copy(state, state_s)
                T.gemm(q_s, state_s, out, clear_accum=True, policy=full_row)
                for i, j in T.Parallel(chunk, block_V):
                    out[i, j] *= decay[zero + i + 1]
                T.gemm(scores_lo, v_s, out, policy=full_row)

                # S = gamma^n S + K_c^T (gamma^(n-1-j) v_j); rows j >= n get weight 0.
                for j, d in T.Parallel(chunk, block_V):
                    v_decayed[j, d] = v_s[j, d] * decay[zero + n - 1 - j]
                for i, j in T.Parallel(dim_k, block_V):
                    state[i, j] *= decay[zero + n]
                T.gemm(k_s, v_decayed, state, transpose_A=True)

                for i, j in T.Parallel(chunk, block_V):
                    out_s[i, j] = out[i, j] * scale
                T.copy(out_s, O[b, h, t0:t0 + chunk, col0:col0 + block_V])

            T.copy(state, S_final[b, h, :, col0:col0 + block_V])

    return retention_fwd


def reference(q, k, v, gamma, scale=None):
    """float64 numpy: (O, final state) of retention in its parallel (quadratic) form."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    gamma = np.asarray(gamma, np.float64)[None, :, None, None]
    seq = q.shape[2]
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    dist = np.arange(seq)[:, None] - np.arange(seq)[None, :]
    decay = np.where(dist >= 0, gamma ** np.maximum(dist, 0), 0.0)  # (1, H, T, T)
    out = scale * ((q @ k.swapaxes(-1, -2)) * decay) @ v
    last = gamma[..., 0] ** (seq - 1 - np.arange(seq))  # (1, H, T)
    state = (k * last[..., None]).swapaxes(-1, -2) @ v
    return out, state


def _torch_reference(torch, q, k, v, gamma, scale):
    q, k, v = (t.double() for t in (q, k, v))
    seq = q.shape[2]
    pos = torch.arange(seq, device=q.device)
    dist = (pos[:, None] - pos[None, :]).double()
    g = gamma.double().view(1, -1, 1, 1)
    decay = torch.where(dist >= 0, g ** dist.clamp(min=0), torch.zeros((), dtype=torch.float64,
                                                                         device=q.device))
    out = scale * ((q @ k.transpose(-1, -2)) * decay) @ v
    last = g[..., 0] ** (seq - 1 - pos).double()
    state = (k * last[..., None]).transpose(-1, -2) @ v
    return out, state



# (batch, heads, seq_len, dim_k, dim_v)
GPU_SHAPES = [
    (2, 16, 4096, 128, 128),
    (2, 8, 2048, 64, 128),
    (2, 8, 1000, 128, 128),   # 1000 tokens: no chunk divides them
    (1, 4, 777, 128, 96),     # DV 96: the last V block is half full
    (1, 8, 2048, 256, 256),   # RetNet-1.3B's head dims scaled down
]


def gpu_kernel(batch, heads, seq, dk, dv):
    """The kernel gpu_check launches for one GPU_SHAPES entry: without out_idx,
    so that the outputs can be passed in filled with NaN."""
    return tilelang.jit(retention.factory)(batch, heads, seq, dk, dv)


def gpu_kernels() -> list:
    """Every kernel gpu_check launches, compiled (no torch, no GPU needed)."""
    return [gpu_kernel(*case) for case in GPU_SHAPES]


def gpu_check() -> list[str]:
    torch = tilelang.runtime.torch_if_gpu()
    assert torch is not None, "gpu_check needs torch and a CUDA GPU"
    lines = []
    for batch, heads, seq, dk, dv in GPU_SHAPES:
        kernel = gpu_kernel(batch, heads, seq, dk, dv)
        torch.manual_seed(seq + dk)
        q = torch.randn(batch, heads, seq, dk, device="cuda", dtype=torch.float16)
        k = torch.randn(batch, heads, seq, dk, device="cuda", dtype=torch.float16)
        v = torch.randn(batch, heads, seq, dv, device="cuda", dtype=torch.float16)
        gamma = torch.from_numpy(retnet_gammas(heads)).cuda()
        out = torch.full((batch, heads, seq, dv), float("nan"), device="cuda",
                         dtype=torch.float16)
        state = torch.full((batch, heads, dk, dv), float("nan"), device="cuda")
        kernel(q, k, v, gamma, out, state)
        torch.cuda.synchronize()
        ref_out, ref_state = _torch_reference(torch, q, k, v, gamma, dk ** -0.5)
        shape = f"B{batch} H{heads} T{seq} DK{dk} DV{dv}"
        errs = []
        for name, got, want, rel in (("O", out, ref_out, 4e-3), ("state", state, ref_state, 1e-3)):
            err = (got.double() - want).abs().max().item()
            bound = rel * want.abs().max().item()  # fp16 (O) / fp32 (state) rounding
            if not err <= bound:  # also catches NaN
                raise AssertionError(f"retention {shape}: max |{name} - ref| = {err} > {bound}")
            errs.append(f"{name}:{err:.2e}")
        lines.append(f"PASS retention {shape} max_err={' '.join(errs)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=128)
    args = parser.parse_args()
    kernel = retention(8, 32, args.seq, args.dim, args.dim)
    ptx = kernel.get_kernel_source()
    print(f"compiled retention_fwd: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('mma.sync')} mma.sync")
    if tilelang.runtime.torch_if_gpu() is None:
        print("no torch with a CUDA GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
