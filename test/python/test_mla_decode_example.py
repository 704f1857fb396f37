"""examples/mla_decode.py: the paged, variable-length program, written with the two warpgroups
splitting every gemm by columns, compiles to FlashMLA's division (a TMA producer reading the page
table, warpgroup 0 computing the scores whole, both warpgroups half the output), assembles
without spills, and the interpreter matches a numpy reference."""


import numpy as np
import pytest

import tlc
import tlc.language as T

from ptxas import assemble
import example_modules



@pytest.fixture(scope="module")
def mla():
    return example_modules.load("mla_decode")


def compiled(mla, *args, target="sm_90a", **kwargs):
    return tlc.compile(mla.mla_decode.factory(*args, **kwargs), target=target)


@pytest.mark.parametrize("pages", [16896, T.dynamic("pages")])
def test_warpgroups_take_flashmla_roles(mla, pages, tmp_path):
    # Written with every gemm FullCol on two warpgroups; tile-divide-warpgroup-roles
    # gives the 64 x 64 scores to warpgroup 0 whole (split by columns each warpgroup
    # would run m64n32), the output's halves to both, and a TMA producer the loads.
    kernel = compiled(mla, 132, 128, pages, 128)
    assert kernel.get_mlir("tile").count("tile.gemm") == 3
    optimized = kernel.get_mlir("optimized")
    assert "warps_n = 2" not in optimized
    assert optimized.count("tile.ws warpgroups") == 3
    code = kernel.get_kernel_source()
    assert ".maxntid 384" in code
    for marker in ("cp.async.bulk.tensor", "mbarrier.try_wait"):
        assert marker in code, marker
    # Warpgroup 0: the scores over K = 256 + 256 (the latent halves) + 64 (rope), 16
    # deep; both warpgroups: 64 x 256 of the output over the page's 64 tokens,
    # warpgroup 0's with P from registers.
    assert code.count("wgmma.mma_async.sync.aligned.m64n64k16") == (256 + 256 + 64) // 16
    assert code.count("wgmma.mma_async.sync.aligned.m64n256k16") == 2 * 64 // 16
    assert "m64n32k16" not in code and "mma.sync" not in code
    assert [line.split()[0] for line in code.splitlines() if "setmaxnreg" in line] == [
        "setmaxnreg.dec.sync.aligned.u32", "setmaxnreg.inc.sync.aligned.u32",
        "setmaxnreg.inc.sync.aligned.u32"]
    # The page of each step is read from the table by the producer, ahead of the consumers.
    producer = code[code.index("setmaxnreg.dec"):code.index("setmaxnreg.inc")]
    assert "ld.global" in producer and "cp.async.bulk.tensor" in producer
    # 128 fp32 accumulator registers of the output per thread, and no spills.
    assemble(code, "sm_90a", tmp_path)


def test_split_kv_is_two_kernels(mla, tmp_path):
    # num_split: the chunks' kernel (the same warp-specialized pipeline) writes partial
    # outputs and log-sum-exps to global scratch sized from the arguments; a second kernel
    # combines them. One artifact, both launched by one call.
    kernel = compiled(mla, 8, 128, T.dynamic("pages"), 128, num_split=4)
    first, combine = kernel.artifact["kernels"]
    assert first["grid"] == ["4", "2", "8"] and combine["grid"] == ["128", "8", "1"]
    assert [(s["name"], s["shape"]) for s in kernel.artifact["scratch"]] == [
        ("o_partial", [8, 128, 4, 512]), ("lse", [8, 128, 4])]
    for marker in ("cp.async.bulk.tensor", "setmaxnreg", "wgmma.mma_async"):
        assert marker in first["ptx"], marker
    for k in (first, combine):
        assemble(k["ptx"], "sm_90a", tmp_path)


def test_compiles_for_sm80(mla):
    # One stage of the 64 x 576 cache tile fits the A100's 163 KB beside Q.
    code = compiled(mla, 2, 64, 32, 16, num_stages=1, target="sm_80").get_kernel_source()
    assert "mma.sync" in code and "wgmma" not in code


def test_heads_must_fill_blocks(mla):
    with pytest.raises(ValueError, match=r"block_H \(64\) must divide heads \(96\)"):
        mla.mla_decode.factory(1, 96, 16, 16)
    with pytest.raises(ValueError, match="num_split must be at least 1, not 0"):
        mla.mla_decode.factory(1, 64, 16, 16, num_split=0)


def reference(q, cache, table, lens, kv_dim):
    q, cache = q.astype(np.float64), cache.astype(np.float64)
    page = cache.shape[1]
    out = np.empty(q.shape[:2] + (kv_dim,))
    for b, n in enumerate(lens):
        tokens = cache[table[b, :(n + page - 1) // page]].reshape(-1, cache.shape[-1])[:n]
        s = q[b] @ tokens.T / np.sqrt(q.shape[-1])
        p = np.exp(s - s.max(-1, keepdims=True))
        out[b] = (p / p.sum(-1, keepdims=True)) @ tokens[:, :kv_dim]
    return out


# Small cases for the interpreter: (sequence lengths, num_split). With split 3, 130
# tokens are 5 pages in chunks of 2, 2, 1, and 33 tokens are 2 pages: its third chunk
# has none (no weight in the combine). Lengths no page divides leave a last page whose
# other rows are masked.
SMALL_CASES = [([128, 64], 1), ([100, 37], 1), ([1, 130], 1), ([130, 33], 3), ([200, 1], 2)]


def interpret_against_numpy(factory, lens, split, page=32):
    """Runs the kernel `factory` makes (mla_decode's arguments) in the interpreter on
    128 heads of a 128 + 64 latent cache (small widths and pages of 32 keep it quick),
    its pages shuffled, and compares with the numpy reference."""
    pages = [(n + page - 1) // page for n in lens]
    rng = np.random.default_rng(sum(lens))
    order = rng.permutation(sum(pages)).astype(np.int32)  # pages in shuffled order
    table = np.zeros((len(lens), max(pages)), np.int32)
    starts = np.cumsum([0] + pages)
    for b, n in enumerate(pages):
        table[b, :n] = order[starts[b]:starts[b] + n]
    kernel = tlc.jit(factory, out_idx=[4], interpret=True)(
        len(lens), 128, T.dynamic("pages"), table.shape[1], kv_dim=128, rope_dim=64,
        page_size=page, num_split=split)
    q = rng.standard_normal((len(lens), 128, 192)).astype(np.float16)
    cache = rng.standard_normal((sum(pages), page, 192)).astype(np.float16)
    seq_lens = np.array(lens, np.int32)
    # P is rounded to fp16 before P V, as on the GPU.
    np.testing.assert_allclose(kernel(q, cache, table, seq_lens),
                               reference(q, cache, table, lens, 128), rtol=1e-2, atol=3e-3)


@pytest.mark.parametrize("lens,split", SMALL_CASES)
def test_interpreter_matches_numpy(mla, lens, split):
    interpret_against_numpy(mla.mla_decode.factory, lens, split)
