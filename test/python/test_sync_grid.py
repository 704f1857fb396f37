"""T.sync_grid: a barrier of the whole grid. The kernel is marked for a
cooperative launch and gets a zero-filled int32 counter (a scratch tensor,
cleared at every call); one thread of each block counts its block in and
waits for the rest. The interpreter runs a kernel whose own top-level code
has such barriers in phases (every block runs a phase before the next
starts). The GPU check is test/gpu/sync_grid_check.py."""

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


@T.prim_func
def two_phases(A: T.Tensor((8, 64), "float32"), B: T.Tensor((8, 64), "float32")):
    # Phase 1 writes each block's row; phase 2 reads the next block's.
    with T.Kernel(8, threads=64) as bx:
        s = T.alloc_fragment((64,), "float32")
        for i in T.Parallel(64):
            s[i] = bx * 100 + i
        T.copy(s, A[bx, :])
        T.sync_grid()
        for i in T.Parallel(64):
            B[bx, i] = A[(bx + 1) % 8, i] + s[i]  # s: this block's, kept across the barrier


def test_the_interpreter_runs_the_phases_in_turn():
    a = np.full((8, 64), np.nan, np.float32)
    b = np.full((8, 64), np.nan, np.float32)
    tlc.interpret(two_phases, a, b)
    rows = np.arange(8)[:, None] * 100 + np.arange(64)[None, :]
    np.testing.assert_array_equal(a, rows)
    np.testing.assert_array_equal(b, np.roll(rows, -1, 0) + rows)
    with pytest.raises(InterpreterError, match="blocks= runs some blocks of the grid, but "
                                               "this kernel waits for all of them"):
        tlc.interpret(two_phases, a, b, blocks=[0])


def test_the_interpreter_runs_barriers_in_serial_loops():
    # rotations: the barriers are in a T.serial loop; every block runs each
    # segment of each round before any starts the next.
    rng = np.random.default_rng(3)
    a0 = rng.standard_normal((12, 128)).astype(np.float32)
    a, b = a0.copy(), np.zeros_like(a0)
    tlc.interpret(rotations((6, 2), 3), a, b)
    want = np.roll(a0, -3, 0)
    for _ in range(3):
        want = want + np.float32(1)
    np.testing.assert_array_equal(a, want)


@T.prim_func
def barrier_under_condition(A: T.Tensor((4, 64), "float32")):
    with T.Kernel(4, threads=64) as bx:
        if A[bx, 0] > 0:
            T.sync_grid()


@T.prim_func
def loop_bounds_per_block(A: T.Tensor((4, 64), "float32")):
    with T.Kernel(4, threads=64) as bx:
        for _ in T.serial(bx):
            T.sync_grid()


def test_the_interpreter_refuses_barriers_it_cannot_order():
    a = np.ones((4, 64), np.float32)
    with pytest.raises(InterpreterError, match="T.sync_grid under a condition: the "
                                               "interpreter runs the blocks"):
        tlc.interpret(barrier_under_condition, a)
    with pytest.raises(InterpreterError, match="a loop with T.sync_grid in it has bounds that "
                                               "differ between the blocks"):
        tlc.interpret(loop_bounds_per_block, a)
