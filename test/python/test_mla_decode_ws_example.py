"""examples/mla_decode_ws.py, MLA decode with the warpgroups' roles written out (FlashMLA's
schedule; the split-KV and argument tests also run examples/mla_decode_seesaw.py): it compiles to one TMA producer and two consumers, warpgroup 0 computing every
score with m64n64 wgmma and warpgroup 1 only its half of P V, assembles without spills, and
the interpreter matches a numpy reference (the same cases as mla_decode's)."""


import pytest

import tlc
import tlc.language as T

from ptxas import assemble
from test_mla_decode_example import SMALL_CASES, interpret_against_numpy
import example_modules



@pytest.fixture(scope="module")
def mla():
    return example_modules.load("mla_decode_ws")


def test_roles(mla, tmp_path):
    kernel = tlc.compile(mla.mla_decode_ws.factory(132, 128, T.dynamic("pages"), 128),
                         target="sm_90a")
    code = kernel.get_kernel_source()
    # Warpgroup 0: the 64 x 64 scores over K = 256 + 256 + 64, 16 deep, one wait for all three
    # gemms; both warpgroups: 64 x 256 of the output over the page's 64 tokens.
    assert code.count("wgmma.mma_async.sync.aligned.m64n64k16") == (256 + 256 + 64) // 16
    assert code.count("wgmma.mma_async.sync.aligned.m64n256k16") == 2 * 64 // 16
    assert code.count("wgmma.wait_group") == 3
    assert [line.split()[0] for line in code.splitlines() if "setmaxnreg" in line] == [
        "setmaxnreg.dec.sync.aligned.u32", "setmaxnreg.inc.sync.aligned.u32",
        "setmaxnreg.inc.sync.aligned.u32"]
    producer = code[code.index("setmaxnreg.dec"):code.index("setmaxnreg.inc")]
    assert "ld.global" in producer and "cp.async.bulk.tensor" in producer
    assert "mma.sync" not in code
    assemble(code, "sm_90a", tmp_path)  # no spills, every setmaxnreg kept


@pytest.mark.parametrize("program", ["mla_decode_ws", "mla_decode_seesaw"])
def test_split_kv_is_two_kernels(program, tmp_path):
    factory = getattr(example_modules.load(program), program).factory
    kernel = tlc.compile(factory(8, 128, T.dynamic("pages"), 128, num_split=4), target="sm_90a")
    first, combine = kernel.artifact["kernels"]
    assert first["grid"] == ["4", "2", "8"] and combine["grid"] == ["128", "8", "1"]
    for k in (first, combine):
        assemble(k["ptx"], "sm_90a", tmp_path)


@pytest.mark.parametrize("lens,split", SMALL_CASES)
def test_interpreter_matches_numpy(mla, lens, split):
    interpret_against_numpy(mla.mla_decode_ws.factory, lens, split)


@pytest.mark.parametrize("program", ["mla_decode_ws", "mla_decode_seesaw"])
def test_arguments_are_checked(program):
    factory = getattr(example_modules.load(program), program).factory
    with pytest.raises(ValueError, match="block_H must be 64"):
        factory(1, 128, 16, 16, block_H=128)
    with pytest.raises(ValueError, match=r"block_H \(64\) must divide heads \(96\)"):
        factory(1, 96, 16, 16)
    with pytest.raises(ValueError, match="num_split must be at least 1, not 0"):
        factory(1, 64, 16, 16, num_split=0)


def test_multicast_pairs_the_head_blocks(mla, tmp_path):
    kernel = tlc.compile(mla.mla_decode_ws.factory(132, 128, T.dynamic("pages"), 128,
                                                   multicast=True), target="sm_90a")
    code = kernel.get_kernel_source()
    assert ".reqnctapercluster 1, 2, 1" in code
    # Every page piece (4 + 4 column blocks of latent, 1 of rope) multicast, issued by the
    # pair's first block; each consumer warp's lane 0 also releases the other block's stage.
    loads = [line for line in code.splitlines() if "cp.async.bulk.tensor" in line]
    assert len(loads) == 9 and all(".multicast::cluster" in line for line in loads), loads
    assert code.count("mbarrier.arrive.shared::cluster.b64") == 2
    assert kernel.artifact["cluster_dims"] == [1, 2, 1]
    assemble(code, "sm_90a", tmp_path)  # no spills, every setmaxnreg kept
    with pytest.raises(ValueError, match=r"heads // block_H \(1\) must be even"):
        mla.mla_decode_ws.factory(1, 64, 16, 16, multicast=True)
