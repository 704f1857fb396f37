"""examples/attention.py: every variant compiles, the main config takes the fast path, and the
interpreter matches a numpy reference on small shapes."""


import numpy as np
import pytest

import tlc
import tlc.language as T
import example_modules




@pytest.fixture(scope="module")
def attention():
    return example_modules.load("attention")


def ptx(attention, *args, target="sm_90a", **kwargs) -> str:
    return tlc.compile(attention.attention.factory(*args, **kwargs),
                       target=target).get_kernel_source()


WARP_SPECIALIZED = ("cp.async.bulk.tensor", "wgmma.mma_async", "setmaxnreg")


@pytest.mark.parametrize("causal", [False, True])
def test_main_config_is_warp_specialized(attention, causal):
    # B8 H32 S4096 D128, 128x128 blocks, 2 stages, 256 threads: TMA producer, wgmma consumers.
    code = ptx(attention, 8, 32, 4096, 128, causal, block_M=128, block_N=128, num_stages=2,
               threads=256)
    for marker in WARP_SPECIALIZED:
        assert marker in code, marker
    assert "mma.sync" not in code
    # Both gemms on wgmma: 8 k-steps of Q K^T (D 128) + 8 of P V (block_N 128) per warpgroup,
    # each wgmma of the loop also appearing once more in the PTX.
    assert code.count("wgmma.mma_async") == 16


