"""T.alloc_reducer / T.finalize_reducer: per-thread partial results that
T.Parallel loops update at any index, combined across the block; compiled,
interpreted against numpy, and the mistakes reported at the user's line."""

import sys
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at
import ptxas

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()
sys.path.insert(0, str(Path(THIS).parents[2] / "examples"))

from reducers import column_min_rounds, count_classes, rms_scale, row_stats  # noqa: E402


def test_row_sums_and_abs_max_interpreted():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 32)).astype(np.float16)
    s, mx = np.zeros(64, np.float32), np.zeros(1, np.float32)
    tlc.interpret(row_stats(64, 32), a, s, mx)
    ref = a.astype(np.float32)
    assert np.abs(s - ref.sum(1)).max() < 1e-4
    assert mx[0] == np.abs(ref).max()


def test_sum_read_outside_parallel_interpreted():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 256)).astype(np.float32)
    y = np.zeros_like(x)
    tlc.interpret(rms_scale(4, 256), x, y)
    ref = x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6)
    assert np.abs(y - ref).max() < 1e-5


def test_reductions_repeat_in_a_serial_loop_interpreted():
    rng = np.random.default_rng(2)
    a = rng.uniform(0.0, 2.0, (3, 16, 64)).astype(np.float32)
    out = np.zeros((3, 64), np.float32)
    tlc.interpret(column_min_rounds(16, 64, 3), a, out)
    assert np.array_equal(out, np.minimum(a.min(1), 0.5))


def test_int_sums_at_computed_indices_interpreted():
    x = np.arange(1024, dtype=np.int32) * 7
    h = np.zeros((2, 5), np.int32)
    tlc.interpret(count_classes(1024, 5), x, h)
    ref = np.zeros((2, 5), np.int32)
    np.add.at(ref, (np.arange(1024) % 2, x % 5), 1)
    assert np.array_equal(h, ref)


# An update at an index that differs per thread (cm[j] with j from the loop's
# layout) indexes the partials dynamically: they live in the thread's stack
# (local memory), as a dynamically indexed array does in CUDA.
@pytest.mark.parametrize("prim, stack", [(row_stats(32, 64), False), (rms_scale(4, 256), False),
                                         (column_min_rounds(16, 64, 3), True),
                                         (count_classes(1024, 5), True)],
                         ids=["row_stats", "rms", "colmin", "hist"])
def test_compiles_to_shuffles(prim, stack, tmp_path):
    ptx = tlc.compile(prim, target="sm_90a").get_kernel_source()
    assert "shfl.sync.bfly" in ptx
    ptxas.assemble(ptx, "sm_90a", tmp_path, stack=stack)
    assert ".entry" in tlc.compile(prim, target="sm_80").get_kernel_source()


def test_whole_result_is_written_by_one_thread():
    # Every thread holds all 32 sums; the copy out is thread 0's 8 vectors.
    ptx = tlc.compile(row_stats(32, 64), target="sm_90a").get_kernel_source()
    assert ptx.count("st.global.v4.f32") + ptx.count("st.global.v4.b32") == 8


@T.prim_func
def sums_into_dst(X: T.Tensor((16, 64), "float32"), Y: T.Tensor((16,), "float16")):
    # TileLang's newer form: T.finalize_reducer(r, dst) writes the result into dst.
    with T.Kernel(1, threads=128) as _:
        x = T.alloc_fragment((16, 64), "float32")
        r = T.alloc_reducer((16,), "float32")
        out = T.alloc_fragment((16,), "float16")
        T.copy(X, x)
        T.clear(r)
        for i, j in T.Parallel(16, 64):
            r[i] += x[i, j]
        T.finalize_reducer(r, out)
        T.copy(out, Y)


def test_finalize_into_dst(tmp_path):
    x = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)
    y = np.zeros(16, np.float16)
    tlc.interpret(sums_into_dst, x, y)
    np.testing.assert_allclose(y, x.sum(1), rtol=2e-3, atol=2e-3)
    ptxas.assemble(tlc.compile(sums_into_dst, target="sm_90a").get_kernel_source(), "sm_90a",
                   tmp_path)


# -- mistakes, at the user's line ----------------------------------------------------


