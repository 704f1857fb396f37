"""T.StridedTensor: global tensors stored with strides other than row-major
(TileLang's `A: T.StridedTensor[[M, N], [dM, dN], T.float32]`, a transposed
view passed as it is). Stride symbols bind from the argument's strides at each
call; an access along a dimension whose stride is not the int 1 goes element by
element, and such a tensor is never copied by TMA."""

import numpy as np
import pytest

import tlc
import tlc.language as T
from ptxas import assemble
from tlc.runtime import ArgumentError
from tlc.runtime.args import Param, bind

M, N, dM, dN = T.dynamic("M, N, dM, dN")


@T.prim_func
def as_contiguous(A: T.StridedTensor[[M, N], [dM, dN], T.float32],
                  B: T.Tensor((M, N), T.float32)):
    with T.Kernel(T.ceildiv(M, 32), T.ceildiv(N, 32), threads=128) as (bx, by):
        T.copy(A[bx * 32:(bx + 1) * 32, by * 32:(by + 1) * 32],
               B[bx * 32:(bx + 1) * 32, by * 32:(by + 1) * 32])


@T.prim_func
def staged(A: T.StridedTensor((M, 64), (dM, 1), "float16"), B: T.Tensor((M, 64), "float16")):
    # Rows at a run-time stride, contiguous inside: through shared memory.
    with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
        s = T.alloc_shared((64, 64), "float16")
        T.copy(A[bx * 64, 0], s)
        T.copy(s, B[bx * 64, 0])


@T.prim_func
def static_rows(A: T.StridedTensor((64, 64), (128, 1), "float16"),
                B: T.Tensor((64, 64), "float16")):
    # The left half of a 64 x 128 tensor: rows 256 bytes apart, vectors still aligned.
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((64, 64), "float16")
        T.copy(A, f)
        for i, j in T.Parallel(64, 64):
            f[i, j] = f[i, j] * 2
        T.copy(f, B)


def test_a_transposed_view_is_read_in_place():
    a = np.random.default_rng(0).standard_normal((70, 100)).astype(np.float32)
    b = np.full((100, 70), np.nan, np.float32)
    tlc.interpret(as_contiguous, a.T, b)  # a.T: strides (1, 100)
    np.testing.assert_array_equal(b, a.T)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_dynamic_strides_compile_element_by_element(target, tmp_path):
    kernel = tlc.compile(as_contiguous, target=target)
    a_param = kernel.params[0]
    assert a_param["strides"] == ["dM", "dN"] and "strides" not in kernel.params[1]
    ptx = kernel.get_kernel_source()
    assert "ld.global.v" not in ptx  # A's elements are not adjacent
    assemble(ptx, target, tmp_path)


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_contiguous_rows_at_a_run_time_stride(target, tmp_path):
    kernel = tlc.compile(staged, target=target)
    assert kernel.params[0]["strides"] == ["dM", 1]
    ptx = kernel.get_kernel_source()
    assert "cp.async.bulk.tensor" not in ptx  # no TMA for a strided tensor
    assemble(ptx, target, tmp_path)
    x = np.random.default_rng(1).standard_normal((100, 80)).astype(np.float16)
    out = np.zeros((100, 64), np.float16)
    tlc.interpret(staged, x[:, :64], out)
    np.testing.assert_array_equal(out, x[:, :64])


def test_static_strides_keep_vectors(tmp_path):
    kernel = tlc.compile(static_rows, target="sm_90a")
    assert kernel.params[0]["strides"] == [128, 1]
    ptx = kernel.get_kernel_source()
    assert "ld.global.v4" in ptx or "ld.global.nc.v4" in ptx
    assemble(ptx, "sm_90a", tmp_path)
    x = np.random.default_rng(2).standard_normal((64, 128)).astype(np.float16)
    out = np.zeros((64, 64), np.float16)
    tlc.interpret(static_rows, x[:, :64], out)
    np.testing.assert_array_equal(out, x[:, :64] * 2)
    with pytest.raises(ArgumentError, match=r"argument 'A' .*dim 0's stride must be 128, got 64"):
        tlc.interpret(static_rows, np.ascontiguousarray(x[:, :64]), out)