def test_head_dim_64_defaults_to_three_consumer_warpgroups(attention, tmp_path):
    # 192 queries a block at head dim 64 (FlashAttention-3's block: 1.04x SDPA against 0.87x
    # for 128 on the H200): three wgmma consumer warpgroups and the TMA producer, 512 threads.
    kernel = tlc.compile(attention.attention.factory(8, 32, 4096, 64), target="sm_90a")
    assert kernel.artifact["threads"] == [512, 1, 1]
    assert kernel.artifact["grid"][0] in (4096 // 192 + 1, str(4096 // 192 + 1))
    for marker in WARP_SPECIALIZED:
        assert marker in kernel.get_kernel_source(), marker
    # Explicit blocks still win; other head dims keep 128.
    assert tlc.compile(attention.attention.factory(8, 32, 4096, 64, block_M=128),
                       target="sm_90a").artifact["threads"] == [384, 1, 1]
    assert tlc.compile(attention.attention.factory(8, 32, 4096, 128),
                       target="sm_90a").artifact["threads"] == [384, 1, 1]


def test_example_compiles_with_fast_math(attention):
    # The decorator's tl.enable_fast_math: every exponential is the flush-to-zero
    # ex2 (one MUFU.EX2), none keeps the denormal fix-up.
    code = attention.attention(2, 8, 1000, 128, True).get_kernel_source()
    assert "ex2.approx.ftz.f32" in code and "ex2.approx.f32" not in code


@pytest.mark.parametrize("name,args,kwargs", [
    ("gqa4_bhsd_causal_bf16", (2, 8, 1024, 128, True),
     dict(layout="BHSD", heads_kv=2, dtype="bfloat16")),
    ("seq1000", (2, 8, 1000, 128, False), {}),
    ("d64_causal", (2, 8, 1024, 64, True), {}),
    ("d256", (2, 8, 1024, 256, False), {}),  # block_N 64 by default
    ("causal_masks_without_branch", (2, 8, 1000, 128, True), dict(branch_masks=False)),
])
def test_variant_is_warp_specialized(attention, name, args, kwargs):
    code = ptx(attention, *args, **kwargs)
    for marker in WARP_SPECIALIZED:
        assert marker in code, (name, marker)


@pytest.mark.parametrize("args,kwargs", [
    ((8, 32, 4096, 128, False), {}),
    ((8, 32, 4096, 128, True), {}),
    ((2, 8, 1000, 64, False), dict(heads_kv=2, layout="BHSD")),
    ((2, 8, 1024, 256, False), {}),
])
def test_overlap_issues_both_gemms_then_waits_for_one(attention, args, kwargs):
    # FlashAttention-3's schedule: Q K^T and P V are committed back to back and the softmax
    # starts after a wait that leaves P V running; every gemm is in the loop.
    code = ptx(attention, *args, overlap=True, **kwargs)
    for marker in WARP_SPECIALIZED:
        assert marker in code, marker
    assert "mma.sync" not in code
    # commit (c) and wait (w<n>) in program order
    steps = ["c" if "commit_group" in line else "w" + line.split()[-1].rstrip(";")
             for line in code.splitlines() if "wgmma.commit_group" in line
             or "wgmma.wait_group" in line]
    assert steps == ["c", "c", "w1", "w0"], steps


def test_overlap_compiles_for_sm80(attention):
    code = ptx(attention, 2, 8, 1000, 64, True, target="sm_80", heads_kv=2, block_M=64,
               block_N=64, overlap=True)
    assert "mma.sync" in code and "wgmma" not in code


@pytest.mark.parametrize("layout", ["BHSD", "BSHD"])
def test_dynamic_seq_len_is_warp_specialized(attention, layout):
    # A dynamic size after the first dimension: its stride (heads x dim or dim elements) is a
    # multiple of 16 bytes, so TMA maps it; the runtime encodes the map from the actual length.
    code = ptx(attention, 2, 8, T.dynamic("S"), 128, True, layout=layout, heads_kv=2)
    for marker in WARP_SPECIALIZED:
        assert marker in code, marker


@pytest.mark.parametrize("args,kwargs", [
    ((2, 8, 1000, 128, True), dict(heads_kv=2, block_M=64, block_N=64)),
    ((2, 8, T.dynamic("S"), 64, False), dict(layout="BHSD", block_M=64, block_N=64)),
])
def test_compiles_for_sm80(attention, args, kwargs):
    code = ptx(attention, *args, target="sm_80", **kwargs)
    assert "mma.sync" in code and "cp.async.cg" in code and "wgmma" not in code


@pytest.mark.parametrize("kwargs,message", [
    (dict(heads_kv=3), "heads_kv (3) must divide heads (8)"),
    (dict(layout="SBHD"), "layout must be one of"),
    (dict(dtype="float32"), "dtype must be float16 or bfloat16"),
])
def test_bad_arguments(attention, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        attention.attention.factory(1, 8, 256, 64, **kwargs)


def reference(q, k, v, causal, layout):
    """Attention in float64 with numpy; K and V heads repeated for GQA."""
    if layout == "BSHD":
        q, k, v = (t.transpose(0, 2, 1, 3) for t in (q, k, v))
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    out = (p / p.sum(-1, keepdims=True)) @ v
    return out.transpose(0, 2, 1, 3) if layout == "BSHD" else out


@pytest.mark.parametrize("seq,causal,heads_kv,layout,branch", [
    (96, False, 4, "BSHD", False),    # MHA; a last K block of 32 keys
    (96, True, 1, "BSHD", False),     # GQA 4: 64x32 blocks mask whole rows of a K block
    (90, False, 2, "BHSD", False),    # keys past the end masked, rows past it not stored
    (90, True, 2, "BSHD", False),
    (90, False, 1, "dynamic", False),  # T.dynamic("S"), BSHD
    (160, True, 2, "BSHD", True),     # masks only on the blocks crossing the diagonal
    (150, False, 1, "BHSD", True),    # and on the last block
    (96, True, 2, "BSHD", "overlap"),  # FlashAttention-3's schedule
    (90, False, 1, "BHSD", "overlap"),
    (32, False, 4, "BSHD", "overlap"),  # one K block: the loop runs no iteration
])
def test_interpreter_matches_numpy(attention, seq, causal, heads_kv, layout, branch):
    dynamic = layout == "dynamic"
    layout = "BSHD" if dynamic else layout
    overlap = branch == "overlap"
    kernel = tlc.jit(attention.attention.factory, out_idx=[3], interpret=True)(
        1, 4, T.dynamic("S") if dynamic else seq, 64, causal, heads_kv=heads_kv, layout=layout,
        block_M=64, block_N=32, threads=128, branch_masks=bool(branch), overlap=overlap)
    rng = np.random.default_rng(seq + heads_kv)
    q_shape, kv_shape = attention.qkv_shapes(1, 4, heads_kv, seq, 64, layout)
    q = rng.standard_normal(q_shape).astype(np.float16)
    k, v = (rng.standard_normal(kv_shape).astype(np.float16) for _ in range(2))
    out = kernel(q, k, v)  # starts as NaN: a row not stored stays NaN
    # P is rounded to fp16 before P V, as on the GPU: a few fp16 ulps.
    np.testing.assert_allclose(out, reference(q, k, v, causal, layout), rtol=1e-2, atol=2e-3)
