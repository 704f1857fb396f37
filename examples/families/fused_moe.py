"""A mixture-of-experts FFN forward, fused per expert: gather, gate/up GEMMs,
SiLU(gate) * up, down GEMM, weighted combine. fp16 in and out, fp32 sums.

    python examples/families/fused_moe.py [--tokens 4096 --hidden 4096 --inter 1408
                                           --experts 64 --topk 6]

Each of the T tokens was routed by a gate to `topk` of E experts, with a
weight each (topk_ids, topk_weights: T x topk). Expert e is a SwiGLU FFN,
    y_e(x) = W_down[e] @ (silu(W_gate[e] @ x) * (W_up[e] @ x)),
and the layer's output is out[t] = sum_k topk_weights[t, k] * y_{e_k}(x_t).

Host side (moe_align, numpy): the T * topk (token, slot) pairs, numbered
t * topk + k, are sorted by expert; each expert's list is padded to a
multiple of block_M with an out-of-range slot number (T * topk), so that
every block of block_M consecutive entries belongs to one expert, named by
tile_expert. Only tiles that hold tokens exist: the grid follows the routing
(`entries` is a T.dynamic size), so one compiled kernel serves any routing;
`tokens` may be T.dynamic too.

Device side, one call, four kernels (`with T.Kernel` in one prim_func):

  1. zero: clears the fp32 accumulator of the output (T x D, T.alloc_global);
  2. gate_up: for each (expert tile, block_N columns of the intermediate
     size I): the tile's token rows of X are gathered by a T.Parallel
     reading X at each entry's token (slot // topk, kept in shared memory)
     into registers one K slice ahead (slice k + 1's loads are in flight
     while slice k's gemms run), stored to shared memory and multiplied with
     the expert's W_gate and W_up rows (two T.gemm with transpose_B on one A
     tile; the weights' tiles pipelined by T.Pipelined, their expert read
     from tile_expert: on sm_90a TMA loads by a producer warpgroup feeding
     wgmma); then silu(gate) * up, rounded to fp16, goes to the
     intermediate H (one row per sorted entry, T.alloc_global scratch);
  3. down: for each (expert tile, block_D columns of D): H's rows of the
     tile times the expert's W_down rows (T.gemm, pipelined), each row
     scaled by its routing weight and added into the accumulator row of its
     token with T.atomic_add (a token's topk experts meet there; padding
     entries point past the last token, where the atomic adds do nothing);
  4. cast: the accumulator rounded to fp16 into the output.

Shown: several T.Kernel in one prim_func with T.alloc_global scratch,
T.dynamic sizes (the grid follows the routing), a gather by an index list
in T.Parallel, copies whose start is read from a table (the expert), two
gemms on one A tile, T.Pipelined, T.atomic_add of scattered rows, SiLU
through T.exp2, T.min / T.if_then_else clamping, dtype-converting copies.
"""

import argparse
import sys

import numpy as np

import tlc as tilelang
import tlc.language as T

LOG2E = 1.4426950408889634


