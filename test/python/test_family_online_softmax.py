"""examples/families/online_softmax.py: the two-pass row softmax (an online max
and sum over column chunks, then exp(x - max) / sum) compiles for sm_90a and
sm_80 to two cp.async pipelines (16-byte copies, 3 stages), exp2 on the
hardware unit and 16-byte stores, assembles without spills, and matches a
float64 numpy softmax in the interpreter, with chunks no block divides, rows
past M, and maxima that grow from chunk to chunk (the rescaling)."""

import numpy as np
import pytest
from ptxas import assemble

import example_modules
import tlc


@pytest.fixture(scope="module")
def ex():
    return example_modules.load("families/online_softmax")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("M,N,options", [(4096, 32768, {}), (1000, 30000, {}),
                                         (8192, 1024, {}), (4096, 32768, {"block_N": 8192})])
def test_compiles_to_two_cp_async_pipelines(ex, arch, M, N, options, tmp_path):
    kernel = tlc.jit(ex.online_softmax.factory, out_idx=[-1], target=arch, cache=False)(
        M, N, **options)
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    block = options.get("block_N", 4096)  # elements a chunk (rows x columns)
    vectors = block // (256 * 8)  # 16-byte pieces a thread a chunk
    # each pass: its chunk copies issued in the prologue (2 stages ahead) and in the loop
    assert ptx.count("cp.async.cg.shared.global") == 2 * 3 * vectors
    assert ptx.count("cp.async.wait_group") >= 2
    assert "ld.global" not in ptx  # every read of X is a cp.async
    assert ptx.count("st.global.v4.b32") == vectors
    # an ex2 an element in each pass, and one or two (rows a thread holds) for
    # the running sums' rescaling
    assert 2 * block // 256 + 1 <= ptx.count("ex2.approx") <= 2 * block // 256 + 2
    assert ".local" not in ptx
    assemble(ptx, arch, tmp_path)


def test_each_pass_stages_its_own_tile(ex):
    kernel = tlc.jit(ex.online_softmax.factory, out_idx=[-1], target="sm_80", cache=False)(
        64, 32768)
    optimized = kernel.get_mlir("optimized")
    assert optimized.count("stages = 3") >= 2, "both staging tiles 3 deep"


def softmax_input(rng, M, N, growing):
    x = rng.standard_normal((M, N)) * 3
    if growing:  # maxima found late: every chunk raises the running maximum
        x += np.linspace(0, 20, N)
    x[0, :] = -5.0  # a row of equal values
    return x.astype(np.float16)


@pytest.mark.parametrize("M,N,options,growing", [
    (5, 1000, {"block_N": 256}, True),   # 4 chunks, the last one ragged; 16 rows a block
    (3, 2048, {"block_N": 512}, False),  # 4 even chunks, rows past M
    (37, 100, {}, True),                 # one chunk of 128, 32 rows a block: two blocks
    (2, 4500, {"block_N": 1024, "block_M": 1}, True),  # 5 chunks, one row a block
])
def test_interpreter_matches_reference(ex, M, N, options, growing):
    rng = np.random.default_rng(M * N)
    x = softmax_input(rng, M, N, growing)
    kernel = tlc.jit(ex.online_softmax.factory, out_idx=[-1], interpret=True)(M, N, **options)
    y = kernel(x)
    assert y.dtype == np.float16 and y.shape == (M, N)
    ref = ex.reference(x)
    err = np.abs(y.astype(np.float64) - ref)
    # the fp16 rounding of an fp32 result: half an ulp plus the fp32 work's error
    assert (err <= 2.0 ** -11 * 1.01 * ref + 1e-7).all(), err.max()


def test_pipelined_ir_interprets_to_the_same_result(ex):
    """The IR after the pipeliner (sm_80: 3-stage cp.async copies landing at their
    waits), interpreted: the stages are read in the right order."""
    rng = np.random.default_rng(11)
    M, N = 3, 3000
    x = softmax_input(rng, M, N, growing=True)
    kernel = tlc.jit(ex.online_softmax.factory, out_idx=[-1], target="sm_80", cache=False)(
        M, N, block_N=512, block_M=1)
    y = np.full((M, N), np.nan, np.float16)
    tlc.interpret(kernel.get_mlir("optimized"), x, y)
    ref = ex.reference(x)
    assert (np.abs(y.astype(np.float64) - ref) <= 2.0 ** -11 * 1.01 * ref + 1e-7).all()
