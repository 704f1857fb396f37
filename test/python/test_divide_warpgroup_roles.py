"""tile-divide-warpgroup-roles on a program written as TileLang's MLA-decode example is
(contiguous latent and rope tensors, the probabilities copied to shared memory before the
row sums are updated and the output rescaled, the output staged through a swizzled shared
tile): FlashMLA's division on sm_90a, the column split elsewhere, and what stops it."""

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.layout import make_swizzled_layout

from ptxas import assemble


def mla(batch, heads, seqlen, dim, pe_dim, block_N=64, block_H=64, threads=256,
        num_stages=2, scale_after_copy=True, p_path="shared", lse=False):
    """One block of block_H heads walks seqlen keys block_N at a time (TileLang's order of
    statements when `scale_after_copy`: S copied to shared memory before the row sums and
    the output's rescale). `p_path`: how P reaches the output's gemm: "shared" (S_shared),
    "shared_fragment" (S_shared, then a fragment: TileLang's split-KV kernel) or "fragment"
    (a cast fragment). With `lse`, a sixth tensor receives each row's log2-sum-exp, written
    into the row sums after the output is normalized."""
    scale = (1.0 / (dim + pe_dim)) ** 0.5 * 1.44269504
    dtype, acc = "float16", "float32"

    @T.macro
    def body(Q, Q_pe, KV, K_pe, Output, Lse):
        with T.Kernel(heads // block_H, batch, threads=threads) as (hid, bid):
            Q_shared = T.alloc_shared([block_H, dim], dtype)
            S_shared = T.alloc_shared([block_H, block_N], dtype)
            Q_pe_shared = T.alloc_shared([block_H, pe_dim], dtype)
            KV_shared = T.alloc_shared([block_N, dim], dtype)
            K_pe_shared = T.alloc_shared([block_N, pe_dim], dtype)
            O_shared = T.alloc_shared([block_H, dim], dtype)
            acc_s = T.alloc_fragment([block_H, block_N], acc)
            acc_s_cast = T.alloc_fragment([block_H, block_N], dtype)
            acc_o = T.alloc_fragment([block_H, dim], acc)
            row_max = T.alloc_fragment([block_H], acc)
            row_max_prev = T.alloc_fragment([block_H], acc)
            row_scale = T.alloc_fragment([block_H], acc)
            row_sum = T.alloc_fragment([block_H], acc)
            total = T.alloc_fragment([block_H], acc)
            T.annotate_layout({O_shared: make_swizzled_layout(O_shared)})

            T.copy(Q[bid, hid * block_H:(hid + 1) * block_H, :], Q_shared)
            T.copy(Q_pe[bid, hid * block_H:(hid + 1) * block_H, :], Q_pe_shared)
            T.fill(acc_o, 0)
            T.fill(total, 0)
            T.fill(row_max, -T.infinity(acc))
            for k in T.Pipelined(T.ceildiv(seqlen, block_N), num_stages=num_stages):
                T.copy(KV[bid, k * block_N:(k + 1) * block_N, 0, :], KV_shared)
                T.copy(K_pe[bid, k * block_N:(k + 1) * block_N, 0, :], K_pe_shared)
                T.gemm(Q_shared, KV_shared, acc_s, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
                T.gemm(Q_pe_shared, K_pe_shared, acc_s, transpose_B=True,
                       policy=T.GemmWarpPolicy.FullCol)
                T.copy(row_max, row_max_prev)
                T.fill(row_max, -T.infinity(acc))
                T.reduce_max(acc_s, row_max, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    row_scale[i] = T.exp2(row_max_prev[i] * scale - row_max[i] * scale)
                for i, j in T.Parallel(block_H, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - row_max[i] * scale)
                T.reduce_sum(acc_s, row_sum, dim=1)
                if scale_after_copy:
                    if p_path == "fragment":
                        T.copy(acc_s, acc_s_cast)
                    else:
                        T.copy(acc_s, S_shared)
                    if p_path == "shared_fragment":
                        T.copy(S_shared, acc_s_cast)
                for i in T.Parallel(block_H):
                    total[i] = total[i] * row_scale[i] + row_sum[i]
                for i, j in T.Parallel(block_H, dim):
                    acc_o[i, j] *= row_scale[i]
                if not scale_after_copy:
                    T.copy(acc_s, S_shared)
                    # The row scale is written again after P is published: warpgroup 1
                    # would read a value the program never has there.
                    for i in T.Parallel(block_H):
                        row_scale[i] = 1.0
                if p_path == "shared":
                    T.gemm(S_shared, KV_shared, acc_o, policy=T.GemmWarpPolicy.FullCol)
                else:
                    T.gemm(acc_s_cast, KV_shared, acc_o, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(block_H, dim):
                acc_o[i, j] /= total[i]
            if lse:
                for i in T.Parallel(block_H):
                    total[i] = T.log2(total[i]) + row_max[i] * scale
                T.copy(total, Lse[bid, hid * block_H:(hid + 1) * block_H])
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bid, hid * block_H:(hid + 1) * block_H, :])

    @T.prim_func
    def main(Q: T.Tensor([batch, heads, dim], dtype), Q_pe: T.Tensor([batch, heads, pe_dim], dtype),
             KV: T.Tensor([batch, seqlen, 1, dim], dtype),
             K_pe: T.Tensor([batch, seqlen, 1, pe_dim], dtype),
             Output: T.Tensor([batch, heads, dim], dtype)):
        body(Q, Q_pe, KV, K_pe, Output, None)

    @T.prim_func
    def main_lse(Q: T.Tensor([batch, heads, dim], dtype),
                 Q_pe: T.Tensor([batch, heads, pe_dim], dtype),
                 KV: T.Tensor([batch, seqlen, 1, dim], dtype),
                 K_pe: T.Tensor([batch, seqlen, 1, pe_dim], dtype),
                 Output: T.Tensor([batch, heads, dim], dtype),
                 Lse: T.Tensor([batch, heads], acc)):
        body(Q, Q_pe, KV, K_pe, Output, Lse)

    return main_lse if lse else main


@pytest.mark.parametrize("p_path,lse", [("shared", False), ("shared_fragment", True),
                                         ("fragment", False)])
def test_tilelang_form_is_divided(p_path, lse, tmp_path):
    kernel = tlc.compile(mla(132, 128, 8192, 512, 64, p_path=p_path, lse=lse), target="sm_90a")
    optimized = kernel.get_mlir("optimized")
    assert optimized.count("tile.ws warpgroups") == 3
    code = kernel.get_kernel_source()
    assert ".maxntid 384" in code
    assert code.count("wgmma.mma_async.sync.aligned.m64n64k16") == (512 + 64) // 16
    assert code.count("wgmma.mma_async.sync.aligned.m64n256k16") == 2 * 64 // 16
    assert "m64n32k16" not in code
    assemble(code, "sm_90a", tmp_path)


@pytest.mark.parametrize("change", [
    dict(threads=128, dim=256),             # one warpgroup: nothing to divide
    dict(scale_after_copy=False),           # a row vector written after P is published
    dict(target="sm_90"),                   # no wgmma or setmaxnreg
])
def test_kept_as_written(change):
    change = dict(change)
    target = change.pop("target", "sm_90a")
    args = dict(batch=2, heads=64, seqlen=256, dim=512, pe_dim=64)
    args.update(change)
    kernel = tlc.compile(mla(**args), target=target)
    assert "tile.ws" not in kernel.get_mlir("optimized")


def reference(q, q_pe, kv, k_pe):
    query = np.concatenate([q, q_pe], -1).astype(np.float64)
    keys = np.concatenate([kv[:, :, 0], k_pe[:, :, 0]], -1).astype(np.float64)
    s = np.einsum("bhd,bsd->bhs", query, keys) / np.sqrt(query.shape[-1])
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhs,bsd->bhd", p / p.sum(-1, keepdims=True), kv[:, :, 0].astype(np.float64))


@pytest.mark.parametrize("p_path,lse", [("shared", False), ("shared_fragment", True),
                                         ("fragment", False)])
def test_interpreter_matches_numpy(p_path, lse):
    # The program's meaning, which the division keeps (GPU checks: bench/mla_gpu.py).
    rng = np.random.default_rng(3)
    batch, heads, seqlen, dim, pe_dim = 2, 64, 128, 128, 64
    kernel = tlc.jit(mla, out_idx=[4, 5] if lse else [4], interpret=True)(
        batch, heads, seqlen, dim, pe_dim, block_N=32, p_path=p_path, lse=lse)
    q = rng.standard_normal((batch, heads, dim)).astype(np.float16)
    q_pe = rng.standard_normal((batch, heads, pe_dim)).astype(np.float16)
    kv = rng.standard_normal((batch, seqlen, 1, dim)).astype(np.float16)
    k_pe = rng.standard_normal((batch, seqlen, 1, pe_dim)).astype(np.float16)
    outs = kernel(q, q_pe, kv, k_pe)
    out = outs[0] if lse else outs
    np.testing.assert_allclose(out, reference(q, q_pe, kv, k_pe), rtol=1e-2, atol=3e-3)
    if lse:
        query = np.concatenate([q, q_pe], -1).astype(np.float64)
        keys = np.concatenate([kv[:, :, 0], k_pe[:, :, 0]], -1).astype(np.float64)
        s = np.einsum("bhd,bsd->bhs", query, keys) / np.sqrt(dim + pe_dim)
        np.testing.assert_allclose(outs[1], np.log2(np.exp(s).sum(-1)), rtol=1e-3, atol=1e-3)
