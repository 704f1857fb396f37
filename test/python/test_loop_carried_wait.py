"""T.wait_wgmma in the next iteration: a gemm issued with wg_wait=-1 at the end
of a loop's body, completed by a wait of the next iteration (under an `if` on
the iteration not being the first, or by a T.wait_wgmma(1) that leaves the
new gemm running) and after the loop. tile-select-mma checks the next
iteration up to that wait; a T.Pipelined loop keeps its stages one iteration
longer. Compiled for sm_90a (the loop's one wait_group keeps a group
running), assembled without ptxas serializing the wgmmas, the same on sm_80,
and run in the interpreter; on a GPU, against it."""

import re

import numpy as np
import pytest

import tlc
import tlc.errors
import tlc.language as T
from ptxas import assemble


def k_loop(M, N, K, bm=128, bn=128, bk=64, stages=3, threads=128, dtype="float16"):
    """A K loop that keeps the last gemm running: wait_wgmma(1) completes the
    previous iteration's."""

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bm, bk), dtype)
            B_s = T.alloc_shared((bk, bn), dtype)
            C_f = T.alloc_fragment((bm, bn), "float")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_f, wg_wait=-1)
                T.wait_wgmma(1)
            T.wait_wgmma(0)
            T.copy(C_f, C[by * bm, bx * bn])

    return main


def rescaled(M, N, steps, dtype="float16", touch_early=False):
    """O = 2 O + P V for V's row blocks, P V left running into the next
    iteration, which waits for it (not in the first) before the rescale; with
    `touch_early`, the rescale runs before that wait (an error)."""

    @T.prim_func
    def main(P: T.Tensor((M, 64), dtype), V: T.Tensor((steps * 64, N), dtype),
             O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            P_s = T.alloc_shared((M, 64), dtype)
            V_s = T.alloc_shared((64, N), dtype)
            O_f = T.alloc_fragment((M, N), "float")
            T.copy(P, P_s)
            T.clear(O_f)
            for i in T.serial(steps):
                if touch_early:
                    for r, c in T.Parallel(M, N):
                        O_f[r, c] = O_f[r, c] * 2  # EARLY
                    T.wait_wgmma(0)
                else:
                    if i > 0:
                        T.wait_wgmma(0)
                    for r, c in T.Parallel(M, N):
                        O_f[r, c] = O_f[r, c] * 2
                T.copy(V[i * 64, 0], V_s)
                T.gemm(P_s, V_s, O_f, wg_wait=-1)  # GEMM
            T.wait_wgmma(0)
            T.copy(O_f, O)

    return main


def line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(n for n, line in enumerate(f, 1) if line.rstrip().endswith(marker))


def test_touching_before_the_next_iterations_wait_names_both_lines():
    with pytest.raises(tlc.errors.CompilationError) as e:
        tlc.compile(rescaled(64, 128, 4, touch_early=True), target="sm_90a")
    message = str(e.value)
    assert f"test_loop_carried_wait.py:{line_of('# EARLY')}:" in message, message
    assert "(issued in the previous iteration)" in message, message
    assert f"test_loop_carried_wait.py:{line_of('# GEMM')}:" in message, message


def loop_body(ptx: str) -> str:
    """The PTX between the first wgmma and the loop's backward branch."""
    start = ptx.index("wgmma.mma_async")
    return ptx[ptx.rfind("$L__BB", 0, start):]


def test_k_loop_keeps_one_group_running(tmp_path):
    kernel = tlc.compile(k_loop(512, 512, 1024), target="sm_90a")
    ptx = kernel.get_kernel_source()
    body = loop_body(ptx)
    waits = re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d+)", body)
    assert "1" in waits, waits
    report = assemble(ptx, "sm_90a", tmp_path)
    assert "serialized" not in report, report
    # The consumers release the stage of the iteration before (its gemm was
    # still running when this one's began), not this iteration's.
    opt = kernel.get_mlir("optimized")
    after = opt[opt.index("tile.wait_wgmma"):]
    release = after[:after.index("nvvm.mbarrier.arrive")]
    assert re.search(r"(%\w+) = arith.constant 1 : index\s+%\w+ = arith.subi %\w+, \1", release), \
        release


def test_k_loop_on_the_cp_async_pipeline(tmp_path):
    # Without warp specialization: the copies run one stage less ahead.
    kernel = tlc.compile(k_loop(512, 512, 1024), target="sm_90a",
                         pass_configs={"tl.disable_warp_specialized": True})
    ptx = kernel.get_kernel_source()
    assert "cp.async.cg.shared.global" in ptx or "cp.async.ca.shared.global" in ptx
    assert "1" in re.findall(r"wgmma\.wait_group\.sync\.aligned\s+(\d+)", loop_body(ptx))
    report = assemble(ptx, "sm_90a", tmp_path)
    assert "serialized" not in report, report


def test_rescale_after_wait_in_next_iteration(tmp_path):
    kernel = tlc.compile(rescaled(64, 128, 4), target="sm_90a")
    ptx = kernel.get_kernel_source()
    report = assemble(ptx, "sm_90a", tmp_path)
    assert "serialized" not in report, report
    tlc.compile(rescaled(64, 128, 4), target="sm_80")


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
def test_k_loop_compiles_on_both_targets(target):
    tlc.compile(k_loop(256, 256, 512), target=target)


def test_interpreter_k_loop():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 512)).astype(np.float16)
    b = rng.standard_normal((512, 256)).astype(np.float16)
    c = np.zeros((256, 256), np.float16)
    tlc.interpret(k_loop(256, 256, 512), a, b, c)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-2, atol=2e-1)


def test_interpreter_rescaled():
    rng = np.random.default_rng(1)
    p = rng.standard_normal((64, 64)).astype(np.float16)
    v = rng.standard_normal((4 * 64, 128)).astype(np.float16)
    o = np.zeros((64, 128), np.float32)
    tlc.interpret(rescaled(64, 128, 4), p, v, o)
    ref = np.zeros((64, 128), np.float64)
    for i in range(4):
        ref = 2 * ref + p.astype(np.float64) @ v[i * 64:(i + 1) * 64].astype(np.float64)
    np.testing.assert_allclose(o, ref, rtol=1e-3, atol=1e-2)


@pytest.mark.gpu
def test_gpu_k_loop():
    import torch

    a = torch.randn(512, 1024, dtype=torch.float16, device="cuda")
    b = torch.randn(1024, 512, dtype=torch.float16, device="cuda")
    c = torch.full((512, 512), float("nan"), dtype=torch.float16, device="cuda")
    tlc.compile(k_loop(512, 512, 1024))(a, b, c)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)


@pytest.mark.gpu
def test_gpu_rescaled():
    import torch

    p = torch.randn(64, 64, dtype=torch.float16, device="cuda")
    v = torch.randn(4 * 64, 128, dtype=torch.float16, device="cuda")
    o = torch.full((64, 128), float("nan"), device="cuda")
    tlc.compile(rescaled(64, 128, 4))(p, v, o)
    ref = torch.zeros(64, 128, dtype=torch.float64, device="cuda")
    for i in range(4):
        ref = 2 * ref + p.double() @ v[i * 64:(i + 1) * 64].double()
    torch.testing.assert_close(o.double(), ref, rtol=1e-3, atol=1e-2)