def moe_align(topk_ids, num_experts: int, block_M: int):
    """The sorted, padded slot list for the kernel, from topk_ids (T x topk,
    expert ids). Returns (slots, tile_expert): slots (int32, tiles * block_M)
    holds the numbers t * topk + k grouped by expert, ascending within an
    expert, each expert's group padded to a multiple of block_M with
    T * topk; tile_expert (int32, tiles) the expert of each block_M entries.
    numpy arrays in, numpy arrays out (torch tensors: call .cpu().numpy())."""
    ids = np.asarray(topk_ids).reshape(-1).astype(np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= num_experts):
        raise ValueError(f"expert ids must be in [0, {num_experts}), got "
                         f"{ids.min()} .. {ids.max()}")
    counts = np.bincount(ids, minlength=num_experts)
    tiles_of = -(-counts // block_M)  # ceil: tiles each expert needs
    order = np.argsort(ids, kind="stable")  # slots by expert, ascending in each
    slots = np.full(int(tiles_of.sum()) * block_M, ids.size, dtype=np.int32)
    starts = np.concatenate([[0], np.cumsum(tiles_of)[:-1]]) * block_M
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for e in np.nonzero(counts)[0]:
        slots[starts[e]:starts[e] + counts[e]] = order[firsts[e]:firsts[e] + counts[e]]
    tile_expert = np.repeat(np.arange(num_experts, dtype=np.int32), tiles_of)
    return slots, tile_expert


# Block configs. Many entries an expert (prefill): 128-entry tiles on two
# consumer warpgroups (each gate/up accumulator 128 x 128 in fp32 is 64
# registers a thread), K slices of 32 four stages deep (two gemms a stage, so
# as much tensor work a stage as a 64-deep GEMM's; and the gathered rows take
# few registers: tlc loads a T.Parallel's global reads into a fragment element
# by element, an address each, and with 64-deep slices ptxas spills). Few
# entries an expert (decode, small batches, T.dynamic token counts): 64-entry
# tiles, so less of each tile is padding, on one warpgroup.
LARGE = dict(block_M=128, block_N=128, block_K=32, block_D=128, threads=256, num_stages=4)
SMALL = dict(block_M=64, block_N=64, block_K=64, block_D=128, threads=128, num_stages=3)


def default_config(tokens, topk: int, E: int) -> dict:
    """LARGE where the experts average 96 entries or more, else SMALL (and
    for a T.dynamic token count). moe_align must use the same block_M."""
    if isinstance(tokens, int) and tokens * topk >= 96 * E:
        return dict(LARGE)
    return dict(SMALL)


@tilelang.jit(out_idx=[-1])
def fused_moe(tokens, D, I, E, topk, block_M=None, block_N=None, block_K=None, block_D=None,
              threads=None, num_stages=None, dtype="float16"):
    """out = the MoE layer's output for `tokens` rows (an int or T.dynamic) of
    hidden size D, E experts of intermediate size I, topk experts a token.
    block_M: entries of an expert tile; block_N / block_K: the gate/up GEMM's
    columns of I and K slices of D; block_D: the down GEMM's columns of D (its
    K slices are block_K of I). Unset ones from default_config."""
    config = default_config(tokens, topk, E)
    given = dict(block_M=block_M, block_N=block_N, block_K=block_K, block_D=block_D,
                 threads=threads, num_stages=num_stages)
    config.update({name: v for name, v in given.items() if v is not None})
    block_M, block_N, block_K, block_D = (config[n] for n in ("block_M", "block_N", "block_K",
                                                            "block_D"))
    threads, num_stages = config["threads"], config["num_stages"]
    entries = T.dynamic("entries")  # sorted, padded (token, slot) entries: tiles * block_M
    accum = "float32"
    routed = tokens * topk  # the padding entries' slot number: past every token

    @T.prim_func
    def fused_moe(X: T.Tensor((tokens, D), dtype),
                  W_gate: T.Tensor((E, I, D), dtype),
                  W_up: T.Tensor((E, I, D), dtype),
                  W_down: T.Tensor((E, D, I), dtype),
                  topk_weights: T.Tensor((tokens, topk), accum),
                  slots: T.Tensor((entries,), "int32"),
                  tile_expert: T.Tensor((entries // block_M,), "int32"),
                  out: T.Tensor((tokens, D), dtype)):
        H = T.alloc_global((entries, I), dtype)
        tiles = entries // block_M
        acc = T.alloc_global((tokens, D), accum)

        # 1. zero the accumulator
        with T.Kernel(T.ceildiv(D, block_D), T.ceildiv(tokens, block_M), threads=threads) as (
                bx, by):
            zeros = T.alloc_fragment((block_M, block_D), accum)
            T.clear(zeros)
            T.copy(zeros, acc[by * block_M, bx * block_D])

        # 2. H = silu(X_e @ W_gate[e]^T) * (X_e @ W_up[e]^T) for each tile's rows
        with T.Kernel(T.ceildiv(I, block_N), tiles, threads=threads) as (bx, by):
            x_s = T.alloc_shared((block_M, block_K), dtype)
            x_next = T.alloc_fragment((block_M, block_K), dtype)
            wg_s = T.alloc_shared((block_N, block_K), dtype)
            wu_s = T.alloc_shared((block_N, block_K), dtype)
            gate = T.alloc_fragment((block_M, block_N), accum)
            up = T.alloc_fragment((block_M, block_N), accum)
            h = T.alloc_fragment((block_M, block_N), dtype)
            row = T.alloc_shared((block_M,), "int32")
            e = tile_expert[by]
            n0 = bx * block_N
            for i in T.Parallel(block_M):
                # padding entries read the last token (their rows are never used)
                row[i] = T.min(slots[by * block_M + i] // topk, tokens - 1)
            T.clear(gate)
            T.clear(up)
            # The gathered rows' K slices go through registers one iteration
            # ahead: slice k + 1's loads are in flight during slice k's gemms.
            for i, j in T.Parallel(block_M, block_K):
                x_next[i, j] = X[row[i], j]
            for k in T.Pipelined(T.ceildiv(D, block_K), num_stages=num_stages):
                T.copy(x_next, x_s)
                for i, j in T.Parallel(block_M, block_K):
                    x_next[i, j] = X[row[i], (k + 1) * block_K + j]
                T.copy(W_gate[e, n0:n0 + block_N, k * block_K:(k + 1) * block_K], wg_s)
                T.copy(W_up[e, n0:n0 + block_N, k * block_K:(k + 1) * block_K], wu_s)
                T.gemm(x_s, wg_s, gate, transpose_B=True)
                T.gemm(x_s, wu_s, up, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                h[i, j] = T.cast(gate[i, j] / (1.0 + T.exp2(-gate[i, j] * LOG2E)) * up[i, j],
                                 dtype)
            T.copy(h, H[by * block_M, n0])

        # 3. acc[token] += weight * (H_e @ W_down[e]^T) for each tile's rows
        with T.Kernel(T.ceildiv(D, block_D), tiles, threads=threads) as (bx, by):
            h_s = T.alloc_shared((block_M, block_K), dtype)
            wd_s = T.alloc_shared((block_D, block_K), dtype)
            y = T.alloc_fragment((block_M, block_D), accum)
            token = T.alloc_fragment((block_M,), "int32")
            weight = T.alloc_fragment((block_M,), accum)
            e = tile_expert[by]
            d0 = bx * block_D
            T.clear(y)
            for k in T.Pipelined(T.ceildiv(I, block_K), num_stages=num_stages):
                T.copy(H[by * block_M, k * block_K], h_s)
                T.copy(W_down[e, d0:d0 + block_D, k * block_K:(k + 1) * block_K], wd_s)
                T.gemm(h_s, wd_s, y, transpose_B=True)
            for i in T.Parallel(block_M):
                slot = T.min(slots[by * block_M + i], routed - 1)
                # padding: token `tokens` (outside acc: the atomic adds skip it)
                token[i] = T.if_then_else(slots[by * block_M + i] < routed, slot // topk,
                                          tokens)
                weight[i] = topk_weights[slot // topk, slot % topk]
            for i, j in T.Parallel(block_M, block_D):
                T.atomic_add(acc[token[i], d0 + j], y[i, j] * weight[i])

        # 4. out = acc in fp16
        with T.Kernel(T.ceildiv(D, block_D), T.ceildiv(tokens, block_M), threads=threads) as (
                bx, by):
            total = T.alloc_fragment((block_M, block_D), accum)
            T.copy(acc[by * block_M, bx * block_D], total)
            T.copy(total, out[by * block_M, bx * block_D])

    return fused_moe


def reference(x, w_gate, w_up, w_down, topk_ids, topk_weights):
    """The layer in float64: out[t] = sum_k w[t, k] * FFN_{ids[t, k]}(x[t])."""
    x = x.astype(np.float64)
    out = np.zeros(x.shape)
    for e in np.unique(topk_ids):
        t, k = np.nonzero(topk_ids == e)
        xe = x[t]
        g = xe @ w_gate[e].astype(np.float64).T
        u = xe @ w_up[e].astype(np.float64).T
        h = g / (1 + np.exp(-g)) * u
        y = h @ w_down[e].astype(np.float64).T
        np.add.at(out, t, y * topk_weights[t, k, None].astype(np.float64))
    return out


def route(rng, tokens, E, topk, skew=0.0):
    """Random routing: topk distinct experts a token (with `skew`, a few
    experts draw most tokens) and softmax-normalised weights (float32)."""
    logits = rng.standard_normal((tokens, E)) + skew * np.linspace(3, 0, E)
    ids = np.argsort(-logits, axis=1, kind="stable")[:, :topk]
    w = np.exp(np.take_along_axis(logits, ids, axis=1))
    return ids.astype(np.int32), (w / w.sum(axis=1, keepdims=True)).astype(np.float32)


# (tokens, hidden, intermediate, experts, topk, skew, options); tokens None: the
# kernel compiled for T.dynamic("tokens") and called with 3 token counts
GPU_SHAPES = [(4096, 4096, 1408, 64, 6, 0.0, {}),        # DeepSeek-MoE-like
              (2048, 2048, 768, 128, 8, 0.0, {}),       # Qwen-MoE-like
              (1, 4096, 1408, 64, 6, 0.0, {}),          # decode: one token
              (37, 2048, 1408, 256, 8, 0.0, {}),        # a few tokens, many experts
              (1000, 1000, 520, 16, 2, 2.0, {}),        # sizes no block divides, skewed
              (4096, 4096, 1408, 64, 6, 0.0, SMALL),       # the other config
              (777, 4096, 1024, 8, 2, 0.0, {"num_stages": 2}),
              (None, 2048, 1024, 32, 4, 1.0, {})]


def _tokens_param(n_tokens):
    """The factory's `tokens` for a GPU_SHAPES entry's token count (None: dynamic)."""
    return T.dynamic("tokens") if n_tokens is None else n_tokens


def gpu_kernel(n_tokens, D, I, E, topk, skew, options):
    """The kernel gpu_check launches for one GPU_SHAPES entry (`skew` only
    shapes the routing, which the kernel does not depend on)."""
    return tilelang.jit(fused_moe.factory)(_tokens_param(n_tokens), D, I, E, topk, **options)


def gpu_kernels() -> list:
    """Every kernel gpu_check launches, compiled (no torch, no GPU needed)."""
    return [gpu_kernel(*case) for case in GPU_SHAPES]


def gpu_check() -> list[str]:
    """Runs the kernel on the GPU for several shapes against a torch fp32
    reference; returns one PASS line a shape, raises AssertionError otherwise."""
    import torch

    lines = []
    for n_tokens, D, I, E, topk, skew, options in GPU_SHAPES:
        block_M = options.get("block_M",
                              default_config(_tokens_param(n_tokens), topk, E)["block_M"])
        kernel = gpu_kernel(n_tokens, D, I, E, topk, skew, options)
        for tokens in ([n_tokens] if n_tokens is not None else [3, 500, 2999]):
            err, scale = _gpu_case(torch, kernel, tokens, D, I, E, topk, skew, block_M)
            lines.append(f"PASS fused_moe T={tokens}{' (dynamic)' if n_tokens is None else ''} "
                         f"D={D} I={I} E={E} topk={topk} {options or ''} max_err={err:.2e} "
                         f"(output scale {scale:.2f})")
    return lines


def _gpu_case(torch, kernel, tokens, D, I, E, topk, skew, block_M):
    """One run of the kernel against torch in fp32; (max error, output scale)."""
    rng = np.random.default_rng(tokens + D + E)
    ids, w = route(rng, tokens, E, topk, skew)
    slots, tile_expert = moe_align(ids, E, block_M)
    dev = lambda a: torch.from_numpy(a).cuda()  # noqa: E731
    gen = torch.Generator(device="cuda").manual_seed(E + tokens)
    x = torch.randn(tokens, D, device="cuda", generator=gen).half()
    wg = (torch.randn(E, I, D, device="cuda", generator=gen) * D ** -0.5).half()
    wu = (torch.randn(E, I, D, device="cuda", generator=gen) * D ** -0.5).half()
    wd = (torch.randn(E, D, I, device="cuda", generator=gen) * I ** -0.5).half()
    out = torch.full((tokens, D), float("nan"), device="cuda", dtype=torch.float16)
    kernel(x, wg, wu, wd, dev(w), dev(slots), dev(tile_expert), out)
    torch.cuda.synchronize()
    # torch in fp32 from the same fp16 values, the intermediate rounded to fp16
    # as the kernel keeps it
    ref = torch.zeros(tokens, D, device="cuda")
    ids_t, w_t = dev(ids).long(), dev(w)
    for e in ids_t.unique().tolist():
        t, k = (ids_t == e).nonzero(as_tuple=True)
        xe = x[t].float()
        h = (torch.nn.functional.silu(xe @ wg[e].float().T) * (xe @ wu[e].float().T)).half()
        ref.index_add_(0, t, (h.float() @ wd[e].float().T) * w_t[t, k, None])
    err = (out.float() - ref).abs()
    scale = ref.abs().max().item()
    ok = err <= 2e-3 * ref.abs() + 1e-3 * scale
    assert ok.all() and not torch.isnan(out).any(), (
        f"fused_moe T={tokens} D={D} I={I} E={E} topk={topk} block_M={block_M}: max err "
        f"{err.max().item():.3g} (output scale {scale:.3g}) at "
        f"{tuple(int(v) for v in (~ok).nonzero()[0]) if not ok.all() else 'NaN'}")
    return err.max().item(), scale


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--inter", type=int, default=1408)
    ap.add_argument("--experts", type=int, default=64)
    ap.add_argument("--topk", type=int, default=6)
    args = ap.parse_args()
    T_, D, I, E, K = args.tokens, args.hidden, args.inter, args.experts, args.topk
    kernel = fused_moe(T_, D, I, E, K)
    names = [k["name"] for k in kernel.artifact["kernels"]]
    ptxs = [k["ptx"] for k in kernel.artifact["kernels"]]
    print(f"compiled {kernel.name}: kernels {names}; gate_up "
          f"{ptxs[1].count('wgmma.mma_async')} wgmma + {ptxs[1].count('mma.sync')} mma.sync, "
          f"{ptxs[1].count('cp.async.bulk.tensor')} TMA loads; down "
          f"{ptxs[2].count('red.global.add') + ptxs[2].count('atom.global.add.f32')} atomic adds")
    torch = tilelang.runtime.torch_if_gpu()
    if torch is None:
        print("no GPU here: not run")
        return 0
    for line in gpu_check():
        print(line)
    rng = np.random.default_rng(0)
    ids, w = route(rng, T_, E, K)
    slots, tile_expert = moe_align(ids, E, default_config(T_, K, E)["block_M"])
    x = torch.randn(T_, D, device="cuda").half()
    wg = (torch.randn(E, I, D, device="cuda") * D ** -0.5).half()
    wu = (torch.randn(E, I, D, device="cuda") * D ** -0.5).half()
    wd = (torch.randn(E, D, I, device="cuda") * I ** -0.5).half()
    args_ = (x, wg, wu, wd, torch.from_numpy(w).cuda(), torch.from_numpy(slots).cuda(),
             torch.from_numpy(tile_expert).cuda())
    ms = tilelang.profiler.do_bench(lambda: kernel(*args_))
    flops = 2 * T_ * K * 3 * D * I
    print(f"T={T_} D={D} I={I} E={E} topk={K}: {ms * 1e3:.1f} us, "
          f"{flops / (ms * 1e-3) / 1e12:.0f} TFLOP/s (routed FLOPs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
