"""examples/attention_varlen.py: packed sequences of different lengths (FlashAttention's varlen
interface). The K-block loop takes the warp-specialized TMA + wgmma pipeline on sm_90a (its
producer reading the key offsets), sm_80 gets mma.sync and cp.async, both assemble without
spills, and the interpreter matches a numpy reference on uneven batches."""


import numpy as np
import pytest

import tlc
import tlc.language as T

from ptxas import assemble
import example_modules

WARP_SPECIALIZED = ("cp.async.bulk.tensor", "wgmma.mma_async", "setmaxnreg")


@pytest.fixture(scope="module")
def varlen():
    return example_modules.load("attention_varlen")


def compiled(varlen, *args, target="sm_90a", **kwargs):
    return tlc.compile(varlen.attention_varlen.factory(*args, **kwargs), target=target)


@pytest.mark.parametrize("causal", [False, True])
def test_main_config_is_warp_specialized(varlen, causal, tmp_path):
    # 32 heads, d128, 128x128 blocks, 2 stages, 256 threads, any batch.
    kernel = compiled(varlen, T.dynamic("batch"), 32, 128, causal)
    code = kernel.get_kernel_source()
    for marker in WARP_SPECIALIZED:
        assert marker in code, marker
    assert "mma.sync" not in code
    assert code.count("wgmma.mma_async") == 16  # as attention.py's: 8 + 8, each twice
    # The producer reads the sequence's key offset and issues K and V loads from it.
    producer = code[code.index("setmaxnreg.dec"):code.index("setmaxnreg.inc")]
    assert "cp.async.bulk.tensor" in producer
    meta = kernel.artifact
    assert meta["grid"] == ["ceildiv(max_seqlen_q, 128)", "32", "(batch_plus_1 + -1)"]
    assert [p["shape"] for p in meta["params"] if p["kind"] == "tensor"] == [
        ["total_q", 32, 128], ["total_k", 32, 128], ["total_k", 32, 128], ["batch_plus_1"],
        ["batch_plus_1"], ["total_q", 32, 128]]
    assemble(code, "sm_90a", tmp_path)


@pytest.mark.parametrize("name,args,kwargs", [
    ("d64_causal", (4, 8, 64, True), {}),
    ("d256", (4, 8, 256, False), {}),  # 128x64 blocks, the output staged in Q's tile
    ("gqa4_bf16_causal", (4, 8, 128, True), dict(heads_kv=2, dtype="bfloat16")),
    ("mqa", (4, 8, 128, False), dict(heads_kv=1)),
])
def test_variant_is_warp_specialized(varlen, name, args, kwargs, tmp_path):
    code = compiled(varlen, *args, **kwargs).get_kernel_source()
    for marker in WARP_SPECIALIZED:
        assert marker in code, (name, marker)
    assemble(code, "sm_90a", tmp_path)


@pytest.mark.parametrize("args,kwargs", [
    ((4, 8, 128, True), dict(heads_kv=2, block_M=64, block_N=64, threads=128)),
    ((4, 8, 128, False), dict(block_N=64)),
    ((T.dynamic("batch"), 8, 64, True), dict(heads_kv=2)),
])
def test_compiles_for_sm80(varlen, args, kwargs, tmp_path):
    code = compiled(varlen, *args, target="sm_80", **kwargs).get_kernel_source()
    assert "mma.sync" in code and "cp.async.cg" in code and "wgmma" not in code
    assemble(code, "sm_80", tmp_path)


@pytest.mark.parametrize("kwargs,message", [
    (dict(heads_kv=3), "heads_kv (3) must divide heads (8)"),
    (dict(dtype="float32"), "dtype must be float16 or bfloat16"),
    (dict(batch=0), "batch must be a positive int or T.dynamic(...), not 0"),
])
def test_bad_arguments(varlen, kwargs, message):
    args = dict(batch=2, heads=8, dim=64) | kwargs
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace(".", r"\.")):
        varlen.attention_varlen.factory(**args)


def interpreted(varlen, batch, heads, heads_kv, causal, **kwargs):
    return tlc.jit(varlen.attention_varlen.factory, out_idx=[6], interpret=True)(
        batch, heads, 64, causal, heads_kv=heads_kv, block_M=64, block_N=32, threads=128,
        **kwargs)


def inputs(varlen, lengths_q, lengths_k, heads, heads_kv, seed):
    rng = np.random.default_rng(seed)
    cu_q, cu_k = (np.array(varlen.offsets_of(n), np.int32) for n in (lengths_q, lengths_k))
    q = rng.standard_normal((cu_q[-1], heads, 64)).astype(np.float16)
    k, v = (rng.standard_normal((cu_k[-1], heads_kv, 64)).astype(np.float16) for _ in range(2))
    return q, k, v, cu_q, cu_k


def test_bad_call_arguments(varlen):
    kernel = interpreted(varlen, 2, 4, 2, False)
    q, k, v, cu_q, cu_k = inputs(varlen, [4, 6], [5, 7], 4, 2, 0)
    for args, message in [
            ((q, k, v, cu_q.astype(np.int64), cu_k, 6),
             "argument 'cu_seqlens_q' (param 4 of attend): expected dtype int32, got int64"),
            ((q, k, v, cu_q[:2], cu_k, 6),
             "argument 'cu_seqlens_q' (param 4 of attend): dim 0 must be 3, got 2"),
            ((q, k, v[:5], cu_q, cu_k, 6),
             "argument 'V' (param 3 of attend): dim 0 is symbol total_k = 5, but argument 'K' "
             "dim 0 set total_k = 12"),
            ((q, k, v, cu_q, cu_k, 6.0),
             "argument 'max_seqlen_q' (param 6 of attend): expected a int32 integer, got float")]:
        with pytest.raises(tlc.runtime.ArgumentError) as e:
            kernel(*args)
        assert message in str(e.value)