@T.prim_func
def sum_fill_not_zero(X: T.Tensor((64,), "float32"), Y: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32")
        T.fill(r, 1.0)  # E:fill
        T.finalize_reducer(r)


@T.prim_func
def replication_none(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32", replication="none")  # E:none


@T.prim_func
def unknown_op(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32", op="prod")  # E:op


@T.prim_func
def odd_threads(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=96) as _:
        r = T.alloc_reducer((1,), "float32")  # E:threads


@T.prim_func
def float64_reducer(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float64")  # E:dtype


@T.prim_func
def dst_of_other_shape(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((2,), "float32")
        d = T.alloc_fragment((4,), "float32")
        T.clear(r)
        T.finalize_reducer(r, d)  # E:dst


@T.prim_func
def batched_finalize(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((2,), "float32")
        T.clear(r)
        T.finalize_reducer(r, batch=2)  # E:batch


@T.prim_func
def wrong_form_for_sum(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        x = T.alloc_fragment((64,), "float32")
        r = T.alloc_reducer((1,), "float32")
        T.copy(X, x)
        T.clear(r)
        for i in T.Parallel(64):
            r[0] = r[0] * x[i]  # E:form
        T.finalize_reducer(r)


@T.prim_func
def add_to_max(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        x = T.alloc_fragment((64,), "float32")
        r = T.alloc_reducer((1,), "float32", op="max")
        T.copy(X, x)
        T.fill(r, 0)
        for i in T.Parallel(64):
            r[0] += x[i]  # E:max
        T.finalize_reducer(r)


@T.prim_func
def update_outside_parallel(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32")
        T.clear(r)
        r[0] += 1.0  # E:outside
        T.finalize_reducer(r)


@T.prim_func
def update_before_fill(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        x = T.alloc_fragment((64,), "float32")
        r = T.alloc_reducer((1,), "float32")
        T.copy(X, x)
        for i in T.Parallel(64):
            r[0] += x[i]  # E:unfilled


@T.prim_func
def read_mid_reduction(X: T.Tensor((64,), "float32"), Y: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        x = T.alloc_fragment((64,), "float32")
        r = T.alloc_reducer((1,), "float32")
        T.copy(X, x)
        T.clear(r)
        for i in T.Parallel(64):
            r[0] += x[i]
            Y[i] = r[0]  # E:read
        T.finalize_reducer(r)


@T.prim_func
def copy_mid_reduction(X: T.Tensor((64,), "float32"), Y: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32")
        T.clear(r)
        T.copy(r, Y)  # E:copy
        T.finalize_reducer(r)


@T.prim_func
def filled_twice(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32")
        T.clear(r)
        T.clear(r)  # E:twice
        T.finalize_reducer(r)


@T.prim_func
def finalize_unfilled(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32")
        T.finalize_reducer(r)  # E:finalize


@T.prim_func
def finalize_in_a_loop(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32")
        T.clear(r)
        for k in T.serial(2):
            T.finalize_reducer(r)  # E:region


@T.prim_func
def never_finalized(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32")
        T.clear(r)  # E:never


@T.prim_func
def read_before_any_fill(X: T.Tensor((64,), "float32"), Y: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as _:
        r = T.alloc_reducer((1,), "float32")
        v = r[0]  # E:empty


@T.prim_func
def finalize_not_a_reducer(X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=128) as _:
        x = T.alloc_fragment((64,), "float32")
        T.finalize_reducer(x)  # E:notreducer


@pytest.mark.parametrize("prim, marker, at, message", [
    (sum_fill_not_zero, "fill", "T.fill", "a sum reducer starts at 0"),
    (replication_none, "none", '"none"', 'replication="none"'),
    (unknown_op, "op", '"prod"', "a reducer's op is \"sum\", \"max\" or \"min\""),
    (odd_threads, "threads", "T.alloc_reducer", "needs a block of 32, 64, 128"),
    (float64_reducer, "dtype", '"float64"', "a reducer's dtype is one of"),
    (wrong_form_for_sum, "form", "r[0] =", "'r' is a sum reducer: update it as r[i] += v"),
    (add_to_max, "max", "r[0] +=", "'r' is a max reducer: update it as r[i] = T.max(r[i], v)"),
    (update_outside_parallel, "outside", "r[0]", "is updated inside T.Parallel"),
    (update_before_fill, "unfilled", "r[0]", "is updated only between T.fill/T.clear(r)"),
    (read_mid_reduction, "read", "r[0]", "holds partial results until T.finalize_reducer(r)"),
    (copy_mid_reduction, "copy", "r,", "holds partial results until T.finalize_reducer(r)"),
    (filled_twice, "twice", "T.clear", "is already being reduced (filled at line"),
    (finalize_unfilled, "finalize", "T.finalize_reducer", "'r' is not being reduced"),
    (finalize_in_a_loop, "region", "T.finalize_reducer", "must be in the block of statements"),
    (never_finalized, "never", "T.clear", "filled here but never finalized"),
    (read_before_any_fill, "empty", "r[0]", "holds no result yet"),
    (finalize_not_a_reducer, "notreducer", "x)", "takes a T.alloc_reducer buffer"),
    (dst_of_other_shape, "dst", "d)", "dst is a fragment, shared or local buffer of the "
                                      "reducer's shape (2,)"),
    (batched_finalize, "batch", "2)", "batch (TileLang's outputs per batched all-reduce) must "
                                      "be 1"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 12 and " " not in v else None)
def test_mistakes_point_at_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        prim.build_module()
    assert_error_at(info.value, THIS, LINES, marker, at, message)
