"""examples/mla_decode_seesaw.py, MLA decode with both consumer warpgroups computing scores
(pages in pairs, the softmaxes handing the row maximum over): it compiles to one TMA producer
and two consumers that each run one page's m64n64 scores and both pages' P V on their half of
the output, assembles without spills, and the interpreter matches a numpy reference (the same
cases as mla_decode's, with odd page counts, and pages of 64 tokens, whose probabilities go
over the page's rope keys). Its split-KV and argument tests are test_mla_decode_ws_example.py's."""


import pytest

import tlc
import tlc.language as T

from ptxas import assemble
from test_mla_decode_example import SMALL_CASES, interpret_against_numpy
import example_modules


@pytest.fixture(scope="module")
def mla():
    return example_modules.load("mla_decode_seesaw")


def test_roles(mla, tmp_path):
    kernel = tlc.compile(mla.mla_decode_seesaw.factory(132, 128, T.dynamic("pages"), 128),
                         target="sm_90a")
    code = kernel.get_kernel_source()
    # Each consumer: one page's 64 x 64 scores over K = 256 + 256 + 64, 16 deep; its 64 x 256
    # of the output over both pages' 64 tokens.
    assert code.count("wgmma.mma_async.sync.aligned.m64n64k16") == 2 * (256 + 256 + 64) // 16
    assert code.count("wgmma.mma_async.sync.aligned.m64n256k16") == 2 * 2 * 64 // 16
    assert [line.split()[0] for line in code.splitlines() if "setmaxnreg" in line] == [
        "setmaxnreg.dec.sync.aligned.u32", "setmaxnreg.inc.sync.aligned.u32",
        "setmaxnreg.inc.sync.aligned.u32"]
    assert "mma.sync" not in code
    assemble(code, "sm_90a", tmp_path)  # no spills, every setmaxnreg kept


@pytest.mark.parametrize("lens,split", SMALL_CASES)
def test_interpreter_matches_numpy(mla, lens, split):
    interpret_against_numpy(mla.mla_decode_seesaw.factory, lens, split)


@pytest.mark.parametrize("lens,split", [([200, 64], 1), ([130, 300], 2)])
def test_interpreter_probabilities_over_rope_keys(mla, lens, split):
    interpret_against_numpy(mla.mla_decode_seesaw.factory, lens, split, page=64)
