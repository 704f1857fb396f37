"""TileLang intrinsics programs use beside the tile ops: T.sin, T.cos, T.ceil, T.floor,
T.floormod, T.shift_left / shift_right, T.get_block_binding, T.tvm_warp_shuffle,
T.disable_warp_group_reg_alloc (T.no_set_max_nreg) and tilelang.cuda.intrinsics'
make_mma_swizzle_layout: each compiled for sm_80 and sm_90a (assembled by ptxas) and run in the
interpreter against numpy."""

import sys
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.cuda.intrinsics import make_mma_swizzle_layout
from tlc.runtime.errors import ArgumentError

from ptxas import assemble

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from build_language_checks import scalar_math  # noqa: E402


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_scalar_math_compiles(target, tmp_path):
    ptx = tlc.compile(scalar_math, target=target).get_kernel_source()
    assert "shfl.sync.idx" in ptx
    assemble(ptx, target, tmp_path)


def test_scalar_math_in_the_interpreter():
    x = (np.random.default_rng(0).standard_normal((4, 64)) * 3).astype(np.float32)
    y, i = np.zeros_like(x), np.zeros((4, 64), np.int32)
    tlc.interpret(scalar_math, x, y, i)
    np.testing.assert_allclose(y, np.sin(x) + np.cos(x) * np.ceil(x) - np.floor(x),
                               rtol=1e-5, atol=1e-5)
    tx = np.arange(64)
    # floormod keeps the divisor's sign: (tx - 37) mod 8 is in [0, 8) for negative tx - 37 too.
    np.testing.assert_array_equal(i, np.broadcast_to((tx - 37) % 8 + ((tx ^ 1) << 4) + (tx >> 1),
                                                     (4, 64)))


def _gemm(disable: bool):
    @T.prim_func
    def gemm(A: T.Tensor((1024, 1024), "float16"), B: T.Tensor((1024, 1024), "float16"),
             C: T.Tensor((1024, 1024), "float16")):
        with T.Kernel(8, 8, threads=256) as (bx, by):
            if disable:
                T.disable_warp_group_reg_alloc()
            a = T.alloc_shared((128, 64), "float16")
            b = T.alloc_shared((64, 128), "float16")
            acc = T.alloc_fragment((128, 128), "float32")
            T.clear(acc)
            for k in T.Pipelined(16, num_stages=3):
                T.copy(A[by * 128, k * 64], a)
                T.copy(B[k * 64, bx * 128], b)
                T.gemm(a, b, acc)
            T.copy(acc, C[by * 128, bx * 128])

    return gemm


def test_disable_warp_group_reg_alloc():
    # 256 consumer threads and the producer warpgroup: registers move (setmaxnreg) unless the
    # program disables it.
    assert "setmaxnreg" in tlc.compile(_gemm(False), target="sm_90a").get_kernel_source()
    assert "setmaxnreg" not in tlc.compile(_gemm(True), target="sm_90a").get_kernel_source()


