"""T.make_tensor and T.ptr (TileLang's pointer tables): a grouped GEMM whose
groups' A, B and C live in separate allocations, their addresses passed in
int64 tables (`T.Tensor([G], T.ptr)`), each block making its group's
tensors from the table at run time; and a tensor made from a `T.ptr`
parameter. They compile for both targets (ptxas), never through TMA (no
host-encoded tensor map for a run-time address); the GPU test runs them."""

import math
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at
from tlc.interpreter import InterpreterError
from ptxas import assemble

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def grouped_gemm(group_rows, N, K, block_M=64, block_N=64, block_K=32, stages=2,
                 dtype=T.float16):
    """C_g = A_g @ B_g for groups of group_rows[g] rows, each A_g (max_M x K), B_g (K x N)
    and C_g (max_M x N) its own allocation, found through the pointer tables."""
    G, max_M = len(group_rows), max(group_rows)
    first_tile = [0]
    for rows in group_rows[:-1]:
        first_tile.append(first_tile[-1] + math.ceil(rows / block_M))
    tiles = first_tile[-1] + math.ceil(group_rows[-1] / block_M)

    @T.prim_func
    def grouped(A_ptrs: T.Tensor([G], T.ptr), B_ptrs: T.Tensor([G], T.ptr),
                C_ptrs: T.Tensor([G], T.ptr), tile_start: T.Tensor([G], T.int32)):
        with T.Kernel(tiles, T.ceildiv(N, block_N), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            g = T.alloc_var(T.int32)
            g = 0
            for i in T.serial(G):
                if bx >= tile_start[i]:
                    g = i
            row = (bx - tile_start[g]) * block_M
            A = T.make_tensor(A_ptrs[g], (max_M, K), dtype)
            B = T.make_tensor(B_ptrs[g], (K, N), dtype)
            C = T.make_tensor(C_ptrs[g], (max_M, N), dtype)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[row, k * block_K], A_s)
                T.copy(B[k * block_K, by * block_N], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[row, by * block_N])

    return grouped, first_tile


def scaled_copy(block=256):
    """Y = 2 * X[:n] for X at a T.ptr parameter's address, n a run-time length."""

    @T.prim_func
    def from_pointer(x_ptr: T.ptr, n: T.int32, Y: T.Tensor((1024,), "float32")):
        X = T.make_tensor(x_ptr, (n,), "float32")
        with T.Kernel(T.ceildiv(1024, block), threads=128) as bx:
            for i in T.Parallel(block):
                if bx * block + i < n:
                    Y[bx * block + i] = X[bx * block + i] * 2

    return from_pointer


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_grouped_gemm_through_pointer_tables(target, tmp_path):
    prim, _ = grouped_gemm([100, 64, 200], 128, 256)
    kernel = tlc.compile(prim, target=target)
    assert kernel.get_mlir("tile").count("tile.make_tensor") == 3
    ptx = kernel.get_kernel_source()
    assert "cp.async.bulk.tensor" not in ptx  # no TMA for run-time addresses
    assert "cp.async.cg.shared.global" in ptx or "cp.async.ca.shared.global" in ptx
    assemble(ptx, target, tmp_path)
    assert [p["name"] for p in kernel.params] == ["A_ptrs", "B_ptrs", "C_ptrs", "tile_start"]


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_tensor_at_a_pointer_parameter(target, tmp_path):
    kernel = tlc.compile(scaled_copy(), target=target)
    assemble(kernel.get_kernel_source(), target, tmp_path)
    assert [p["name"] for p in kernel.params] == ["x_ptr", "n", "Y"]


def test_the_interpreter_says_it_has_no_device_memory():
    prim = scaled_copy()
    with pytest.raises(InterpreterError, match="T.make_tensor addresses device memory"):
        tlc.interpret(prim, 0x1000, 8, np.zeros(1024, np.float32))


@T.prim_func
def strided(p: T.ptr, Y: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        X = T.make_tensor(p, (64,), "float32", strides=(2,))  # E:strides
        for i in T.Parallel(64):
            Y[i] = X[i]


@T.prim_func
def narrow_address(p: T.int32, Y: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        X = T.make_tensor(p, (64,), "float32")  # E:narrow
        for i in T.Parallel(64):
            Y[i] = X[i]


@pytest.mark.parametrize("prim, marker, at, message", [
    (strided, "strides", "(2,)", "T.make_tensor's strides: tlc makes row-major, contiguous "
                                 "tensors only"),
    (narrow_address, "narrow", "p, (64,)", "T.make_tensor's ptr is an address read at run time "
                                           "(a T.ptr table entry or parameter, 64-bit)"),
])
def test_make_tensor_errors(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(prim, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, at, message)


@pytest.mark.gpu
def test_pointer_tables_on_the_gpu():
    import torch

    rows, N, K = [100, 64, 200], 128, 256
    prim, first_tile = grouped_gemm(rows, N, K)
    kernel = tlc.compile(prim)
    gen = torch.Generator().manual_seed(0)
    A = [torch.randn(max(rows), K, generator=gen).half().cuda() for _ in rows]
    B = [torch.randn(K, N, generator=gen).half().cuda() for _ in rows]
    C = [torch.full((max(rows), N), float("nan"), dtype=torch.half, device="cuda")
         for _ in rows]
    table = lambda ts: torch.tensor([t.data_ptr() for t in ts], dtype=torch.int64,  # noqa: E731
                                    device="cuda")
    kernel(table(A), table(B), table(C), torch.tensor(first_tile, dtype=torch.int32,
                                                      device="cuda"))
    for a, b, c, m in zip(A, B, C, rows):
        torch.testing.assert_close(c[:m].float(), (a[:m].float() @ b.float()), rtol=1e-2,
                                   atol=1e-2)
    x = torch.randn(1000, device="cuda")
    y = torch.zeros(1024, device="cuda")
    tlc.compile(scaled_copy())(x.data_ptr(), 1000, y)
    torch.testing.assert_close(y[:1000], 2 * x)
