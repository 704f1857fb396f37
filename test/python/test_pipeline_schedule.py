"""T.Pipelined's manual schedule (stage / order / group), TileLang's software-
pipeline guide: the schedules tlc's pipeliner runs take effect, others are
errors at the annotation."""

import os
import re
import sys

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc.errors import CompilationError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import pipeline_schedule  # noqa: E402
import gemm  # noqa: E402


def _build(target="sm_80", **kw):
    return tlc.compile(pipeline_schedule.scheduled_matmul.factory(256, 256, 256, **kw),
                       out_idx=[-1], target=target)


def _loop_body(optimized: str) -> str:
    """The steady-state scf.for of the pipelined loop."""
    m = re.search(r"scf\.for .*?\{tile\.num_stages = \d+ : i64\}", optimized, re.S)
    assert m, "no pipelined loop"
    return m.group(0)


def test_stage_order_of_the_compilers_own_schedule_is_num_stages():
    # stage [0, 0, 2], order [0, 1, 2]: three stages, copies first: the same
    # kernel as num_stages=3, to the byte.
    scheduled = _build(depth=3)
    plain = tlc.compile(gemm.matmul.factory(256, 256, 256, 128, 128, 32, 128, 3),
                        out_idx=[-1], target="sm_80")
    assert scheduled.get_kernel_source().replace(scheduled.name, "k") == \
        plain.get_kernel_source().replace(plain.name, "k")


@pytest.mark.parametrize("grouped", [False, True])
def test_copies_ordered_after_the_gemm_are_issued_after_it(grouped):
    kernel = _build(depth=3, copies_last=True, grouped=grouped)
    assert "copies_last" in kernel.get_mlir("tile")
    body = _loop_body(kernel.get_mlir("optimized"))
    gemm_at = body.index("tile.gemm")
    copies = [m.start() for m in re.finditer(r"tile\.copy .*\{async\}", body)]
    assert len(copies) == 2 and min(copies) > gemm_at
    assert body.index("nvvm.cp.async.wait.group 1") < gemm_at
    # The default order puts them before it.
    body = _loop_body(_build(depth=3).get_mlir("optimized"))
    assert max(m.start() for m in re.finditer(r"tile\.copy .*\{async\}", body)) < \
        body.index("tile.gemm")


def test_copies_last_on_sm90a_warp_specializes():
    # The producer warpgroup issues the loads ahead whatever the order.
    kernel = _build(target="sm_90a", depth=3, copies_last=True)
    ptx = kernel.get_kernel_source()
    assert "cp.async.bulk.tensor" in ptx and "wgmma.mma_async" in ptx


@pytest.mark.parametrize("copies_last", [False, True])
def test_scheduled_gemm_runs_in_the_interpreter(copies_last):
    m, n, k = 200, 160, 96  # no block divides M or N; 3 K iterations for 3 stages
    run = tlc.jit(pipeline_schedule.scheduled_matmul.factory, out_idx=[-1],
                  interpret=True)(m, n, k, copies_last=copies_last)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(run(a, b).astype(np.float32), ref, rtol=1e-2, atol=5e-2)