def reference(q, k, v, cu_q, cu_k, causal):
    """float64 numpy, one sequence at a time; the causal mask aligned bottom-right (query i
    sees keys j <= i + len_k - len_q); a query that sees no key gives zeros."""
    out = np.zeros(q.shape)
    group = q.shape[1] // k.shape[1]
    for b in range(len(cu_q) - 1):
        len_q, len_k = cu_q[b + 1] - cu_q[b], cu_k[b + 1] - cu_k[b]
        qs = q[cu_q[b]:cu_q[b + 1]].astype(np.float64).transpose(1, 0, 2)
        ks, vs = (np.repeat(t[cu_k[b]:cu_k[b + 1]].astype(np.float64), group, axis=1)
                  .transpose(1, 0, 2) for t in (k, v))
        s = qs @ ks.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
        keep = np.ones((len_q, len_k), bool)
        if causal:
            keep = np.arange(len_k)[None, :] <= np.arange(len_q)[:, None] + len_k - len_q
        s = np.where(keep, s, -np.inf)
        top = np.max(s, axis=-1, keepdims=True, initial=-np.inf)
        p = np.where(keep, np.exp(s - np.where(np.isfinite(top), top, 0)), 0)
        total = p.sum(-1, keepdims=True)
        o = (p / np.where(total > 0, total, 1)) @ vs
        out[cu_q[b]:cu_q[b + 1]] = o.transpose(1, 0, 2)
    return out


# (query lengths, key lengths or None for the same, causal, K/V heads of 4); blocks of 64
# queries and 32 keys.
CASES = [
    ([1, 100, 64, 37], None, False, 4),    # one token; lengths no block divides; MHA
    ([1, 100, 64, 37], None, True, 2),     # GQA 2; causal rows a whole K block masks
    ([130, 0, 33], None, True, 1),         # an empty sequence; MQA (GQA 4)
    ([1, 1, 1], [100, 37, 64], True, 2),   # decode: one query against its keys (last row)
    ([50, 0, 70], [80, 10, 30], True, 1),  # len_q > len_k: the first 40 queries see nothing
    ([50, 3, 70], [20, 0, 130], False, 2),  # no keys at all: zeros
    ([200, 65], [300, 129], True, 4),      # chunked prefill: queries are the last rows
]


@pytest.mark.parametrize("lengths_q,lengths_k,causal,heads_kv", CASES)
def test_interpreter_matches_numpy(varlen, lengths_q, lengths_k, causal, heads_kv):
    lengths_k = lengths_q if lengths_k is None else lengths_k
    kernel = interpreted(varlen, len(lengths_q), 4, heads_kv, causal)
    q, k, v, cu_q, cu_k = inputs(varlen, lengths_q, lengths_k, 4, heads_kv,
                                 sum(lengths_q) + sum(lengths_k))
    out = kernel(q, k, v, cu_q, cu_k, max(lengths_q))  # starts as NaN: a row not stored shows
    # P is rounded to fp16 before P V, as on the GPU: a few fp16 ulps.
    np.testing.assert_allclose(out, reference(q, k, v, cu_q, cu_k, causal), rtol=1e-2,
                               atol=2e-3)


def test_dynamic_batch_matches_numpy(varlen):
    kernel = interpreted(varlen, T.dynamic("batch"), 4, 2, True)
    for lengths in ([70, 1], [5, 64, 0, 129, 2]):
        q, k, v, cu_q, cu_k = inputs(varlen, lengths, lengths, 4, 2, len(lengths))
        np.testing.assert_allclose(kernel(q, k, v, cu_q, cu_k, max(lengths)),
                                   reference(q, k, v, cu_q, cu_k, True), rtol=1e-2, atol=2e-3)


def test_blocks_store_only_their_sequence(varlen):
    # Only sequence 1's blocks run (all query blocks, all heads): every row of sequences 0 and
    # 2 stays NaN, so no block writes past its sequence's end or before its start. Its third
    # query block (rows 128-191 of 150) is partial; the grid's fourth (max_seqlen_q 200) is past
    # its end and stores nothing.
    lengths = [100, 150, 200]
    kernel = interpreted(varlen, 3, 4, 4, False)
    q, k, v, cu_q, cu_k = inputs(varlen, lengths, lengths, 4, 4, 1)
    out = kernel(q, k, v, cu_q, cu_k, 200,
                 blocks=[(qb, h, 1) for qb in range(4) for h in range(4)])
    assert np.isnan(out[:100]).all() and np.isnan(out[250:]).all()
    np.testing.assert_allclose(out[100:250], reference(q, k, v, cu_q, cu_k, False)[100:250],
                               rtol=1e-2, atol=2e-3)


@pytest.mark.parametrize("causal", [False, True])
def test_cp_async_pipeline_interprets(varlen, causal):
    # sm_80's IR after tile-pipeline-loops: K and V tiles staged two deep, copies issued one
    # iteration ahead from the run-time offset, landing at their waits.
    kernel = compiled(varlen, 3, 4, 64, causal, target="sm_80", heads_kv=2, block_M=64,
                      block_N=64, threads=128)
    optimized = kernel.get_mlir("optimized")
    assert "nvvm.cp.async.wait.group" in optimized and "tile.stage" in optimized
    q, k, v, cu_q, cu_k = inputs(varlen, [1, 100, 130], [70, 100, 129], 4, 2, 3)
    out = np.full(q.shape, np.nan, np.float16)
    tlc.interpret(optimized, q, k, v, cu_q, cu_k, np.int32(130), out)
    np.testing.assert_allclose(out, reference(q, k, v, cu_q, cu_k, causal), rtol=1e-2,
                               atol=2e-3)
