"""The attention-backward variants session 25 built for its run 3, made from
examples/attention_backward.py by replacing parts of its text (so the example
stays the one copy of the program):

- tile: the dQ accumulator row-major (no T.Layout), added by one tile
  T.atomic_add (vector reductions on sm_90);
- async: S^T and dP^T issued together and waited for once, then dV, dK and
  dQ's gemms together (wg_wait=-1, T.wait_wgmma);
- asynctile: both;
- split: head dims in 64-column halves (dQ computed half at a time).

    import variants; sys.path.insert(0, variants.write(DIR))
    import attention_backward_tile
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "..", "..", "examples", "attention_backward.py")

ATOMICS = """                for i, d in T.Parallel(block_M, dim):
                    if qb * block_M + i < seq:
                        T.atomic_add(dQacc[b, h, qb * block_M + i, d], dq[i, d])
"""
TILE_ATOMIC = """                T.atomic_add(dQacc[b, h, qb * block_M:(qb + 1) * block_M, :], dq)
"""
ANNOTATE = "            T.annotate_layout({dQacc: dq_accumulator_layout(dQacc)})\n"
GEMMS_START = "                T.clear(s_t)\n                T.gemm(k, q, s_t, transpose_B=True)"
GEMMS_END = "                for i, d in T.Parallel(block_M, dim):\n                    if qb"
ASYNC_GEMMS = '                T.clear(s_t)\n                T.gemm(k, q, s_t, transpose_B=True, wg_wait=-1)\n                T.clear(dp_t)\n                T.gemm(v, do, dp_t, transpose_B=True, wg_wait=-1)\n                T.wait_wgmma(0)\n                for j, i in T.Parallel(block_N, block_M):\n                    seen = (kb * block_N + j <= qb * block_M + i) if causal else True\n                    s_t[j, i] = T.if_then_else(seen and kb * block_N + j < seq,\n                                               T.exp2(s_t[j, i] * scale - lse[i]), 0)\n                T.copy(s_t, p_t)\n                for j, i in T.Parallel(block_N, block_M):\n                    dp_t[j, i] = s_t[j, i] * (dp_t[j, i] - delta[i])\n                T.copy(dp_t, ds_t)\n                T.gemm(p_t, do, dv, wg_wait=-1)\n                T.gemm(ds_t, q, dk, wg_wait=-1)\n                T.clear(dq)\n                T.gemm(ds_t, k, dq, transpose_A=True, wg_wait=-1)\n                T.wait_wgmma(0)\n'
SPLIT_BACKWARD = '@tlc.jit(pass_configs={"tl.enable_fast_math": True})\ndef backward(batch, heads, seq, dim, causal=False, block_M=64, block_N=64, threads=128):\n    sm_scale = dim ** -0.5\n    scale = sm_scale * LOG2E\n    shape = [batch, heads, seq, dim]\n    chunks = list(range(dim // 64))\n\n    @T.prim_func\n    def attention_backward(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"),\n                           V: T.Tensor(shape, "float16"), dOut: T.Tensor(shape, "float16"),\n                           Lse: T.Tensor([batch, heads, seq], "float32"),\n                           Delta: T.Tensor([batch, heads, seq], "float32"),\n                           dQacc: T.Tensor(shape, "float32"), dK: T.Tensor(shape, "float16"),\n                           dV: T.Tensor(shape, "float16")):\n        with T.Kernel(T.ceildiv(seq, block_N), heads, batch, threads=threads) as (kb, h, b):\n            T.annotate_layout({dQacc: dq_accumulator_layout(dQacc)})\n            k = [T.alloc_shared([block_N, 64], "float16") for _ in chunks]\n            v = [T.alloc_shared([block_N, 64], "float16") for _ in chunks]\n            q = [T.alloc_shared([block_M, 64], "float16") for _ in chunks]\n            do = [T.alloc_shared([block_M, 64], "float16") for _ in chunks]\n            lse = T.alloc_shared([block_M], "float32")\n            delta = T.alloc_shared([block_M], "float32")\n            ds_t = T.alloc_shared([block_N, block_M], "float16")\n            s_t = T.alloc_fragment([block_N, block_M], "float32")\n            dp_t = T.alloc_fragment([block_N, block_M], "float32")\n            p_t = T.alloc_fragment([block_N, block_M], "float16")\n            dv = [T.alloc_fragment([block_N, 64], "float32") for _ in chunks]\n            dk = [T.alloc_fragment([block_N, 64], "float32") for _ in chunks]\n            dq = T.alloc_fragment([block_M, 64], "float32")\n            for c in chunks:\n                T.copy(K[b, h, kb * block_N:(kb + 1) * block_N, c * 64:(c + 1) * 64], k[c])\n                T.copy(V[b, h, kb * block_N:(kb + 1) * block_N, c * 64:(c + 1) * 64], v[c])\n                T.clear(dv[c])\n                T.clear(dk[c])\n            first = (kb * block_N) // block_M if causal else 0\n            for qb in T.Pipelined(first, T.ceildiv(seq, block_M), num_stages=2):\n                for c1 in chunks:\n                    T.copy(Q[b, h, qb * block_M:(qb + 1) * block_M, c1 * 64:(c1 + 1) * 64], q[c1])\n                    T.copy(dOut[b, h, qb * block_M:(qb + 1) * block_M, c1 * 64:(c1 + 1) * 64], do[c1])\n                T.copy(Lse[b, h, qb * block_M:(qb + 1) * block_M], lse)\n                T.copy(Delta[b, h, qb * block_M:(qb + 1) * block_M], delta)\n                T.clear(s_t)\n                for c2 in chunks:\n                    T.gemm(k[c2], q[c2], s_t, transpose_B=True)\n                for j, i in T.Parallel(block_N, block_M):\n                    seen = (kb * block_N + j <= qb * block_M + i) if causal else True\n                    s_t[j, i] = T.if_then_else(seen and kb * block_N + j < seq,\n                                               T.exp2(s_t[j, i] * scale - lse[i]), 0)\n                T.copy(s_t, p_t)\n                for c3 in chunks:\n                    T.gemm(p_t, do[c3], dv[c3])\n                T.clear(dp_t)\n                for c4 in chunks:\n                    T.gemm(v[c4], do[c4], dp_t, transpose_B=True)\n                for j, i in T.Parallel(block_N, block_M):\n                    dp_t[j, i] = s_t[j, i] * (dp_t[j, i] - delta[i])\n                T.copy(dp_t, ds_t)\n                for c5 in chunks:\n                    T.gemm(ds_t, q[c5], dk[c5])\n                for c6 in chunks:\n                    T.clear(dq)\n                    T.gemm(ds_t, k[c6], dq, transpose_A=True)\n                    for i, d in T.Parallel(block_M, 64):\n                        if qb * block_M + i < seq:\n                            T.atomic_add(dQacc[b, h, qb * block_M + i, c6 * 64 + d], dq[i, d])\n            for e in chunks:\n                for j, d in T.Parallel(block_N, 64):\n                    dk[e][j, d] *= sm_scale\n                T.copy(dk[e], dK[b, h, kb * block_N, e * 64])\n                T.copy(dv[e], dV[b, h, kb * block_N, e * 64])\n\n    return attention_backward\n\n\n'
BACKWARD_START = '@tlc.jit(pass_configs={"tl.enable_fast_math": True})\ndef backward('
BACKWARD_END = "@tlc.jit(out_idx=[1])\ndef dq_from_accumulator"


def _replace(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old[:60]
    return text.replace(old, new)


def _tile(text: str) -> str:
    text = _replace(text, ATOMICS, TILE_ATOMIC)
    assert ANNOTATE in text
    return text.replace(ANNOTATE, "")


def _async(text: str) -> str:
    a, b = text.index(GEMMS_START), text.index(GEMMS_END)
    return text[:a] + ASYNC_GEMMS + text[b:]


def _split(text: str) -> str:
    a, b = text.index(BACKWARD_START), text.index(BACKWARD_END)
    return text[:a] + SPLIT_BACKWARD + text[b:]


VARIANTS = {"tile": _tile, "async": _async, "asynctile": lambda t: _tile(_async(t)),
            "split": _split}


def write(out: str) -> str:
    """Writes attention_backward_<variant>.py for each variant into `out`."""
    os.makedirs(out, exist_ok=True)
    with open(EXAMPLE) as f:
        example = f.read()
    for name, make in VARIANTS.items():
        with open(os.path.join(out, f"attention_backward_{name}.py"), "w") as f:
            f.write(make(example))
    return out
