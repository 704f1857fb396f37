"""T.sync_grid: a barrier of the whole grid. The kernel is marked for a
cooperative launch and gets a zero-filled int32 counter (a scratch tensor,
cleared at every call); one thread of each block counts its block in and
waits for the rest. The GPU check is test/gpu/sync_grid_check.py."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at
from ptxas import assemble
from tlc.interpreter import InterpreterError

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def rotations(blocks=(66, 2), rounds=4, threads=128):
    """A[b] <- A[(b + 1) % n] + 1, `rounds` times, each step reading what another block
    wrote before the barrier: A ends as A0 shifted by `rounds` blocks, plus `rounds`."""
    n = blocks[0] * blocks[1]

    @T.prim_func
    def rotate(A: T.Tensor((n, 128), "float32"), B: T.Tensor((n, 128), "float32")):
        with T.Kernel(blocks[0], blocks[1], threads=threads) as (bx, by):
            b = by * blocks[0] + bx
            for _ in T.serial(rounds):
                for i in T.Parallel(128):
                    B[b, i] = A[(b + 1) % n, i] + 1
                T.sync_grid()
                for i in T.Parallel(128):
                    A[b, i] = B[b, i]
                T.sync_grid()

    return rotate


@pytest.mark.parametrize("target", ["sm_80", "sm_90a"])
def test_a_grid_barrier_compiles_to_a_cooperative_kernel(target, tmp_path):
    kernel = tlc.compile(rotations(), target=target)
    art = kernel.artifact
    assert art["scratch"] == [{"dtype": "int32", "name": "grid_barrier0", "shape": [1],
                               "zero_fill": True}]
    assert art["kernels"][0]["cooperative"] is True
    ptx = kernel.get_kernel_source()
    # The loop's two barriers (LLVM may copy one into both sides of a branch).
    assert ptx.count("atom.add.release.gpu.global.u32") >= 2
    assert "ld.acquire.gpu.global.u32" in ptx and "fence.acq_rel.gpu" in ptx
    assemble(ptx, target, tmp_path)
    assert "cooperative" not in tlc.compile(_plain, target=target).artifact


@T.prim_func
def _plain(A: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64):
        for i in T.Parallel(64):
            A[i] = 0


@T.prim_func
def under_a_branch(A: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=64):
        tx = T.get_thread_binding()
        if tx < 32:
            T.sync_grid()  # E:branch


@T.prim_func
def in_parallel(A: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=64):
        for i in T.Parallel(64):
            T.sync_grid()  # E:parallel


@T.prim_func
def with_argument(A: T.Tensor((64,), "float32")):
    with T.Kernel(4, threads=64):
        T.sync_grid(0)  # E:argument


@pytest.mark.parametrize("prim, marker, at, message", [
    (under_a_branch, "branch", "T.sync_grid", "T.sync_grid is a barrier of the whole grid (every "
                                              "thread of every block must reach it), but only "
                                              "some threads reach it here"),
    (in_parallel, "parallel", "T.sync_grid", "T.sync_grid is not valid inside T.Parallel"),
    (with_argument, "argument", "T.sync_grid", "T.sync_grid takes at most 0 arguments, got 1"),
])
def test_sync_grid_errors(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(prim, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, at, message)


def test_the_interpreter_says_it_cannot_run_it():
    a, b = np.zeros((132, 128), np.float32), np.zeros((132, 128), np.float32)
    with pytest.raises(InterpreterError, match="T.sync_grid: the interpreter runs the grid's "
                                               "blocks one after another"):
        tlc.interpret(rotations(), a, b)
