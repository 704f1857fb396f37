"""Chunked causal linear attention forward, with its final state.

    python examples/families/linear_attention.py [--seq 4096] [--dim 128]

For Q, K of shape (B, H, T, DK) and V of shape (B, H, T, DV), fp16:

    O[t] = scale * sum_{s <= t} (q_t . k_s) v_s        (no softmax, no normalizer)
    S_T  = sum_s k_s^T v_s                             (DK x DV, float32)

The sequence is cut into chunks of `chunk` tokens. A block owns one head
and `block_V` columns of V and O, and walks the chunks in order carrying the
running state S = K^T V of every chunk before the current one in an fp32
fragment. For chunk c (rows t0 .. t0 + chunk):

    A   = Q_c K_c^T, lower triangle kept (j <= i)      intra-chunk scores
    O_c = scale * (A V_c + Q_c S)                      S still the previous chunks'
    S  += K_c^T V_c

so the work is linear in T. A goes to the tensor cores from registers (cast
to fp16 as the A operand of A V_c); Q_c S reads S through a shared fp16 copy
made at the top of each chunk (as FLA keeps its chunk states in the input
dtype); K_c^T V_c reads K_c transposed from the same shared tile Q K^T used.
TileLang constructs: `T.Pipelined` over chunks (Q, K, V tiles staged into
shared memory ahead of the math), four `T.gemm`s accumulating in fp32
(`clear_accum`, `transpose_A`, `transpose_B`; wgmma on sm_90a, mma.sync on
sm_80), a `T.Parallel` causal mask, a loop-carried fragment. On sm_90a the
chunk loop is warp-specialized: a producer warpgroup stages Q, K and V by
TMA, the consumer warpgroups run the gemms. Any T (chunks
past the end load as zeros, which add nothing to S; their rows are not
stored), DK up to 256 in one block, any DV (split over `block_V`).
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T


def default_config(dim_k):
    """Chunk, V columns a block and threads for an H100/H200 (sm_90a).

    DK 128: chunks of 128 on two consumer warpgroups (each owns 64 rows of a
    chunk; the TMA producer is a third), so that an SM runs two warpgroups of
    math; DK 64: chunks of 64 on one warpgroup (a K^T V of 64 rows split over
    two warpgroups would leave wgmma); DK 256: chunks of 64 on 256 threads
    (the 256 x 64 fp32 state then takes 64 registers a thread; the two
    warpgroups split the 64 columns of Q S and A V_c, 32 each, which tlc
    runs on mma.sync rather than wgmma, whose N-major B it takes in blocks
    of 64 columns; the larger tiles that would keep wgmma do not fit
    registers or shared memory).
    """
    if dim_k <= 64:
        return {"chunk": 64, "block_V": 64, "threads": 128}
    if dim_k <= 128:
        return {"chunk": 128, "block_V": 64, "threads": 256}
    return {"chunk": 64, "block_V": 64, "threads": 256}


@tilelang.jit(out_idx=[3, 4])
def linear_attention(batch, heads, seq_len, dim_k, dim_v, scale=None, chunk=None, block_V=None,
                     num_stages=2, threads=None, dtype="float16"):
    """(Q, K, V) -> (O, final state): O (B, H, T, DV) in `dtype`, state (B, H, DK, DV) f32.

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
    def linear_attn_fwd(Q: T.Tensor([batch, heads, seq_len, dim_k], dtype),
                        K: T.Tensor([batch, heads, seq_len, dim_k], dtype),
                        V: T.Tensor([batch, heads, seq_len, dim_v], dtype),
                        O: T.Tensor([batch, heads, seq_len, dim_v], dtype),
                        S_final: T.Tensor([batch, heads, dim_k, dim_v], accum)):
        with T.Kernel(T.ceildiv(dim_v, block_V), heads, batch, threads=threads) as (bv, h, b):
            col0 = bv * block_V
            q_s = T.alloc_shared([chunk, dim_k], dtype)
            k_s = T.alloc_shared([chunk, dim_k], dtype)
            v_s = T.alloc_shared([chunk, block_V], dtype)
            state_s = T.alloc_shared([dim_k, block_V], dtype)  # S as a gemm operand
            out_s = T.alloc_shared([chunk, block_V], dtype)
            scores = T.alloc_fragment([chunk, chunk], accum)
            scores_lo = T.alloc_fragment([chunk, chunk], dtype)  # causal part, A of A V
            out = T.alloc_fragment([chunk, block_V], accum)
            state = T.alloc_fragment([dim_k, block_V], accum)

            T.clear(state)
            for c in T.Pipelined(T.ceildiv(seq_len, chunk), num_stages=num_stages):
                t0 = c * chunk
                T.copy(Q[b, h, t0:t0 + chunk, :], q_s)
                T.copy(K[b, h, t0:t0 + chunk, :], k_s)
                T.copy(V[b, h, t0:t0 + chunk, col0:col0 + block_V], v_s)

                # FullRow: every warp holds whole rows of the scores, so the causal
                # part is already where the A operand of A V_c needs it.
                T.gemm(q_s, k_s, scores, transpose_B=True, clear_accum=True, policy=full_row)
                for i, j in T.Parallel(chunk, chunk):
                    scores_lo[i, j] = T.if_then_else(j <= i, scores[i, j], 0)
                T.copy(state, state_s)  # S of the chunks before this one
                T.gemm(scores_lo, v_s, out, clear_accum=True, policy=full_row)
                T.gemm(q_s, state_s, out, policy=full_row)
                # S += K_c^T V_c (K_c read transposed from its shared tile)
                T.gemm(k_s, v_s, state, transpose_A=True)

                for i, j in T.Parallel(chunk, block_V):
                    out_s[i, j] = out[i, j] * scale
                T.copy(out_s, O[b, h, t0:t0 + chunk, col0:col0 + block_V])

            T.copy(state, S_final[b, h, :, col0:col0 + block_V])

    return linear_attn_fwd