def test_the_launcher_binds_and_checks_strides():
    params = [Param(1, "A", "tensor", "float32", ("M", "N"), "read", ("dM", "dN")),
              Param(2, "B", "tensor", "float32", ("M", "N"), "write")]

    class Device:  # just enough of __cuda_array_interface__ to bind (no launch)
        def __init__(self, shape, strides):
            self.__cuda_array_interface__ = {
                "shape": shape, "typestr": "<f4", "data": (0x10000, False), "version": 3,
                "strides": None if strides is None else tuple(4 * s for s in strides)}

    tensor = Device

    bound = bind("k", params, (tensor((100, 70), (1, 100)), tensor((100, 70), None)))
    assert bound.symbols == {"M": 100, "N": 70, "dM": 1, "dN": 100}
    # A's descriptor carries its own strides; B's the row-major ones.
    values = [v.value for v in bound.values]
    assert values[:7] == [0x10000, 0x10000, 0, 100, 70, 1, 100]
    assert values[7 + 5:] == [70, 1]
    with pytest.raises(ArgumentError, match="must be row-major contiguous"):
        bind("k", params, (tensor((100, 70), (1, 100)), tensor((100, 70), (1, 100))))
    shared = [Param(1, "A", "tensor", "float32", ("M",), "read", ("d",)),
              Param(2, "B", "tensor", "float32", ("M",), "read", ("d",))]
    with pytest.raises(ArgumentError, match="dim 0's stride is symbol d = 2, but argument 'A' "
                                            "dim 0's stride set d = 1"):
        bind("k", shared, (tensor((8,), (1,)), tensor((8,), (2,))))


@T.prim_func
def vector_atomics(A: T.StridedTensor((64, 64), (1, 64), "float32"),
                   B: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        for i, j in T.Parallel(64, 32):
            T.atomic_addx2(A[i, j * 2], B[i, j * 2])


def test_vector_atomics_into_a_column_major_tensor_add_each_element(tmp_path):
    ptx = tlc.compile(vector_atomics, target="sm_90a").get_kernel_source()
    assert "red.global.add.v2" not in ptx and ".v2.f32" not in ptx
    assemble(ptx, "sm_90a", tmp_path)
    a = np.zeros((64, 64), np.float32, order="F")
    b = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    tlc.interpret(vector_atomics, a, b)
    np.testing.assert_array_equal(a, b)


def test_declaration_errors():
    with pytest.raises(tlc.CompilationError, match="T.StridedTensor: 1 strides for the 2 dims"):
        T.StridedTensor((4, 4), (1,), "float32")
    with pytest.raises(tlc.CompilationError, match="strides must be ints >= 0 or T.dynamic"):
        T.StridedTensor((4, 4), (4, 1.5), "float32")
    with pytest.raises(tlc.CompilationError, match=r"write T.StridedTensor\[shape, strides, "):
        T.StridedTensor[(4, 4)]


@tlc.jit(interpret=True)
def transposed_copy(A):
    # TileLang's eager-JIT tutorial's StridedTensor program, imports changed only.
    M, N, dM, dN = T.dynamic("M, N, dM, dN")
    A: T.StridedTensor[[M, N], [dM, dN], T.float32]
    B = T.empty((M, N), A.dtype)
    block_M = 128
    block_N = 128
    with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=128) as (bx, by):
        T.copy(
            A[bx * block_M : (bx + 1) * block_M, by * block_N : (by + 1) * block_N],
            B[bx * block_M : (bx + 1) * block_M, by * block_N : (by + 1) * block_N],
        )
    return B


def test_the_eager_tutorial_program():
    a = np.random.default_rng(4).standard_normal((300, 200)).astype(np.float32)
    np.testing.assert_array_equal(transposed_copy(a.T), a.T)
    params = tlc.jit(transposed_copy.fn).compile().params  # compiled, not interpreted
    assert params[0]["strides"] == ["dM", "dN"] and params[0]["access"] == "read"
