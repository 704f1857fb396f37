"""The interpreter reports accesses of two concurrent T.ws bodies to one shared-memory
element that no barrier orders (tlc.interpreter.races): a read after another body's write,
a write after its read or write. Programs that order them through T.barrier_arrive /
T.barrier_wait (a producer / consumer ring over several phases, a hand-over and back),
or whose bodies touch disjoint elements, run as before."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import line_of

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


@T.prim_func
def read_before_written(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        with T.ws(0):
            T.copy(A, s)  # E:raw_write
        with T.ws(1):
            T.copy(s, C)  # E:raw_read


def test_read_of_another_bodys_write_without_a_barrier():
    with pytest.raises(tlc.interpreter.InterpreterError) as info:
        tlc.interpret(read_before_written, np.ones((64, 64), np.float16),
                      np.zeros((64, 64), np.float16))
    assert info.value.location.line == line_of(LINES, "raw_read")
    message = str(info.value)
    assert "(warpgroup 1) reads element [0, 0] of shared buffer 's' (64x64 float16)" in message
    assert f"(warpgroup 0) wrote at {THIS}:{line_of(LINES, 'raw_write')}:" in message
    assert "with no barrier ordering the two" in message


@T.prim_func
def handed_over(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        with T.ws(0):
            T.copy(A, s)
            T.barrier_arrive(full)
        with T.ws(1):
            T.barrier_wait(full, 0)
            T.copy(s, C)


def test_a_barrier_orders_the_write_before_the_read():
    a = np.arange(64 * 64, dtype=np.float16).reshape(64, 64)
    c = np.zeros((64, 64), np.float16)
    tlc.interpret(handed_over, a, c)
    assert (c == a).all()


@T.prim_func
def overwritten_while_read(A: T.Tensor((2, 64), "float32"), C: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64,), "float32")
        full = T.alloc_barrier(128)
        with T.ws(0):
            T.copy(A[0, :], s)
            T.barrier_arrive(full)
            T.copy(A[1, :], s)  # no wait for the reader's release
        with T.ws(1):
            T.barrier_wait(full, 0)
            T.copy(s, C)  # E:war_read


def test_write_over_another_bodys_read_without_a_barrier():
    with pytest.raises(tlc.interpreter.InterpreterError) as info:
        tlc.interpret(overwritten_while_read, np.ones((2, 64), np.float32),
                      np.zeros(64, np.float32))
    # The bodies run one at a time: warpgroup 0 writes the second time before warpgroup 1
    # reads, so the read is reported (it does not follow that write either).
    assert info.value.location.line == line_of(LINES, "war_read")
    assert "(warpgroup 1) reads element [0] of shared buffer 's' (64 float32)" in str(info.value)


@T.prim_func
def ring(A: T.Tensor((8, 64), "float32"), C: T.Tensor((8, 64), "float32")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((2, 64), "float32")
        full = T.alloc_barrier([128, 128])
        empty = T.alloc_barrier([128, 128])
        with T.ws(0):  # producer: two stages, eight phases
            for i in T.serial(8):
                T.barrier_wait(empty[i % 2], (i // 2 + 1) % 2)
                T.copy(A[i, :], s[i % 2, :])
                T.barrier_arrive(full[i % 2])
        with T.ws(1):
            for i in T.serial(8):
                T.barrier_wait(full[i % 2], (i // 2) % 2)
                for j in T.Parallel(64):
                    C[i, j] = s[i % 2, j] * 2
                T.barrier_arrive(empty[i % 2])


@T.prim_func
def released_too_early(A: T.Tensor((8, 64), "float32"), C: T.Tensor((8, 64), "float32")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((2, 64), "float32")
        full = T.alloc_barrier([128, 128])
        empty = T.alloc_barrier([128, 128])
        with T.ws(0):
            for i in T.serial(8):
                T.barrier_wait(empty[i % 2], (i // 2 + 1) % 2)
                T.copy(A[i, :], s[i % 2, :])  # E:refill
                T.barrier_arrive(full[i % 2])
        with T.ws(1):  # releases each stage before it reads it
            for i in T.serial(8):
                T.barrier_wait(full[i % 2], (i // 2) % 2)
                T.barrier_arrive(empty[i % 2])
                for j in T.Parallel(64):
                    C[i, j] = s[i % 2, j] * 2  # E:late_read


def test_a_ring_of_stages_over_several_phases():
    a = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    c = np.zeros((8, 64), np.float32)
    tlc.interpret(ring, a, c)
    np.testing.assert_array_equal(c, a * 2)
    # The consumer's read of a stage follows its release: the producer's refill may come
    # first on the GPU.
    with pytest.raises(tlc.interpreter.InterpreterError) as info:
        tlc.interpret(released_too_early, a, np.zeros((8, 64), np.float32))
    assert info.value.location.line == line_of(LINES, "refill")
    message = str(info.value)
    assert "(warpgroup 0) writes element [0, 0] of shared buffer 's' (2x64 float32)" in message
    assert f"(warpgroup 1) read at {THIS}:{line_of(LINES, 'late_read')}:" in message


@T.prim_func
def disjoint_halves(A: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64,), "float32")
        with T.ws(0):
            T.copy(A[0:32], s[0:32])
            T.copy(s[0:32], C[0:32])
        with T.ws(1):
            T.copy(A[32:64], s[32:64])
            T.copy(s[32:64], C[32:64])


def test_bodies_on_disjoint_elements_need_no_barrier():
    a = np.arange(64, dtype=np.float32)
    c = np.zeros(64, np.float32)
    tlc.interpret(disjoint_halves, a, c)
    assert (c == a).all()


@T.prim_func
def before_and_after(A: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64,), "float32")
        T.copy(A, s)  # the block's own code: before both bodies
        with T.ws(0):
            for i in T.Parallel(32):
                C[i] = s[i] + 1
        with T.ws(1):
            for i in T.Parallel(32):
                C[32 + i] = s[32 + i] + 2
        T.copy(s, C)  # after both


def test_code_before_and_after_the_bodies_is_ordered_with_them():
    a = np.arange(64, dtype=np.float32)
    c = np.zeros(64, np.float32)
    tlc.interpret(before_and_after, a, c)
    assert (c == a).all()


@T.prim_func
def named_handoff(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256):
        s = T.alloc_shared((128,), "float32")
        with T.ws(0):  # runs first here: its sync waits for warpgroup 1's arrival
            T.sync_threads(9, 256)
            T.copy(s, Y)
        with T.ws(1):
            T.copy(X, s)
            T.named_barrier_arrive(9, 256)


@T.prim_func
def named_arrive_too_early(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256):
        s = T.alloc_shared((128,), "float32")
        with T.ws(0):
            T.sync_threads(9, 256)
            T.copy(s, Y)  # E:named_read
        with T.ws(1):
            T.named_barrier_arrive(9, 256)
            T.copy(X, s)


def test_named_barriers_order_bodies_too():
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    tlc.interpret(named_handoff, x, y)
    assert (y == x).all()
    with pytest.raises(tlc.interpreter.InterpreterError) as info:
        tlc.interpret(named_arrive_too_early, x, np.zeros(128, np.float32))
    assert info.value.location.line == line_of(LINES, "named_read")
    assert "no barrier ordering the two" in str(info.value)