def _loop(stage, order, *, group=None, num_stages=None):
    """The GEMM of examples/pipeline_schedule.py (with its scalar bind) under
    the given annotations (num_stages=None: not given)."""

    @T.prim_func
    def f(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
          C: T.Tensor((256, 256), "float16")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_shared = T.alloc_shared((128, 32), "float16")
            B_shared = T.alloc_shared((32, 128), "float16")
            C_local = T.alloc_fragment((128, 128), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(8, num_stages=num_stages, stage=stage, order=order,
                                  group=group):
                k0 = ko * 32
                T.copy(A[by * 128, k0], A_shared)
                T.copy(B[k0, bx * 128], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * 128, bx * 128])

    return f


def _compile(f):
    return tlc.compile(f, out_idx=[-1], target="sm_80")


def test_legacy_form_with_an_entry_for_the_bind():
    # One entry per statement, the scalar bind's ignored (TileLang's legacy form).
    text = _compile(_loop([5, 0, 0, 1], [3, 1, 2, 0])).get_mlir("tile")
    assert "num_stages = 2 attributes {copies_last}" in text


def test_num_stages_agreeing_with_the_stages_is_accepted():
    text = _compile(_loop([0, 0, 2], [0, 1, 2], num_stages=3)).get_mlir("tile")
    assert re.search(r"num_stages = 3 \{", text)


def test_all_in_stage_zero_is_a_plain_loop():
    text = _compile(_loop([0, 0, 0], [0, 1, 2])).get_mlir("tile")
    assert "num_stages = 1 {" in text


@pytest.mark.parametrize("stage, order, group, num_stages, message", [
    ([0, 1, 1], [0, 1, 2], None, None,
     r"this global -> shared copy is in stage 1; tlc issues every such copy"),
    ([0, 0, 1], [0, 2, 1], None, None,
     r"the copies must be ordered all before or all after the computing statements"),
    ([0, 0, 1], [1, 0, 2], None, None, r"the copies must keep their source order"),
    ([0, 0, 1], [0, 1, 2], None, 3,
     r"num_stages=3 but the stage annotation makes the pipeline 2 deep"),
    ([0, 1], [0, 1], None, None, r"2 stage entries, but the loop body has 3 scheduled "
                                 r"statements \(4 with its scalar binds\)"),
    ([0, 0, 1], [0, 0, 1], None, None, r"order entries must be distinct"),
    ([0, 1], [0, 1], [[0], [1, 2], [2]], None, r"group must list the loop's 3 scheduled"),
    ([0, 0, 1], [0, 1, 2], [[0, 1], [2]], None, r"2 groups but 3 stage entries"),
    ([0, 0, -1], [0, 1, 2], None, None, r"stage entries must be >= 0"),
    ([0, 0, 1], [0, 1, 2, 3], None, None, r"stage has 3 entries but order has 4"),
])
def test_schedules_tlc_does_not_run_are_errors(stage, order, group, num_stages, message):
    with pytest.raises(CompilationError, match=message) as err:
        _compile(_loop(stage, order, group=group, num_stages=num_stages))
    assert "test_pipeline_schedule.py:" in str(err.value)


def test_a_gemm_ahead_of_the_last_stage_is_an_error():
    @T.prim_func
    def f(A: T.Tensor((256, 256), "float16"), C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=128):
            A_shared = T.alloc_shared((128, 32), "float16")
            B_shared = T.alloc_shared((32, 128), "float16")
            C_local = T.alloc_fragment((128, 128), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(8, stage=[0, 0, 1, 1], order=[0, 1, 2, 3]):
                T.copy(A[0, ko * 32], A_shared)
                T.copy(A[ko * 32, 0], B_shared)
                T.gemm(A_shared, B_shared, C_local)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C)

    # Fine as written; with the first gemm in stage 0 it is not.
    _compile(f)

    @T.prim_func
    def g(A: T.Tensor((256, 256), "float16"), C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, threads=128):
            A_shared = T.alloc_shared((128, 32), "float16")
            B_shared = T.alloc_shared((32, 128), "float16")
            C_local = T.alloc_fragment((128, 128), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(8, stage=[0, 0, 0, 1], order=[0, 1, 2, 3]):
                T.copy(A[0, ko * 32], A_shared)
                T.copy(A[ko * 32, 0], B_shared)
                T.gemm(A_shared, B_shared, C_local)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C)

    with pytest.raises(CompilationError, match=r"'T.gemm\(A_shared, B_shared, C_local\)' is in "
                                               r"stage 0; tlc runs only global -> shared copies "
                                               r"ahead: every other statement goes in the last "
                                               r"stage \(1\)"):
        _compile(g)


def test_sync_is_still_rejected():
    @T.prim_func
    def f(A: T.Tensor((256, 256), "float16")):
        with T.Kernel(1, threads=128):
            A_shared = T.alloc_shared((128, 32), "float16")
            for ko in T.Pipelined(8, num_stages=2, sync=[[0, 1]]):
                T.copy(A[0, ko * 32], A_shared)

    with pytest.raises(CompilationError, match="the argument 'sync' is not supported yet"):
        _compile(f)


def test_order_without_stage_is_an_error():
    @T.prim_func
    def f(A: T.Tensor((256, 256), "float16")):
        with T.Kernel(1, threads=128):
            A_shared = T.alloc_shared((128, 32), "float16")
            for ko in T.Pipelined(8, order=[0]):
                T.copy(A[0, ko * 32], A_shared)

    with pytest.raises(CompilationError, match="'stage' is needed with 'order'"):
        _compile(f)


def test_num_stages_none_is_the_default():
    @T.prim_func
    def f(A: T.Tensor((256,), "float32"), C: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((128,), "float32")
            for k in T.Pipelined(2, num_stages=None):
                T.copy(A[k * 128], s)
                T.copy(s, C[k * 128])

    assert re.search(r"num_stages = 2 \{", _compile(f).get_mlir("tile"))
