"""The interpreter runs the examples on the CPU and matches numpy references."""

import importlib.util

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.frontend.tile_file import load_tile_file
from tlc.interpreter import InterpreterError
from tlc.interpreter.numerics import round_bf16, round_f8e4m3, round_f8e5m2


def example(repo, name):
    """An examples/*.py module, imported from its file."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", repo / "examples" /
                                                  f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rand(rng, shape, dtype="float16"):
    x = rng.standard_normal(shape).astype(np.float32)
    rounding = {"bfloat16": round_bf16, "float8_e4m3": round_f8e4m3}.get(dtype)
    return rounding(x) if rounding else x.astype(dtype)


def assert_rounded(out, ref, dtype):
    """out equals ref up to the rounding of the output dtype (plus fp32 summation order)."""
    # half an ulp relative, and half the smallest subnormal's spacing absolute
    eps, tiny = {"float16": (2.0 ** -11, 2.0 ** -25), "bfloat16": (2.0 ** -8, 2.0 ** -134),
                 "float8_e4m3": (2.0 ** -4, 2.0 ** -10), "float32": (2.0 ** -20, 0)}[dtype]
    err = np.abs(out.astype(np.float64) - ref)
    bound = eps * np.abs(ref) + tiny + 1e-5 * (1 + np.abs(ref).max())
    assert np.isfinite(out).all()
    assert (err <= bound).all(), f"max error {err.max()} (ulp-relative {(err / bound).max()})"


# -- numerics ---------------------------------------------------------------------


def test_bf16_rounding_is_nearest_even():
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -2.5, np.inf,
                  3.4e38], np.float32)
    r = round_bf16(x)
    assert r.tolist()[:5] == [1.0, 1.0, 1 + 2 ** -6, 1 + 2 ** -7, -2.5]
    assert np.isinf(r[5]) and np.isinf(r[6])  # past bf16's largest finite value
    assert np.isnan(round_bf16(np.float32(np.nan)))


def test_fp8_rounding_saturates():
    assert round_f8e4m3(np.array([1.0625, 1.1875, 500.0, 2.0 ** -9, -0.3])).tolist() == \
        [1.0, 1.25, 448.0, 2.0 ** -9, -0.3125]
    assert round_f8e5m2(np.array([1.125, 1e6])).tolist() == [1.0, 57344.0]


# -- elementwise --------------------------------------------------------------------


def test_tile_file_elementwise(repo):
    kernels = load_tile_file(str(repo / "examples/elementwise.tile"))
    rng = np.random.default_rng(0)
    a, b = rand(rng, (100, 300), "float32"), rand(rng, (100, 300), "float32")
    bias = rand(rng, (300,), "float32")
    c = np.full_like(a, np.nan)
    tlc.interpret(kernels["vadd"], a, b, c)
    np.testing.assert_array_equal(c, a + b)
    # bias[bx * 128 + j] overhangs the last column tile: T.Parallel masks it.
    tlc.interpret(kernels["scale_bias"], a, bias, c)
    np.testing.assert_array_equal(c, a * 2 + bias)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_elementwise_rounds_every_value(repo, dtype):
    kernels = load_tile_file(str(repo / "examples/elementwise.tile"), {"DTYPE": dtype})
    rng = np.random.default_rng(13)
    x, bias = rand(rng, (40, 200), dtype), rand(rng, (200,), dtype)
    y = np.full_like(x, np.nan)
    tlc.interpret(kernels["scale_bias"], x, bias, y)  # x * 2 + bias: two roundings
    if dtype == "float16":
        ref = x * np.float16(2) + bias
    else:
        ref = round_bf16(round_bf16(x * 2) + bias)
    np.testing.assert_array_equal(y, ref)
    assert not np.array_equal(y, x.astype(np.float64) * 2 + bias)  # rounding mattered


@pytest.mark.parametrize("as_text", [False, True])
def test_mlir_file(repo, as_text):
    rng = np.random.default_rng(1)
    a, b = rand(rng, (64, 256), "float32"), rand(rng, (64, 256), "float32")
    c = np.zeros_like(a)
    path = repo / "examples/vadd.mlir"
    tlc.interpret(path.read_text() if as_text else path, a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_builders(repo):
    from tlc import ir
    from tlc.compiler.pipeline import new_context

    ex = example(repo, "elementwise")
    rng = np.random.default_rng(2)
    with new_context(), ir.Location.unknown():
        stream, scale_bias = ex.build_stream_rows(), ex.build_scale_bias()
    x = rand(rng, (70, 150), "float16")  # global -> shared -> fragment in a pipelined loop
    y = np.full_like(x, np.nan)
    tlc.interpret(stream, x, y)
    np.testing.assert_array_equal(y, x + np.float16(1))
    x, bias = rand(rng, (70, 150), "float32"), rand(rng, (150,), "float32")
    y = np.full_like(x, np.nan)
    tlc.interpret(scale_bias, x, bias, y)
    np.testing.assert_array_equal(y, x * 2 + bias)


def test_gemm_tile_file_dynamic_m(repo):
    from tlc.frontend.tile_file import load_tile_file

    prim = load_tile_file(str(repo / "examples/gemm.tile"), {"N": 128, "K": 64})["gemm"]
    rng = np.random.default_rng(10)
    a, b = rand(rng, (200, 64)), rand(rng, (64, 128))
    c = np.full((200, 128), np.nan, np.float16)
    tlc.interpret(prim, a, b, c)  # M = 200: the second row of blocks overhangs
    assert_rounded(c, a.astype(np.float64) @ b, "float16")


# -- GEMM -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3"])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN"])
def test_gemm_variants(repo, layout, dtype):
    ex = example(repo, "gemm")
    M, N, K = 100, 72, 40
    ta, tb = layout[0] == "T", layout[1] == "T"
    kernel = tlc.jit(ex.matmul.factory, out_idx=[-1], interpret=True)(
        M, N, K, block_M=64, block_N=64, block_K=32, num_stages=3, dtype=dtype,
        trans_A=ta, trans_B=tb)
    rng = np.random.default_rng(3)
    a = rand(rng, (K, M) if ta else (M, K), dtype)
    b = rand(rng, (N, K) if tb else (K, N), dtype)
    c = kernel(a, b)
    ref = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    assert c.shape == (M, N)
    assert_rounded(c, ref, dtype)


@pytest.mark.parametrize("block", [128, 64])
@pytest.mark.parametrize("layout", ["NN", "TN", "TT", "NT"])
def test_fp8_gemm_transposes_operands_not_k_major(repo, layout, block):
    """examples/fp8_gemm.py with A or B stored other than K-major: the tiles
    (128 or 64 columns) go through tile.transpose before the gemm."""
    ex = example(repo, "fp8_gemm")
    M, N, K = 256, 256, 384
    ta, tb = layout[0] == "T", layout[1] == "T"
    kernel = tlc.jit(ex.fp8_matmul.factory, out_idx=[2], interpret=True)(
        M, N, K, block, block, 128, 2 * block, 3, out_dtype="float32", trans_A=ta, trans_B=tb)
    rng = np.random.default_rng(4)
    a = rand(rng, (K, M) if ta else (M, K), "float8_e4m3")
    b = rand(rng, (N, K) if tb else (K, N), "float8_e4m3")
    c = kernel(a, b, 0.5)
    ref = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64) * 0.5
    assert_rounded(c, ref, "float32")


def test_pipelined_ir_after_tile_pipeline_loops(repo):
    """The optimized IR (multi-buffered stages, async copies, waits) interprets
    to the same bits as the frontend's; a wait that lets the gemm read a stage
    before its copy landed is caught."""
    ex = example(repo, "gemm")
    # sm_80: the cp.async pipeline (sm_90a's warp-specialized TMA pipeline is
    # not interpreted).
    kernel = tlc.jit(ex.matmul.factory, out_idx=[-1], target="sm_80")(
        100, 72, 200, 64, 64, 32, num_stages=3)
    optimized = kernel.get_mlir("optimized")
    assert "nvvm.cp.async.wait.group 1" in optimized and "tile.stage" in optimized
    rng = np.random.default_rng(14)
    a, b = rand(rng, (100, 200)), rand(rng, (200, 72))
    c1, c2 = np.zeros((100, 72), np.float16), np.ones((100, 72), np.float16)
    tlc.interpret(kernel.get_mlir("tile"), a, b, c1)
    tlc.interpret(optimized, a, b, c2)
    np.testing.assert_array_equal(c1, c2)
    early = optimized.replace("nvvm.cp.async.wait.group 1", "nvvm.cp.async.wait.group 2")
    with pytest.raises(InterpreterError, match=r"tile.gemm in block \(0, 0\): reads shared "
                                               r"buffer '%\d+ at <tile>:\d+:\d+' \(64x32"):
        tlc.interpret(early, a, b, c2)


def test_gemm_relu_example_with_use_swizzle(repo):
    ex = example(repo, "gemm_relu")
    kernel = tlc.jit(ex.relu_matmul.factory, out_idx=[-1], interpret=True)(128, 192, 64, 64, 64, 32)
    rng = np.random.default_rng(4)
    a, b = rand(rng, (128, 64)), rand(rng, (64, 192))
    assert_rounded(kernel(a, b), np.maximum(a.astype(np.float64) @ b, 0), "float16")


@pytest.mark.parametrize("scale", [None, 0.5])
def test_chained_gemm_a_in_registers(repo, scale):
    ex = example(repo, "chained_gemm")
    kernel = tlc.jit(ex.chained.factory, out_idx=[-1], interpret=True)(200, 64, 64, 64,
                                                                        scale=scale)
    rng = np.random.default_rng(5)
    a, b, v = rand(rng, (200, 64)), rand(rng, (64, 64)), rand(rng, (64, 64))
    p = (a.astype(np.float32) @ b.astype(np.float32)) * (scale or 1)
    ref = p.astype(np.float16).astype(np.float64) @ v
    assert_rounded(kernel(a, b, v), ref, "float16")


# -- reductions, softmax, attention --------------------------------------------------


def test_softmax_and_row_max(repo):
    ex = example(repo, "softmax")
    rng = np.random.default_rng(6)
    x = rand(rng, (100, 256), "float32")
    y = tlc.jit(ex.softmax.factory, out_idx=[-1], interpret=True)(100, 256)(x)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    rowmax = tlc.jit(ex.rowmax_of_product.factory, out_idx=[-1], interpret=True)(100, 128, 64)
    a, b = rand(rng, (100, 64)), rand(rng, (64, 128))
    out = rowmax(a, b)
    prod = a.astype(np.float64) @ b
    ref = np.stack([prod[:, j * 64:(j + 1) * 64].max(axis=1) for j in range(2)])
    assert_rounded(out, ref, "float32")


@T.prim_func
def row_reductions(X: T.Tensor((64, 96), "float32"), Out: T.Tensor((4, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((64, 96), "float32")
        r = T.alloc_fragment((64,), "float32")
        T.copy(X[0, 0], x)
        T.reduce_sum(x, r, dim=1)
        T.copy(r, Out[0, 0])
        T.reduce_absmax(x, r, dim=1)
        T.copy(r, Out[1, 0])
        T.reduce_min(x, r, dim=1)
        T.copy(r, Out[2, 0])
        T.reduce_abssum(x, r, dim=1, clear=False)  # adds to the row minima
        T.copy(r, Out[3, 0])


def test_reduction_kinds():
    x = rand(np.random.default_rng(7), (64, 96), "float32")
    out = np.zeros((4, 64), np.float32)
    tlc.interpret(row_reductions, x, out)
    ref = [x.sum(1), np.abs(x).max(1), x.min(1), x.min(1) + np.abs(x).sum(1)]
    np.testing.assert_allclose(out, np.stack(ref), rtol=1e-5, atol=1e-5)


@T.prim_func
def rms_norm(X: T.Tensor((T.dynamic("M"), 96), "float16"), W: T.Tensor((96,), "float16"),
             Y: T.Tensor((T.dynamic("M"), 96), "float16")):
    with T.Kernel(T.ceildiv(X.shape[0], 16), threads=128) as bx:
        x = T.alloc_fragment((16, 96), "float32")
        sq = T.alloc_fragment((16, 96), "float32")
        r = T.alloc_fragment((16,), "float32")
        T.copy(X[bx * 16, 0], x)
        for i, j in T.Parallel(16, 96):
            sq[i, j] = x[i, j] * x[i, j]
        T.reduce_sum(sq, r, dim=1)
        for i in T.Parallel(16):
            r[i] = T.rsqrt(r[i] / 96 + 1e-6)
        for i, j in T.Parallel(16, 96):
            x[i, j] = x[i, j] * r[i] * W[j]
        T.copy(x, Y[bx * 16, 0])


def test_rms_norm():
    rng = np.random.default_rng(11)
    x, w = rand(rng, (50, 96)), rand(rng, (96,))
    y = np.full_like(x, np.nan)
    tlc.interpret(rms_norm, x, w, y)
    x64 = x.astype(np.float64)
    ref = x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-6) * w
    assert_rounded(y, ref, "float16")


def attention_reference(q, k, v, causal):
    q, k, v = (t.astype(np.float64).transpose(0, 2, 1, 3) for t in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return ((p / p.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("causal", [False, True])
def test_attention(repo, causal):
    ex = example(repo, "attention")  # its default 128x128 blocks; test_attention_example has more
    kernel = tlc.jit(ex.attention.factory, out_idx=[3], interpret=True)(1, 2, 128, 64, causal)
    rng = np.random.default_rng(8)
    q, k, v = (rand(rng, (1, 128, 2, 64)) for _ in range(3))
    out = kernel(q, k, v)
    # P is rounded to fp16 before P @ V, as on the GPU: a few fp16 ulps.
    np.testing.assert_allclose(out, attention_reference(q, k, v, causal), rtol=1e-2, atol=2e-3)


@T.prim_func
def control_flow(X: T.Tensor((T.dynamic("M"), 64), "float32"), W: T.Tensor((8,), "float32"),
                 n: T.int32, Y: T.Tensor((T.dynamic("M"), 64), "float32"),
                 S: T.Tensor((T.dynamic("M"),), "int32")):
    with T.Kernel(T.ceildiv(X.shape[0], 16), threads=128) as bx:
        x = T.alloc_fragment((16, 64), "float32")
        acc = T.alloc_local((1,), "float32")
        cnt = T.alloc_fragment((16,), "int32")
        T.copy(X[bx * 16, 0], x)
        acc[0] = 0.0
        for k in T.serial(n):  # a run-time trip count
            acc[0] += W[k]
        for i, j in T.Parallel(16, 64):
            if x[i, j] > 0:  # both branches run, each on its lanes
                x[i, j] = x[i, j] * acc[0]
            else:
                x[i, j] = -x[i, j]
        for i, j in T.Parallel(16, 64):
            for k in T.serial(j % 3):  # a trip count per lane
                x[i, j] += 1.0
        for i in T.Parallel(16):
            cnt[i] = T.cast(x[i, 0], "int32") // 3 + (bx * 16 + i) % 5
        T.copy(x, Y[bx * 16, 0])
        T.copy(cnt, S[bx * 16])


def test_control_flow():
    rng = np.random.default_rng(12)
    x, w = rand(rng, (40, 64), "float32") * 10, rand(rng, (8,), "float32")
    y, s = np.zeros_like(x), np.zeros(40, np.int32)
    tlc.interpret(control_flow, x, w, 5, y, s)
    acc = np.float32(0)
    for k in range(5):
        acc = np.float32(acc + w[k])
    ref = np.where(x > 0, x * acc, -x) + (np.arange(64) % 3)
    np.testing.assert_allclose(y, ref, rtol=1e-6)
    # fptosi truncates toward zero; // on ints is a floor division
    np.testing.assert_array_equal(s, np.trunc(y[:, 0]).astype(np.int32) // 3 + np.arange(40) % 5)


def test_unmasked_tensor_read_out_of_bounds():
    """W[k] in a T.serial loop is not masked (only T.copy and T.Parallel are)."""
    x, w = np.zeros((16, 64), np.float32), np.zeros(8, np.float32)
    args = (x, w, 9, np.zeros_like(x), np.zeros(16, np.int32))
    _expect(control_flow, args, "memref.load in block (0): reads outside tensor 'W' "
            "(8 float32): index [8] (dimension 0 has size 8)", "acc[0] += W[k]")


# -- entry points ------------------------------------------------------------------------


def test_env_var_and_block_subset(repo, monkeypatch):
    monkeypatch.setenv("TLC_INTERPRET", "1")
    ex = example(repo, "gemm")
    kernel = tlc.jit(out_idx=[-1])(ex.matmul.factory)(128, 128, 64, block_M=64, block_N=64)
    assert isinstance(kernel, tlc.interpreter.InterpretedKernel)
    assert "tile.gemm" in kernel.get_mlir("tile")
    rng = np.random.default_rng(9)
    a, b = rand(rng, (128, 64)), rand(rng, (64, 128))
    c = kernel(a, b, blocks=[(1, 0)])  # block (bx=1, by=0): rows 0-63, columns 64-127
    assert_rounded(c[:64, 64:], a[:64].astype(np.float64) @ b[:, 64:], "float16")
    assert np.isnan(c[64:]).all() and np.isnan(c[:64, :64]).all()
    with pytest.raises(InterpreterError, match=r"blocks: \(2, 0\) is not a block of the grid"):
        kernel(a, b, blocks=[(2, 0)])


def test_argument_checks():
    from tlc.runtime import ArgumentError

    x = np.zeros((64, 96), np.float16)
    with pytest.raises(ArgumentError, match="argument 'X' .*expected dtype float32, got float16"):
        tlc.interpret(row_reductions, x, np.zeros((4, 64), np.float32))
    with pytest.raises(ArgumentError, match="dim 1 must be 64, got 65"):
        tlc.interpret(row_reductions, x.astype(np.float32), np.zeros((4, 65), np.float32))
    with pytest.raises(ArgumentError, match="row_reductions takes 2 arguments"):
        tlc.interpret(row_reductions, x)
    with pytest.raises(TypeError, match="tlc.interpret takes a @T.prim_func, .* got int"):
        tlc.interpret(3, x)


# -- checks the GPU cannot make -------------------------------------------------------------


@T.prim_func
def shifted_read(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32"),
                 shift: T.int32):
    # A run-time shift: the compiler's static bounds check cannot see past it.
    with T.Kernel(2, threads=128) as bx:
        x = T.alloc_fragment((32, 64), "float32")
        T.copy(X[bx * 32, 0], x)
        for i, j in T.Parallel(32, 64):
            x[i, j] = x[i, j] + x[i, j + shift]
        T.copy(x, Y[bx * 32, 0])


@T.prim_func
def bad_shared_offset(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32")):
    with T.Kernel(2, threads=128) as bx:
        s = T.alloc_shared((64, 64), "float32")
        T.copy(X[0, 0], s[bx * 64, 0:32])
        T.copy(s[0, 0:32], Y[0, 0])


@T.prim_func
def unwritten_shared(X: T.Tensor((64, 64), "float16"), Y: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_shared((64, 32), "float16")
        b = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.clear(c)
        T.copy(X[0, 0], a)
        T.gemm(a, b, c)  # b never filled
        T.copy(c, Y[0, 0])


@T.prim_func
def missing_clear(X: T.Tensor((64, 64), "float16"), Y: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.copy(X[0, 0], a)
        T.gemm(a, a, c)
        T.copy(c, Y[0, 0])


def _expect(prim, args, *patterns):
    with pytest.raises(InterpreterError) as info:
        tlc.interpret(prim, *args)
    message = str(info.value)
    assert message.startswith(f"{__file__}:")
    for p in patterns:
        assert p in message, message
    return info.value


def test_out_of_bounds_fragment_read():
    args = (np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32), 1)
    e = _expect(shifted_read, args, "memref.load in block (0): reads outside fragment 'x' "
                "(32x64 float32): index [0, 64] (T.Parallel iteration (0, 63))",
                "x[i, j] = x[i, j] + x[i, j + shift]")
    assert e.location.line == shifted_read.node.body[0].body[2].body[0].lineno


def test_out_of_bounds_shared_copy():
    args = (np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32))
    _expect(bad_shared_offset, args,
            "tile.copy in block (1): writes region [64, 0] + [1, 32] outside ",
            "shared buffer 's' (64x64 float32): index [64, 0] (dimension 0 has size 64)")


def test_unwritten_shared_read():
    args = (np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16))
    _expect(unwritten_shared, args, "tile.gemm in block (0): reads shared buffer 'b' (32x64 "
            "float16) at index [0, 0], which no thread of the block has written yet",
            "T.gemm(a, b, c)")


def test_missing_clear_is_reported():
    args = (np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16))
    _expect(missing_clear, args, "reads fragment 'c' (64x64 float32)")


@T.prim_func
def racy_row_store(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((16, 32), "float32")
        m = T.alloc_fragment((16,), "float32")
        T.copy(X[0, 0], x)
        for i, j in T.Parallel(16, 32):
            m[i] = x[i, j]  # every j writes row i's element: a race
        T.copy(m, Y[0])


def test_conflicting_writes_in_parallel_are_a_race():
    x = np.tile(np.arange(32, dtype=np.float32), (16, 1))
    _expect(racy_row_store, (x, np.zeros(16, np.float32)),
            "memref.store in block (0): T.Parallel iterations (0, 0) and (0, 1) both write "
            "fragment 'm' (16 float32) at index [0], different values (0.0 and 1.0): a race")
    # the same value from every iteration is no race
    tlc.interpret(racy_row_store, np.ones((16, 32), np.float32), np.zeros(16, np.float32))


@T.prim_func
def local_scratch(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((16, 32), "float32")
        s = T.alloc_fragment((16,), "float32")
        acc = T.alloc_local((1,), "float32")
        T.copy(X[0, 0], x)
        for i in T.Parallel(16):
            acc[0] = 0.0  # each thread's own accumulator
            for k in T.serial(32):
                acc[0] += x[i, k]
            s[i] = acc[0]
        T.copy(s, Y[0])


@T.prim_func
def local_read_after_parallel(X: T.Tensor((16, 32), "float32"), Y: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        x = T.alloc_fragment((16, 32), "float32")
        s = T.alloc_fragment((16,), "float32")
        acc = T.alloc_local((1,), "float32")
        T.copy(X[0, 0], x)
        for i in T.Parallel(16):
            acc[0] = x[i, 0]
        for i in T.Parallel(16):
            s[i] = acc[0]  # which row's value this thread holds depends on the layout
        T.copy(s, Y[0])


def test_local_buffer_is_per_iteration_in_parallel():
    x = rand(np.random.default_rng(15), (16, 32), "float32")
    y = np.zeros(16, np.float32)
    tlc.interpret(local_scratch, x, y)
    ref = np.zeros(16, np.float32)
    for k in range(32):
        ref = ref + x[:, k]
    np.testing.assert_array_equal(y, ref)
    e = _expect(local_read_after_parallel, (x, y), "memref.load in block (0): reads local "
                "buffer 'acc' (1 float32) at index [0] (T.Parallel iteration (0,)), which the "
                "T.Parallel at ", "left holding a different value in each thread")
    assert f"{__file__}:{local_read_after_parallel.node.body[0].body[4].lineno}" in str(e)