def reference(q, k, v, scale=None):
    """float64 numpy: (O, final state) of causal linear attention, quadratic form."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = np.tril(q @ k.swapaxes(-1, -2))
    return scale * scores @ v, k.swapaxes(-1, -2) @ v


def _torch_reference(torch, q, k, v, scale):
    q, k, v = (t.float() for t in (q, k, v))
    scores = torch.tril(q @ k.transpose(-1, -2))
    return scale * scores @ v, k.transpose(-1, -2) @ v



# (batch, heads, seq_len, dim_k, dim_v)
GPU_SHAPES = [
    (2, 16, 4096, 128, 128),
    (4, 8, 2048, 64, 64),
    (2, 8, 1000, 128, 128),   # 1000 tokens: no chunk divides them
    (1, 4, 777, 128, 96),     # DV 96: the last V block is half full
    (1, 8, 2048, 256, 128),
]


def gpu_kernel(batch, heads, seq, dk, dv):
    """The kernel gpu_check launches for one GPU_SHAPES entry: without out_idx,
    so that the outputs can be passed in filled with NaN."""
    return tilelang.jit(linear_attention.factory)(batch, heads, seq, dk, dv)


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
        # Unit-norm queries and keys, as linear-attention models feed them.
        q = torch.nn.functional.normalize(torch.randn(batch, heads, seq, dk, device="cuda"),
                                          dim=-1).half()
        k = torch.nn.functional.normalize(torch.randn(batch, heads, seq, dk, device="cuda"),
                                          dim=-1).half()
        v = torch.randn(batch, heads, seq, dv, device="cuda", dtype=torch.float16)
        out = torch.full((batch, heads, seq, dv), float("nan"), device="cuda",
                         dtype=torch.float16)
        state = torch.full((batch, heads, dk, dv), float("nan"), device="cuda")
        kernel(q, k, v, out, state)
        torch.cuda.synchronize()
        ref_out, ref_state = _torch_reference(torch, q, k, v, dk ** -0.5)
        shape = f"B{batch} H{heads} T{seq} DK{dk} DV{dv}"
        errs = []
        for name, got, want, rel in (("O", out, ref_out, 4e-3), ("state", state, ref_state, 1e-3)):
            err = (got.float() - want).abs().max().item()
            bound = rel * want.abs().max().item()  # fp16 (O) / fp32 (state) rounding
            if not err <= bound:  # also catches NaN
                raise AssertionError(f"linear_attention {shape}: max |{name} - ref| = {err} "
                                     f"> {bound}")
            errs.append(f"{name}:{err:.2e}")
        lines.append(f"PASS linear_attention {shape} max_err={' '.join(errs)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=128)
    args = parser.parse_args()
    kernel = linear_attention(8, 32, args.seq, args.dim, args.dim)
    ptx = kernel.get_kernel_source()
    print(f"compiled linear_attn_fwd: {ptx.count('wgmma.mma_async')} wgmma, "
          f"{ptx.count('cp.async.bulk.tensor')} TMA, {ptx.count('mma.sync')} mma.sync")
    if tilelang.runtime.torch_if_gpu() is None:
        print("no torch with a CUDA GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