def _swizzled(cols: int, smooth: bool):
    @T.prim_func
    def copy_through(X: T.Tensor((64, cols), "float16"), Y: T.Tensor((64, cols), "float16")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((64, cols), "float16")
            T.annotate_layout({s: make_mma_swizzle_layout(s, is_smooth=smooth)})
            T.copy(X, s)
            T.copy(s, Y)

    return copy_through


@pytest.mark.parametrize("cols,smooth,swizzle", [
    (64, False, "#tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>"),  # 128-byte rows
    (32, False, "#tile.shared<swizzle = <bits = 2, base = 4, shift = 3>>"),  # 64-byte rows
    (16, False, None),                                            # 32-byte rows: row-major
    (64, True, None),                                             # is_smooth: row-major
])
def test_mma_swizzle_layout(cols, smooth, swizzle):
    ir_text = str(_swizzled(cols, smooth).build_module())
    if swizzle:
        assert swizzle in ir_text
    else:
        assert "swizzle" not in ir_text and "tile.row_major" in ir_text
    x = np.random.default_rng(cols).standard_normal((64, cols)).astype(np.float16)
    y = np.zeros_like(x)
    tlc.interpret(_swizzled(cols, smooth), x, y)
    np.testing.assert_array_equal(x, y)


@T.prim_func
def bad_warp_size(X: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=32):
        tx = T.get_thread_binding()
        X[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, X[tx], 0, 32, 48)


@T.prim_func
def float_floormod(X: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=32):
        tx = T.get_thread_binding()
        X[tx] = T.floormod(X[tx], 2)


@pytest.mark.parametrize("prim,message", [
    (bad_warp_size, "warp_size is a power of two up to 32, got 48"),
    (float_floormod, "T.floormod takes integers"),
])
def test_errors(prim, message):
    with pytest.raises(tlc.CompilationError, match=message):
        prim.build_module()


@T.prim_func
def smooth_gemm_operand(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        a = T.alloc_shared((64, 64), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        T.annotate_layout({a: make_mma_swizzle_layout(a, is_smooth=True)})
        T.copy(A, a)
        T.gemm(a, a, acc, clear_accum=True)  # E:smooth-gemm
        T.copy(acc, C)


def test_row_major_gemm_operand_is_an_error():
    # is_smooth asks for the row-major layout, which tlc does not give a gemm operand: an
    # error at the gemm, not a silently swizzled buffer.
    with pytest.raises(tlc.CompilationError, match="pinned row-major") as e:
        tlc.compile(smooth_gemm_operand, target="sm_90a")
    assert e.value.location.line == _line_of("E:smooth-gemm")


def _line_of(marker: str) -> int:
    import inspect

    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return next(n for n, line in enumerate(lines, 1) if marker in line and "_line_of" not in line)


@T.prim_func
def buffers_by_scope(X: T.Tensor((64, 64), "float32"), Y: T.Tensor((64, 64), "float32")):
    # TVM's T.alloc_buffer: a global scratch tensor at the top level, on-chip buffers by scope.
    scratch = T.alloc_buffer((64, 64), "float32")
    with T.Kernel(1, threads=128):
        s = T.alloc_buffer((64, 64), "float32", scope="shared")
        f = T.alloc_buffer((64, 64), "float32", scope="local.fragment")
        T.copy(X, s)
        T.copy(s, f)
        for i, j in T.Parallel(64, 64):
            f[i, j] = f[i, j] * 2
        T.copy(f, scratch)
    with T.Kernel(1, threads=128):
        g = T.alloc_buffer((64, 64), "float32", scope="local.fragment")
        T.copy(scratch, g)
        for i, j in T.Parallel(64, 64):
            g[i, j] = g[i, j] + 1
        T.copy(g, Y)


def test_alloc_buffer_by_scope():
    ir_text = str(buffers_by_scope.build_module())
    assert "tile.alloc_shared" in ir_text and "tile.alloc_fragment" in ir_text
    assert '"scratch"' in ir_text  # the global scratch tensor keeps the program's name
    x = np.random.default_rng(9).standard_normal((64, 64)).astype(np.float32)
    y = tlc.jit(lambda: buffers_by_scope, out_idx=[1], interpret=True)()(x)
    np.testing.assert_allclose(y, 2 * x + 1, rtol=1e-6)
    # Two kernels, launched in order by one call.
    assert tlc.compile(buffers_by_scope, target="sm_90a").get_kernel_source().count(".entry") == 2


@T.prim_func
def buffer_over_data(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        s = T.alloc_buffer((64,), "float32", data=X.data, scope="shared")  # E:buffer-data
        T.copy(X, s)


def test_alloc_buffer_errors():
    with pytest.raises(tlc.CompilationError, match="data") as e:
        buffer_over_data.build_module()
    assert e.value.location.line == _line_of("E:buffer-data")


def test_host_math_helpers():
    # tilelang.math: sizes computed in ordinary Python before a kernel is built.
    assert tlc.math.next_power_of_2(96) == 128 and tlc.math.next_power_of_2(1) == 1
    assert tlc.math.next_power_of_2(64) == 64 and tlc.math.cdiv(1000, 128) == 8
    with pytest.raises(TypeError, match="takes an integer"):
        tlc.math.next_power_of_2(2.5)


@tlc.jit
def _eager_double(X):
    n = T.const("n")
    X: T.Tensor((n,), "float32")
    Y = T.empty((n,), "float32")
    with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
        for i in T.Parallel(128):
            Y[bx * 128 + i] = X[bx * 128 + i] * 2
    return Y


def test_eager_get_kernel_source():
    # TileLang's `f.get_kernel_source(n=...)` on an eager-style factory: the PTX of
    # f.compile(n=...).
    ptx = _eager_double.get_kernel_source(n=1024)
    assert ".entry" in ptx and ptx == _eager_double.compile(n=1024).get_kernel_source()
    # Given the call's tensors: the kernel that call would launch, not launched.
    assert _eager_double.get_kernel_source(np.zeros(1024, np.float32)) == ptx


@tlc.jit
def _computed_shape(X, heads: int):
    seq = T.dynamic("seq")
    shape = [seq, heads]
    X: T.Tensor(shape, "float32")  # a shape computed before the declaration
    Y = T.empty(shape, "float32")
    with T.Kernel(seq, threads=32) as s:
        for h in T.Parallel(heads):
            Y[s, h] = X[s, h] + 1
    return Y


def test_eager_declaration_with_a_computed_shape():
    # TileLang's sparse MLA declares `Q: T.Tensor(q_shape, dtype)` with q_shape a list built
    # before: the call binds (the shape is checked against the tensor's then), where reading
    # the declaration's text took q_shape for one size.
    kernel = _computed_shape.compile(heads=8)
    assert ".entry" in kernel.get_kernel_source()
    x = np.zeros((3, 8), np.float32)
    call = _computed_shape.bind((x, 8), {})  # binding a tensor argument: this raised before
    assert call.statics["heads"] == 8


def test_host_helpers_of_tilelang_examples(monkeypatch):
    from tlc.contrib import nvcc

    # dtype.as_torch() (where torch is installed; a stand-in module otherwise).
    import sys
    import types

    fake = types.SimpleNamespace(bfloat16="torch.bfloat16", float8_e4m3fn="torch.e4m3")
    monkeypatch.setitem(sys.modules, "torch", fake)
    assert T.bfloat16.as_torch() == "torch.bfloat16"
    assert T.float8_e4m3fn.as_torch() == "torch.e4m3"
    # nvcc.get_target_compute_version: from a target string (the device's when torch has one).
    assert nvcc.get_target_compute_version("sm_90a") == "9.0"
    assert nvcc.get_target_compute_version("cuda -arch=sm_80") == "8.0"
    with pytest.raises(ValueError, match="no sm_XX"):
        nvcc.get_target_compute_version("hip")
    # tlc.testing.requires_package: a skip marker unless the packages import.
    assert tlc.testing.requires_package("numpy").mark.args[0] is False
    assert tlc.testing.requires_package("no_such_package_xyz").mark.args[0] is True
    # tilelang.language.fp8: OCP fp8 on NVIDIA GPUs.
    from tlc.language.fp8 import determine_fp8_type, determine_torch_fp8_type

    assert determine_fp8_type() is T.float8_e4m3fn
    assert determine_fp8_type("e5m2") is T.float8_e5m2
    assert determine_torch_fp8_type() == "torch.e4m3"
    with pytest.raises(ValueError, match="unsupported fp8 format 'e3m4'"):
        determine_fp8_type("e3m4")


def test_datatype_of_host_code():
    # tilelang.DataType (TVM's) as the dequantizing examples size their loads with it.
    assert tlc.DataType("float16").bits == 16 and tlc.DataType("int8").lanes == 1
    assert tlc.DataType("bf16") == "bfloat16"
    with pytest.raises(ValueError, match="unknown dtype 'float7'"):
        tlc.DataType("float7")


def test_source_postprocessing_callbacks_are_errors():
    # TileLang's GDN examples import the CUDA callback; tlc has no CUDA source
    # for one to rewrite, so registering is an error, not a silent no-op.
    from tlc.engine.callback import register_cuda_postproc_callback
    from tlc.engine import register_cuda_postproc

    for register in (register_cuda_postproc_callback, register_cuda_postproc):
        with pytest.raises(NotImplementedError, match="no source for a callback to rewrite"):
            register(lambda code, target: code)



def test_dynamic_sizes_named_together():
    batch, seq = T.dynamic("batch, seq")
    assert (batch.name, seq.name) == ("batch", "seq")
    (only,) = [T.dynamic("kv_len")]
    assert only.name == "kv_len"


def _checked(limit: int):
    @T.prim_func
    def checked(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding()
            T.assume(tx < 128)
            T.device_assert(tx < limit, "tx past the limit")  # E:assert
            Y[tx] = X[tx] * 2

    return checked


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_device_assert_and_assume_compile(target, tmp_path):
    ptx = tlc.compile(_checked(64), target=target).get_kernel_source()
    assert "trap;" in ptx and "vprintf" in ptx  # the message, then the trap
    assemble(ptx, target, tmp_path, stack=True)  # printf's argument buffer


def test_device_assert_and_assume_in_the_interpreter():
    x = np.arange(128, dtype=np.float32)
    y = np.zeros_like(x)
    tlc.interpret(_checked(128), x, y)  # holds everywhere
    np.testing.assert_array_equal(y, 2 * x)
    with pytest.raises(tlc.interpreter.InterpreterError, match="device assertion failed") as e:
        tlc.interpret(_checked(64), x, np.zeros_like(x))
    assert e.value.location.line == _line_of("E:assert")


@T.prim_func
def false_assumption(X: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        tx = T.get_thread_binding()
        T.assume(tx < 100)
        X[tx] = 1.0


def test_false_assumption_in_the_interpreter():
    with pytest.raises(tlc.interpreter.InterpreterError, match="T.assume's condition is false"):
        tlc.interpret(false_assumption, np.zeros(128, np.float32))


from tlc import tirx  # noqa: E402  (TileLang programs' `from tvm import tirx`)


def _low_nibble_as_f16(val: tirx.PrimExpr, pos: tirx.PrimExpr):
    # TileLang's dequantizing helpers in TVM's spelling: typed constants, .dtype,
    # .astype, a reinterpret with the dtype first, Select.
    assert val.dtype == T.uint8
    nibble = (val >> (pos.astype(T.uint8) * tirx.const(4, T.uint8))) & tirx.const(15, T.uint8)
    bits = (nibble.astype(T.uint16) + tirx.const(0x3C00, T.uint16))  # 1.0 + nibble ulps
    f = tirx.reinterpret(T.float16, bits)
    return tirx.Select(nibble == tirx.const(0, T.uint8), tirx.Cast(T.float16, 0), f)


@T.prim_func
def unpack_nibbles(B: T.Tensor((64, 32), "uint8"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128):
        for i, j in T.Parallel(64, 64):
            C[i, j] = _low_nibble_as_f16(B[i, j // 2], j % 2)


def test_tirx_helpers_of_dequantizing_programs(tmp_path):
    b = np.random.default_rng(3).integers(0, 256, (64, 32), dtype=np.uint8)
    c = np.zeros((64, 64), np.float16)
    tlc.interpret(unpack_nibbles, b, c)
    nib = np.stack([b & 15, b >> 4], axis=-1).reshape(64, 64).astype(np.uint16)
    expect = np.where(nib == 0, np.float16(0), (nib + np.uint16(0x3C00)).view(np.float16))
    np.testing.assert_array_equal(c, expect)
    for target in ("sm_80", "sm_90a"):
        from ptxas import assemble

        assemble(tlc.compile(unpack_nibbles, target=target).get_kernel_source(), target,
                 tmp_path)


@T.prim_func
def mask_summary(Mask: T.Tensor((4, 8), "bool"), Any: T.Tensor((4,), "int32"),
                 All: T.Tensor((4,), "int32"), Pad: T.Tensor((4,), "int32")):
    # TileLang's scalar kernels: one thread writes global elements itself.
    with T.Kernel(4, threads=1) as bx:
        Any[bx] = T.if_then_else(T.any_of(Mask[bx, :]), 1, 0)
        All[bx] = T.if_then_else(T.all_of(Mask[bx, 2:6]), 1, 0)
        Pad[bx] = T.align_up(bx * 10 + 1, 8)


@T.prim_func
def fill_global(A: T.Tensor((4, 64), "float32")):
    with T.Kernel(1, threads=128):
        T.fill(A, T.infinity("float32"))
        T.fill(A[1, 8:40], 2.0)


def test_any_of_all_of_align_up_and_global_fills(tmp_path):
    from ptxas import assemble

    assert T.align_up(1000, 128) == 1024
    mask = np.random.default_rng(2).random((4, 8)) < 0.4
    mask[3] = False
    mask[2, 2:6] = True
    outs = [np.zeros(4, np.int32) for _ in range(3)]
    tlc.interpret(mask_summary, mask, *outs)
    np.testing.assert_array_equal(outs[0], mask.any(1).astype(np.int32))
    np.testing.assert_array_equal(outs[1], mask[:, 2:6].all(1).astype(np.int32))
    np.testing.assert_array_equal(outs[2], [8, 16, 24, 32])
    a = np.zeros((4, 64), np.float32)
    tlc.interpret(fill_global, a)
    expect = np.full((4, 64), np.inf, np.float32)
    expect[1, 8:40] = 2.0
    np.testing.assert_array_equal(a, expect)
    for prim in (mask_summary, fill_global):
        for target in ("sm_80", "sm_90a"):
            assemble(tlc.compile(prim, target=target).get_kernel_source(), target, tmp_path)


@tlc.jit(out_idx=[-1])
def _summary_factory():
    return mask_summary


@tlc.jit
def _spaced_consts(X, Y, block=128):
    M, N = T.const("M N")  # TileLang takes the names separated by spaces too
    X: T.Tensor((M, N), "float32")
    Y: T.Tensor((M, N), "float32")
    with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
        for i, j in T.Parallel(block, N):
            Y[bx * block + i, j] = X[bx * block + i, j]


def test_factory_kernel_source_and_spaced_const_names():
    assert ".entry" in _summary_factory.get_kernel_source()
    assert ".entry" in _spaced_consts.get_kernel_source(M=256, N=32)


@T.prim_func
def transposed_tiles(A: T.Tensor((128, 128), "float16"), B: T.Tensor((128, 128), "float16")):
    with T.Kernel(2, 4, threads=128) as (bx, by):
        tile = T.alloc_shared((32, 64), "float16")
        tile_t = T.alloc_shared((64, 32), "float16")
        T.copy(A[by * 32, bx * 64], tile)
        T.transpose(tile, tile_t)
        T.copy(tile_t, B[bx * 64, by * 32])


def test_transpose_of_shared_tiles(tmp_path):
    from ptxas import assemble

    a = np.random.default_rng(8).standard_normal((128, 128)).astype(np.float16)
    b = np.zeros_like(a)
    tlc.interpret(transposed_tiles, a, b)
    np.testing.assert_array_equal(b, a.T)
    for target in ("sm_80", "sm_90a"):
        assemble(tlc.compile(transposed_tiles, target=target).get_kernel_source(), target,
                 tmp_path)


_n = T.symbolic("n")


@T.prim_func
def plus_one(A: T.Tensor((_n + 1,), "int32"), B: T.Tensor((_n * 4,), "int32")):
    # Sizes only an expression names (TileLang's annotation tests): n from A's length.
    with T.Kernel(1, threads=1):
        for i in T.serial(_n + 1):
            A[i] = i
        for i in T.serial(_n * 4):
            B[i] = _n


def test_a_symbol_solved_from_a_sum():
    a, b = np.zeros(17, np.int32), np.zeros(64, np.int32)
    tlc.interpret(plus_one, a, b)
    np.testing.assert_array_equal(a, np.arange(17))
    np.testing.assert_array_equal(b, np.full(64, 16))
    kernel = tlc.compile(plus_one, target="sm_90a")
    assert kernel.params[0]["shape"] == ["(n + 1)"]


@T.prim_func
def nested_sizes(A: T.Tensor((_n * 3 + 1,), "int32"), B: T.Tensor((20 - _n,), "int32")):
    # n only in nested expressions (TileLang's `n * 3 + 1` annotation test): n = (16 - 1) // 3.
    with T.Kernel(1, threads=1):
        for i in T.serial(_n * 3 + 1):
            A[i] = i + _n
        for i in T.serial(20 - _n):
            B[i] = _n


def test_a_symbol_solved_from_a_nested_expression(tmp_path):
    from ptxas import assemble

    a, b = np.zeros(16, np.int32), np.zeros(15, np.int32)
    tlc.interpret(nested_sizes, a, b)
    np.testing.assert_array_equal(a, np.arange(16) + 5)
    np.testing.assert_array_equal(b, np.full(15, 5))
    kernel = tlc.compile(nested_sizes, target="sm_90a")
    assert kernel.params[0]["shape"] == ["((n * 3) + 1)"]
    assemble(kernel.get_kernel_source(), "sm_90a", tmp_path)
    with pytest.raises(ArgumentError, match="gives no whole value of n"):
        tlc.interpret(nested_sizes, np.zeros(17, np.int32), b)


@T.prim_func
def element_copies(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float16")):
    # T.copy of two elements: TileLang's one-element store (with the dtype cast).
    with T.Kernel(4, threads=1) as bx:
        for i in T.serial(16):
            T.copy(A[bx * 16 + i], B[bx * 16 + i])


def test_copy_of_one_element(tmp_path):
    from ptxas import assemble

    a = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    b = np.zeros(64, np.float16)
    tlc.interpret(element_copies, a, b)
    np.testing.assert_array_equal(b, a.astype(np.float16))
    assemble(tlc.compile(element_copies, target="sm_80").get_kernel_source(), "sm_80", tmp_path)


@T.prim_func
def fp8_extremes(A: T.Tensor((128,), "float8_e4m3fn"), B: T.Tensor((128,), "float8_e4m3fn"),
                 C: T.Tensor((128,), "float8_e4m3fn")):
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            C[i] = T.max(A[i], T.min(B[i], T.cast(1.0, "float8_e4m3fn")))


def test_min_max_of_fp8_values(tmp_path):
    # Compared in float32 (exact): the result is one of the fp8 values.
    from ptxas import assemble

    assemble(tlc.compile(fp8_extremes, target="sm_90a").get_kernel_source(), "sm_90a",
             tmp_path)
    # sm_80 has no fp8 cvt: the conversions are integer arithmetic there
    ptx = tlc.compile(fp8_extremes, target="sm_80").get_kernel_source()
    assert "e4m3x2" not in ptx
    assemble(ptx, "sm_80", tmp_path)


@T.prim_func
def two_blocks_an_sm(A: T.Tensor((128, 128), "float32"), C: T.Tensor((128, 128), "float32")):
    with T.Kernel(128, threads=128) as bx:
        T.annotate_min_blocks_per_sm(2)
        for i in T.serial(128):
            C[bx, i] = A[bx, i] * 2


def test_annotate_min_blocks_per_sm(tmp_path):
    from ptxas import assemble

    ptx = tlc.compile(two_blocks_an_sm, target="sm_90a").get_kernel_source()
    assert ".minnctapersm 2" in ptx
    assemble(ptx, "sm_90a", tmp_path)


@T.prim_func
def nibbles(Q: T.Tensor((8,), "int32"), W: T.Tensor((8,), "int32"),
            U: T.Tensor((8,), "uint8"), V: T.Tensor((8,), "uint8")):
    # A shift amount from the loop index: the shift keeps the int32 value's width
    # (TileLang's loop variables are int32), so `<< 28` wraps and `>> 28` sign-extends
    # a 4-bit field; a uint8 value with an index is computed in int32, as TileLang does.
    with T.Kernel(1, threads=32):
        for i in T.Parallel(8):
            W[i] = (Q[i] << (28 - 4 * (i % 2))) >> 28
            V[i] = (U[i] << (i % 4)) | (i & 1)


def test_bit_operations_with_an_index_keep_the_sized_width(tmp_path):
    from ptxas import assemble

    q = np.array([-33, -33, 89, 89, 7, 7, -8, -8], np.int32)
    u = np.arange(250, 258, dtype=np.int64).astype(np.uint8)
    w, v = np.zeros(8, np.int32), np.zeros(8, np.uint8)
    tlc.interpret(nibbles, q, w, u, v)
    shift = 28 - 4 * (np.arange(8) % 2)
    want = ((q.astype(np.int64) << shift) & 0xFFFFFFFF).astype(np.uint32).view(np.int32) >> 28
    np.testing.assert_array_equal(w, want)
    i = np.arange(8)
    np.testing.assert_array_equal(v, ((u.astype(np.int64) << (i % 4)) | (i & 1)) & 0xFF)
    # (the int32 result stored into uint8 V keeps its low byte)
    ptx = tlc.compile(nibbles, target="sm_80").get_kernel_source()
    assert "shl.b64" not in ptx and "shr.u64" not in ptx and "shr.s32" in ptx
    assemble(ptx, "sm_80", tmp_path)
