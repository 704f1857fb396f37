"""T.ws and T.alloc_barrier (hand-written warp specialization): compiled for
sm_90a and sm_80, interpreted against numpy, and the mistakes reported at the
user's line."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from marked_lines import assert_error_at, line_of
import ptxas

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()
sys.path.insert(0, str(Path(THIS).parents[2] / "examples"))

from warp_specialize import (pipelined_bodies, producer_consumer,  # noqa: E402
                             split_columns, split_columns_by_thread, staged_ring)


def _operands(m, n, k, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    return a, b, a.astype(np.float32) @ b.astype(np.float32)


def _interpreted_gemm(prim, m, n, k, seed):
    """Runs the m x n x k GEMM `prim` in the interpreter against numpy."""
    a, b, ref = _operands(m, n, k, seed)
    c = np.zeros((m, n), np.float16)
    tlc.interpret(prim, a, b, c)
    assert np.abs(c.astype(np.float32) - ref).max() < 0.1


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_producer_consumer_interpreted(stages):
    # K of 5 steps: the ring wraps, and the last round is partial.
    _interpreted_gemm(producer_consumer.factory(128, 256, 320, stages=stages), 128, 256, 320,
                      stages)


@pytest.mark.parametrize("stages", [0, 1, 2, 3])
def test_pipelined_bodies_interpreted(stages):
    # Written for one stage; T.Pipelined gives the tiles and barriers `stages`
    # copies. The interpreter runs the bodies concurrently, so the producer runs
    # ahead as far as the rewritten waits let it (a wait left as written reads a
    # tile no one stored: an error).
    _interpreted_gemm(pipelined_bodies.factory(128, 256, 320, stages=stages), 128, 256, 320,
                      20 + stages)


@T.macro
def load_step(A, B, a, b, k):
    T.copy(A[0, k * 64], a)
    T.copy(B[k * 64, 0], b)


def pipelined_branches(stages):
    """pipelined_bodies with `if tx < 128: ... else: ...` for T.ws, its loads
    in a T.macro."""

    @T.prim_func
    def gemm(A: T.Tensor((128, 320), "float16"), B: T.Tensor((320, 128), "float16"),
             C: T.Tensor((128, 128), "float16")):
        with T.Kernel(1, threads=256) as _:
            a = T.alloc_shared((128, 64), "float16")
            b = T.alloc_shared((64, 128), "float16")
            acc = T.alloc_fragment((128, 128), "float32")
            loaded = T.alloc_barrier(128)
            consumed = T.alloc_barrier(128)
            tx = T.get_thread_binding()
            if tx >= 128:
                T.clear(acc)
            for k in T.Pipelined(5, num_stages=stages):
                if tx < 128:
                    T.barrier_wait(consumed, (k + 1) % 2)
                    load_step(A, B, a, b, k)
                    T.barrier_arrive(loaded)
                else:
                    T.barrier_wait(loaded, k % 2)
                    T.gemm(a, b, acc)
                    T.barrier_arrive(consumed)
            if tx >= 128:
                T.copy(acc, C)

    return gemm


@pytest.mark.parametrize("stages", [0, 2, 3])
def test_pipelined_branches_interpreted(stages):
    # The bodies are branches on the thread index; the tiles the macro loads
    # are staged like those T.copy writes in the loop itself.
    prim = pipelined_branches(stages)
    if stages:
        assert str(prim.build_module()).count(f"#tile.shared<stages = {stages}>") == 2
    _interpreted_gemm(prim, 128, 128, 320, 30 + stages)


def test_pipelined_branches_ptx(tmp_path):
    for arch in ("sm_90a", "sm_80"):
        ptx = tlc.compile(pipelined_branches(2), target=arch).get_kernel_source()
        assert ("wgmma.mma_async" in ptx) == (arch == "sm_90a")
        ptxas.assemble(ptx, arch, tmp_path)


def pipelined_from(start, stages):
    """A staged loop over [start, start + 5) whose waits' parities are written
    from k (the rewrite evaluates them at the loop's first index)."""

    @T.prim_func
    def gemm(A: T.Tensor((128, 320), "float16"), B: T.Tensor((320, 128), "float16"),
             C: T.Tensor((128, 128), "float16")):
        with T.Kernel(1, threads=256) as _:
            a = T.alloc_shared((128, 64), "float16")
            b = T.alloc_shared((64, 128), "float16")
            acc = T.alloc_fragment((128, 128), "float32")
            loaded = T.alloc_barrier(128)
            consumed = T.alloc_barrier(128)
            with T.ws(1):
                T.clear(acc)
            for k in T.Pipelined(start, start + 5, num_stages=stages):
                with T.ws(0):
                    T.barrier_wait(consumed, (k - start + 1) % 2)
                    T.copy(A[0, (k - start) * 64], a)
                    T.copy(B[(k - start) * 64, 0], b)
                    T.barrier_arrive(loaded)
                with T.ws(1):
                    T.barrier_wait(loaded, (k + start) % 2)
                    T.gemm(a, b, acc)
                    T.barrier_arrive(consumed)
            with T.ws(1):
                T.copy(acc, C)

    return gemm


@pytest.mark.parametrize("start", [1, 3])
@pytest.mark.parametrize("stages", [2, 3])
def test_pipelined_bodies_from_another_start(start, stages):
    _interpreted_gemm(pipelined_from(start, stages), 128, 128, 320, start * 10 + stages)


def test_pipelined_bodies_ir_and_ptx(tmp_path):
    prim = pipelined_bodies.factory(1024, 1024, 1024, stages=3)
    ir_text = str(prim.build_module())
    # Each tile becomes 3 stages, each barrier 3 copies; the waits' parities are
    # (k // 3 + p(0)) % 2 of this iteration's copy.
    assert ir_text.count("#tile.shared<stages = 3>") == 2
    assert ir_text.count("init_barriers") == 2
    assert ir_text.count("counts = [128, 128, 128]") == 2
    assert ir_text.count("tile.stage ") + ir_text.count("tile.stage(") >= 2
    ptx = tlc.compile(prim, target="sm_90a").get_kernel_source()
    assert ptx.count("cp.async.bulk.tensor") == 3  # A, and B in 2 column blocks
    assert "wgmma.mma_async" in ptx
    ptxas.assemble(ptx, "sm_90a", tmp_path)
    ptxas.assemble(tlc.compile(prim, target="sm_80").get_kernel_source(), "sm_80", tmp_path)


@pytest.mark.parametrize("stages", [2, 3])
def test_staged_ring_interpreted(stages):
    _interpreted_gemm(staged_ring.factory(256, 128, 448, stages=stages), 256, 128, 448,
                      10 + stages)


def test_staged_ring_ptx(tmp_path):
    prim = staged_ring.factory(1024, 1024, 1024, stages=3)
    ir_text = str(prim.build_module())
    # The stages of A_s and B_s are tile.stage views of allocations laid out
    # in 3 stages; T.tma_copy asks for TMA (tile.tma_required).
    assert ir_text.count("#tile.shared<stages = 3>") == 2
    assert "tile.stage" in ir_text and "tile.tma_required" in ir_text
    ptx = tlc.compile(prim, target="sm_90a").get_kernel_source()
    assert ptx.count("mbarrier.arrive.expect_tx") == 1
    assert ptx.count("cp.async.bulk.tensor.2d") == 3  # A, and B in 2 column blocks
    assert "wgmma.mma_async" in ptx
    # Two warpgroups: no registers to move (ptxas would drop setmaxnreg).
    assert "setmaxnreg" not in ptx
    ptxas.assemble(ptx, "sm_90a", tmp_path)


def test_split_columns_interpreted():
    _interpreted_gemm(split_columns.factory(256, 128, 192), 256, 128, 192, 7)


def test_branches_on_the_thread_index_are_warpgroup_bodies(tmp_path):
    # `if tx < 128: ... else: ...` with tile work in the branches: each branch is its
    # warpgroup's T.ws body, as split_columns writes with T.ws.
    prim = split_columns_by_thread.factory(256, 128, 192)
    _interpreted_gemm(prim, 256, 128, 192, 8)
    ir_text = str(prim.build_module())
    assert len(re.findall(r"tile\.ws warpgroups = \[0\]", ir_text)) == 2
    assert len(re.findall(r"tile\.ws warpgroups = \[1\]", ir_text)) == 2
    for target in ("sm_90a", "sm_80"):
        ptxas.assemble(tlc.compile(prim, target=target).get_kernel_source(), target, tmp_path)


@T.prim_func
def three_way(X: T.Tensor((3, 128), "float32"), Y: T.Tensor((3, 128), "float32")):
    with T.Kernel(1, threads=384):
        f = T.alloc_fragment((128,), "float32")
        tx = T.get_thread_binding()
        if tx < 128:
            T.copy(X[0, :], f)
            for i in T.Parallel(128):
                f[i] = f[i] + 1
            T.copy(f, Y[0, :])
        elif 128 <= tx < 256:
            T.copy(X[1, :], f)
            for i in T.Parallel(128):
                f[i] = f[i] * 2
            T.copy(f, Y[1, :])
        else:
            T.copy(X[2, :], f)
            for i in T.Parallel(128):
                f[i] = -f[i]
            T.copy(f, Y[2, :])


def test_an_if_elif_else_chain_over_three_warpgroups():
    ir_text = str(three_way.build_module())
    assert [int(g) for g in re.findall(r"tile\.ws warpgroups = \[(\d)\]", ir_text)] == [0, 1, 2]
    x = np.random.default_rng(4).standard_normal((3, 128)).astype(np.float32)
    y = np.zeros_like(x)
    tlc.interpret(three_way, x, y)
    np.testing.assert_allclose(y, np.stack([x[0] + 1, x[1] * 2, -x[2]]))


@T.prim_func
def warp_roles(X: T.Tensor((8, 4, 64), "float32"), S: T.Tensor((8, 4), "float32"),
               Y: T.Tensor((8, 4, 64), "float32")):
    # Three warps: warp 0 sums the squares of a block's rows, warps 1 and 2
    # scale them chunk by chunk, as TileLang's mHC kernel splits its block.
    with T.Kernel(8, threads=96) as b:
        rows = T.alloc_shared((4, 64), "float32")
        chunk = T.alloc_shared((4, 16), "float32")
        T.copy(X[b, 0, 0], rows)  # the whole block
        tx = T.get_thread_binding()
        if tx < 32:
            sq = T.alloc_fragment((4, 64), "float32")
            sums = T.alloc_fragment((4,), "float32")
            T.copy(rows, sq)
            for i, j in T.Parallel(4, 64):
                sq[i, j] = sq[i, j] * sq[i, j]
            T.reduce_sum(sq, sums, dim=1)
            T.copy(sums, S[b, 0])
        else:
            part = T.alloc_fragment((4, 16), "float32")
            for c in T.Pipelined(4, num_stages=2):
                T.copy(X[b, 0, c * 16], chunk)
                T.copy(chunk, part)
                for i, j in T.Parallel(4, 16):
                    part[i, j] = part[i, j] * 2 + 1
                T.copy(part, Y[b, 0, c * 16])


@T.prim_func
def part_of_a_warp(X: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256):
        f = T.alloc_fragment((128,), "float32")
        tx = T.get_thread_binding()
        if tx < 48:
            T.fill(f, 0)  # E:partwarp
            T.copy(f, X)


@T.prim_func
def registers_of_warps(X: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=384):
        f = T.alloc_fragment((128,), "float32")
        tx = T.get_thread_binding()
        if tx < 64:
            T.dec_max_nreg(40)  # E:warpnreg
            T.fill(f, 0)
            T.copy(f, X)


@T.prim_func
def gemm_of_warps(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=192):
        a = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        tx = T.get_thread_binding()
        T.copy(A, a)
        if tx >= 64:  # warps 2 to 5: 128 threads, but not a warpgroup
            T.clear(c)
            T.gemm(a, a, c, transpose_B=True)
            T.copy(c, C)


def test_branches_over_warps_are_bodies_of_warps(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 4, 64)).astype(np.float32)
    s = np.zeros((8, 4), np.float32)
    y = np.zeros((8, 4, 64), np.float32)
    tlc.interpret(warp_roles, x, s, y)
    np.testing.assert_allclose(s, (x * x).sum(axis=2), rtol=1e-5)
    np.testing.assert_allclose(y, x * 2 + 1, rtol=1e-6)
    ir_text = str(warp_roles.build_module())
    assert "tile.ws warps = [0] {" in ir_text and "tile.ws warps = [1, 2] {" in ir_text
    for target in ("sm_90a", "sm_80"):
        ptx = tlc.compile(warp_roles, target=target).get_kernel_source()
        # Each body's threads meet at a named barrier of their own: the
        # pipeline of warps 1-2 at barrier 2 of 64 threads (warp 0's reduction
        # stays in its warp: shuffles, no barrier); the block's before them.
        bars = re.findall(r"bar\.sync\s+([^;]*);", ptx)
        assert set(bars) == {"0", "2, 64"}, (target, bars)
        ptxas.assemble(ptx, target, tmp_path)


def test_a_gemm_of_warps_that_are_no_warpgroup_takes_mma_sync(tmp_path):
    ptx = tlc.compile(gemm_of_warps, target="sm_90a").get_kernel_source()
    assert "mma.sync" in ptx and "wgmma" not in ptx
    ptxas.assemble(ptx, "sm_90a", tmp_path)
    a = np.random.default_rng(4).standard_normal((64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    tlc.interpret(gemm_of_warps, a, c)
    ref = a.astype(np.float32) @ a.astype(np.float32).T
    assert np.abs(c - ref).max() < 1e-2


@pytest.mark.parametrize("prim, marker, at, message", [
    (part_of_a_warp, "partwarp", "T.fill",
     "T.fill/T.clear is work of the whole block, but only some threads reach it here"),
    (registers_of_warps, "warpnreg", "T.dec_max_nreg",
     "changes a warpgroup's registers: this branch runs on part of a warpgroup"),
])
def test_tile_work_on_part_of_a_warp_stays_an_error(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(prim, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, at, message)


@T.prim_func
def async_scores(Q: T.Tensor((64, 64), "float16"), K: T.Tensor((64, 64), "float16"),
                 S: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        q = T.alloc_shared((64, 64), "float16")
        k = T.alloc_shared((64, 64), "float16")
        s = T.alloc_fragment((64, 64), "float32")
        T.copy(Q, q)
        T.copy(K, k)
        T.clear(s)
        T.wgmma_gemm(q, k, s, transpose_B=True)  # E:wgmma
        T.wait_wgmma(0)
        T.copy(s, S)


def test_wgmma_gemm(tmp_path):
    # TileLang's explicit wgmma: issued without a wait (T.wait_wgmma completes it),
    # never the mma.sync fallback.
    kernel = tlc.compile(async_scores, target="sm_90a")
    assert "kind = wgmma" in kernel.get_mlir("optimized")
    ptx = kernel.get_kernel_source()
    assert ptx.count("wgmma.wait_group.sync.aligned") == 1
    ptxas.assemble(ptx, "sm_90a", tmp_path)
    q = np.random.default_rng(5).standard_normal((64, 64)).astype(np.float16)
    kk = np.random.default_rng(6).standard_normal((64, 64)).astype(np.float16)
    s = np.zeros((64, 64), np.float32)
    tlc.interpret(async_scores, q, kk, s)
    np.testing.assert_allclose(s, q.astype(np.float32) @ kk.astype(np.float32).T, rtol=1e-3,
                               atol=1e-3)
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(async_scores, target="sm_80")
    assert_error_at(info.value, THIS, LINES, "wgmma", "T.wgmma_gemm",
                    "is T.wgmma_gemm, which runs on wgmma only, but the target has no wgmma")


def test_producer_consumer_ptx(tmp_path):
    ptx = tlc.compile(producer_consumer.factory(1024, 1024, 1024),
                      target="sm_90a").get_kernel_source()
    # Thread 0 initialises 4 barriers; warpgroup 1's gemm is wgmma on its 128
    # threads; waits are try_wait loops, arrivals fence the async proxy first.
    assert ptx.count("mbarrier.init.shared") == 4
    assert "wgmma.mma_async" in ptx and "mbarrier.try_wait.parity" in ptx
    assert "fence.proxy.async.shared::cta" in ptx and "mbarrier.arrive" in ptx
    # Warpgroup 0's copies before its arrival on `full` are TMA loads completing
    # on that barrier (thread 128 expects their bytes; A and B of each stage).
    assert ptx.count("mbarrier.arrive.expect_tx") == 2
    assert ptx.count("cp.async.bulk.tensor.2d") == 2 * (1 + 2)  # A, B in 2 column blocks
    # No block barrier in the loop: the loads of warpgroup 0 and the gemms of
    # warpgroup 1 are ordered by the program's barriers alone (bar.sync 0 once
    # after each T.alloc_barrier's init); warpgroup 1's staged output copy
    # meets at its named barrier (2) of 128 threads.
    assert len(re.findall(r"bar(?:rier)?\.sync\s+0;", ptx)) == 2
    assert not re.search(r"bar(?:rier)?\.sync\s+1, 128;", ptx)
    assert re.search(r"bar(?:rier)?\.sync\s+2, 128;", ptx)
    ptxas.assemble(ptx, "sm_90a", tmp_path)


def test_producer_copies_stay_the_threads_without_tma():
    ptx = tlc.compile(producer_consumer.factory(1024, 1024, 1024), target="sm_90a",
                      pass_configs={"tl.disable_tma_lower": True}).get_kernel_source()
    assert "cp.async.bulk.tensor" not in ptx and "mbarrier.arrive.expect_tx" not in ptx
    assert re.search(r"bar(?:rier)?\.sync\s+1, 128;", ptx)  # warpgroup 0's own barrier


def test_split_columns_ptx(tmp_path):
    ptx = tlc.compile(split_columns.factory(1024, 1024, 1024),
                      target="sm_90a").get_kernel_source()
    # Each warpgroup meets its own named barrier (1 and 2) between its copy of
    # B and its gemm; the block meets before each A copy and the bodies.
    for named in (1, 2):
        assert re.search(rf"bar(?:rier)?\.sync\s+{named}, 128;", ptx)
    assert ptx.count("wgmma.mma_async") >= 2
    ptxas.assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize("program", [producer_consumer, split_columns])
def test_sm80(program, tmp_path):
    ptx = tlc.compile(program.factory(512, 512, 512), target="sm_80").get_kernel_source()
    assert "mma.sync" in ptx
    ptxas.assemble(ptx, "sm_80", tmp_path)


# -- mistakes, at the user's line ----------------------------------------------------


@T.prim_func
def ws_in_parallel(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as _:
        for i in T.Parallel(256):
            with T.ws(0):  # E:parallel
                X[i] = 0.0


@T.prim_func
def ws_nested(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as _:
        with T.ws(0, 1):
            with T.ws(1):  # E:nested
                T.print(1)


@T.prim_func
def ws_past_block(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as _:
        with T.ws(2):  # E:past
            T.print(1)


@T.prim_func
def ws_partial_warpgroup(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=192) as _:
        with T.ws(0):  # E:partial
            T.print(1)


@T.prim_func
def ws_gap(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=384) as _:
        with T.ws(0, 2):  # E:gap
            T.print(1)


@T.prim_func
def ws_in_stages(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as _:
        for k in T.Pipelined(4, num_stages=2):  # E:stages
            with T.ws(1):
                T.print(k)


@T.prim_func
def stage_parity(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        for k in T.Pipelined(4, num_stages=2):
            with T.ws(0):
                T.copy(A, s)
                T.barrier_arrive(full)
            with T.ws(1):
                T.barrier_wait(full, (k // 2) % 2)  # E:stageparity
                T.copy(s, C)


@T.prim_func
def staged_after(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        for k in T.Pipelined(4, num_stages=2):
            with T.ws(0):
                T.copy(A, s)
                T.barrier_arrive(full)
            with T.ws(1):
                T.barrier_wait(full, k % 2)
                T.copy(s, C)
        with T.ws(1):
            T.copy(s, C)  # E:stagedafter


@T.prim_func
def staged_before(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        T.clear(s)
        for k in T.Pipelined(4, num_stages=3):  # E:stagedbefore
            with T.ws(0):
                T.copy(A, s)
                T.barrier_arrive(full)
            with T.ws(1):
                T.barrier_wait(full, k % 2)
                T.copy(s, C)


@T.macro
def producer_body(A, s):
    with T.ws(0):
        T.copy(A, s)


@T.prim_func
def macro_in_stages(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        for k in T.Pipelined(4, num_stages=2):
            producer_body(A, s)  # E:macrostages
            with T.ws(1):
                T.copy(s, C)


@T.macro
def wait_for(bar, k):
    T.barrier_wait(bar, k % 2)  # E:macrowait


@T.prim_func
def wait_in_a_macro(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        for k in T.Pipelined(4, num_stages=2):
            with T.ws(0):
                T.copy(A, s)
                T.barrier_arrive(full)
            with T.ws(1):
                wait_for(full, k)
                T.copy(s, C)


@T.prim_func
def staged_scheduled(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        for k in T.Pipelined(4, num_stages=2, order=[0, 1], stage=[0, 1]):  # E:stagesched
            with T.ws(0):
                T.copy(A, s)
            with T.ws(1):
                T.copy(s, C)


@T.prim_func
def ws_binds(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as _:
        with T.ws(1) as w:  # E:binds
            T.print(1)


@T.prim_func
def fragment_of_two(X: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=256) as _:
        acc = T.alloc_fragment((128, 64), "float32")  # E:two
        with T.ws(0):
            T.clear(acc)
        with T.ws(1):
            T.copy(acc, X)


@T.prim_func
def barrier_in_loop(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as _:
        for k in T.serial(2):
            bar = T.alloc_barrier(128)  # E:inloop


@T.prim_func
def barrier_zero(X: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=256) as _:
        bar = T.alloc_barrier([128, 0])  # E:zero


@T.prim_func
def barrier_copied(X: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as _:
        bar = T.alloc_barrier(128)
        T.copy(bar, X)  # E:copied


@T.prim_func
def barrier_read(X: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as _:
        bar = T.alloc_barrier(128)
        if bar[0] > 0:  # E:read
            T.print(1)


@T.prim_func
def barrier_list_unindexed(X: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as _:
        bars = T.alloc_barrier([128, 128])
        T.barrier_arrive(bars)  # E:unindexed


@T.prim_func
def barrier_out_of_range(X: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as _:
        bars = T.alloc_barrier([128, 128])
        T.barrier_arrive(bars[2])  # E:range


@T.prim_func
def wait_on_a_buffer(X: T.Tensor((1,), "float32")):
    with T.Kernel(1, threads=128) as _:
        s = T.alloc_shared((1,), "int64")
        T.barrier_wait(s, 0)  # E:notbarrier


@T.prim_func
def wide_rows(A: T.Tensor((64, 256), "float16"), B: T.Tensor((64, 256), "float16")):
    # 512-byte rows: the TMA load fills the buffer as four 128-byte column
    # blocks (its layout), which the consumer's element reads follow.
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 256), "float16")
        bars = T.alloc_barrier([128])
        with T.ws(1):
            T.tma_copy(A, s, barrier=bars[0])
            T.mbarrier_arrive(bars[0])
        with T.ws(0):
            T.mbarrier_wait_parity(bars[0], 0)
            for i, j in T.Parallel(64, 256):
                B[i, j] = s[i, j] + 1.0


def test_tma_copy_of_rows_wider_than_128_bytes(tmp_path):
    a = np.random.default_rng(0).standard_normal((64, 256)).astype(np.float16)
    b = np.zeros_like(a)
    tlc.interpret(wide_rows, a, b)
    np.testing.assert_array_equal(b, a + np.float16(1))
    optimized = tlc.compiler.compile_module(wide_rows.build_module(), "sm_90a",
                                            keep_ir=True).stages["optimized"]
    assert "column_block = 64" in optimized
    ptx = tlc.compile(wide_rows, target="sm_90a").get_kernel_source()
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == 4
    ptxas.assemble(ptx, "sm_90a", tmp_path)


@T.prim_func
def whole_block_load(A: T.Tensor((64, 128), "float16"), B: T.Tensor((64, 128), "float16")):
    # The kernel's own code (every thread) issues the load and arrives, as
    # TileLang's sparse MLA loads its queries before the warpgroups split:
    # the block's first thread expects the bytes and issues it.
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 128), "float16")
        bar = T.alloc_barrier(256)
        T.tma_copy(A, s, barrier=bar)
        T.barrier_arrive(bar)
        with T.ws(0):
            T.barrier_wait(bar, 0)
            for i, j in T.Parallel(64, 128):
                B[i, j] = s[i, j] * 2.0


@T.prim_func
def load_into_column_slices(Q: T.Tensor((64, 192), "float16"), B: T.Tensor((64, 192), "float16")):
    # q is named by its column slices (one buffer each) and loaded whole: one
    # TMA load a slice, all completing on the barrier.
    with T.Kernel(1, threads=256) as _:
        q = T.alloc_shared((64, 192), "float16")
        bar = T.alloc_barrier(256)
        T.tma_copy(Q, q, barrier=bar)
        T.barrier_arrive(bar)
        T.barrier_wait(bar, 0)
        T.copy(q[:, :128], B[:, :128])
        T.copy(q[:, 128:], B[:, 128:])


def test_the_kernels_own_code_issues_a_tma_load(tmp_path):
    a = np.random.default_rng(1).standard_normal((64, 128)).astype(np.float16)
    b = np.zeros_like(a)
    tlc.interpret(whole_block_load, a, b)
    np.testing.assert_array_equal(b, a * np.float16(2))
    ptx = tlc.compile(whole_block_load, target="sm_90a").get_kernel_source()
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == 2  # 2 column blocks
    assert ptx.count("mbarrier.arrive.expect_tx") == 1
    # one thread expects the bytes (thread 0: the block's first), the others arrive
    assert re.search(r"setp.ne.b32\s+(%p\d+), %r\d+, 0;\s+bar.sync\s+0;\s+@\1 bra", ptx)
    assert ptx.count("mbarrier.arrive.shared.b64") == 1
    ptxas.assemble(ptx, "sm_90a", tmp_path)


def test_a_whole_tma_load_into_a_buffer_split_by_column_slices(tmp_path):
    a = np.random.default_rng(2).standard_normal((64, 192)).astype(np.float16)
    b = np.zeros_like(a)
    tlc.interpret(load_into_column_slices, a, b)
    np.testing.assert_array_equal(b, a)
    ptx = tlc.compile(load_into_column_slices, target="sm_90a").get_kernel_source()
    # [:, :128] in two 128-byte column blocks, [:, 128:] in one
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == 3
    assert re.search(r"mov.b32\s+(%r\d+), 24576;\s+"  # all 64 x 192 x 2 bytes
                     r"mbarrier.arrive.expect_tx.shared.b64\s+%rd\d+, \[[^]]+\], \1;", ptx)
    ptxas.assemble(ptx, "sm_90a", tmp_path)


@T.prim_func
def tma_copy_outside_ws(A: T.Tensor((128, 64), "float16")):
    with T.Kernel(2, threads=256) as bx:
        s = T.alloc_shared((128, 64), "float16")
        bar = T.alloc_barrier(256)
        if bx == 0:
            T.tma_copy(A, s, barrier=bar)  # E:tmaoutside
            T.barrier_arrive(bar)


@T.prim_func
def tma_copy_never_arrived_in_kernel(A: T.Tensor((128, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((128, 64), "float16")
        bar = T.alloc_barrier(256)
        T.tma_copy(A, s, barrier=bar)  # E:tmakernelnoarrive


@T.prim_func
def tma_copy_no_barrier(A: T.Tensor((128, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((128, 64), "float16")
        with T.ws(1):
            T.tma_copy(A, s)  # E:tmanobar


@T.prim_func
def tma_copy_never_arrived(A: T.Tensor((128, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((128, 64), "float16")
        bar = T.alloc_barrier(128)
        with T.ws(1):
            T.tma_copy(A, s, barrier=bar)  # E:tmanoarrive


@T.prim_func
def tma_copy_other_barrier(A: T.Tensor((128, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((128, 64), "float16")
        bars = T.alloc_barrier([128, 128])
        with T.ws(1):
            T.tma_copy(A, s, barrier=bars[0])  # E:tmaother
            T.barrier_arrive(bars[1])


@T.prim_func
def tma_copy_converting(A: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((128, 64), "float16")
        bar = T.alloc_barrier(128)
        with T.ws(1):
            T.tma_copy(A, s, barrier=bar)  # E:tmaconvert
            T.barrier_arrive(bar)


            T.barrier_arrive(bar)


@T.prim_func
def max_nreg_outside_ws(A: T.Tensor((128,), "float16")):
    with T.Kernel(1, threads=256) as _:
        T.set_max_nreg(240, 1)  # E:nregoutside


@T.prim_func
def max_nreg_odd(A: T.Tensor((128,), "float16")):
    with T.Kernel(1, threads=256) as _:
        with T.ws(0):
            T.inc_max_nreg(250)  # E:nregodd


@T.prim_func
def max_nreg_direction(A: T.Tensor((128,), "float16")):
    with T.Kernel(1, threads=256) as _:
        with T.ws(0):
            T.set_max_nreg(240, 2)  # E:nregdir


@T.prim_func
def max_nreg_two_warpgroups(A: T.Tensor((128,), "float16")):
    with T.Kernel(1, threads=256) as _:
        with T.ws(1):
            T.dec_max_nreg(40)  # E:nregsmall


@T.prim_func
def max_nreg_not_a_raise(A: T.Tensor((128,), "float16")):
    with T.Kernel(1, threads=384) as _:
        with T.ws(0):
            T.inc_max_nreg(160)  # E:nregraise


@T.prim_func
def max_nreg_over_budget(A: T.Tensor((128,), "float16")):
    with T.Kernel(1, threads=384) as _:
        with T.ws(2):
            T.dec_max_nreg(56)
        with T.ws(0):
            T.inc_max_nreg(240)
        with T.ws(1):
            T.inc_max_nreg(216)  # E:nregsum


@pytest.mark.parametrize("prim, marker, at, message", [
    (max_nreg_outside_ws, "nregoutside", "T.set_max_nreg", "use it in a T.ws body"),
    (max_nreg_over_budget, "nregsum", "T.inc_max_nreg",
     "the warpgroups' registers a thread (240 + 216 + 56 = 512) exceed the 504 a 384-thread "
     "block has (3 x 168): a raise would wait forever"),
    (max_nreg_two_warpgroups, "nregsmall", "T.dec_max_nreg",
     "needs a block of at least 384 threads (three warpgroups): a thread of a 256-thread "
     "block may use 255 registers from the start"),
    (max_nreg_not_a_raise, "nregraise", "160",
     "a thread of this 384-thread block starts with 168 registers; raising them to 160 is "
     "not a raise"),
    (max_nreg_odd, "nregodd", "250", "a multiple of 8 in [24, 256] registers, got 250"),
    (max_nreg_direction, "nregdir", "2)", "is_inc is 1 (raise) or 0 (lower), got 2"),
    (tma_copy_outside_ws, "tmaoutside", "T.tma_copy",
     "use it in a T.ws body or in code every thread of the block runs (not in a branch"),
    (tma_copy_never_arrived_in_kernel, "tmakernelnoarrive", "T.tma_copy",
     "T.tma_copy's barrier gets no T.barrier_arrive after it in the code that issues it"),
    (tma_copy_no_barrier, "tmanobar", "T.tma_copy", "T.tma_copy loads need barrier="),
    (tma_copy_never_arrived, "tmanoarrive", "T.tma_copy",
     "T.tma_copy's barrier gets no T.barrier_arrive after it in the code that issues it"),
    (tma_copy_other_barrier, "tmaother", "T.tma_copy",
     "T.tma_copy's barrier is not the one the next arrival after it"),
    (tma_copy_converting, "tmaconvert", "T.tma_copy",
     "is a T.tma_copy that cannot be a TMA load"),
    (ws_in_parallel, "parallel", "T.ws", "T.ws cannot be inside T.Parallel"),
    (ws_nested, "nested", "T.ws", "T.ws cannot be nested in another T.ws"),
    (ws_past_block, "past", "2", "warpgroup 2 is not in the block: its 256 threads make 2"),
    (ws_partial_warpgroup, "partial", "T.ws", "threads a multiple of 128), the kernel has 192"),
    (ws_gap, "gap", "T.ws", "ascending, contiguous warpgroups, got (0, 2)"),
    (ws_in_stages, "stages", "T.Pipelined",
     "num_stages=2 has nothing to stage in this loop of T.ws bodies"),
    (stage_parity, "stageparity", "(k // 2)",
     "takes a parity that flips every iteration of the loop (`k % 2`, `(k + 1) % 2`)"),
    (staged_after, "stagedafter", "s,",
     "'s' is a shared buffer staged by the T.ws bodies of the T.Pipelined loop at line"),
    (staged_before, "stagedbefore", "T.Pipelined",
     "'s' is used before this loop, which gives it one copy per stage (num_stages=3)"),
    (macro_in_stages, "macrostages", "producer_body",
     "'producer_body' holds a T.ws body, and the T.Pipelined loop at line"),
    (wait_in_a_macro, "macrowait", "k % 2",
     "must be in the loop's own code, where tlc rewrites its parity from the loop's index "
     "'k' (not in a T.macro)"),
    (staged_scheduled, "stagesched", "T.Pipelined", "a loop of T.ws bodies takes num_stages"),
    (ws_binds, "binds", "w:", "`with T.ws(...)` binds no name"),
    (fragment_of_two, "two", "T.alloc_fragment",
     "is used by warpgroup 0 and by warpgroup 1; a fragment lives on the threads of one T.ws"),
    (barrier_in_loop, "inloop", "T.alloc_barrier", "must be directly in the kernel's body"),
    (barrier_zero, "zero", "[128, 0]", "an arrival count must be in [1, 1048575], got 0"),
    (barrier_copied, "copied", "bar", "'bar' holds mbarriers"),
    (barrier_read, "read", "bar[0]", "'bar' holds mbarriers: use them with T.barrier_wait"),
    (barrier_list_unindexed, "unindexed", "bars)", "'bars' holds 2 barriers: name one"),
    (barrier_out_of_range, "range", "2]", "barrier 2 is out of range: 'bars' has 2"),
    (wait_on_a_buffer, "notbarrier", "s,", "takes a barrier of T.alloc_barrier"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 12 and " " not in v else None)
def test_mistakes_point_at_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(prim, target="sm_90a")
    assert_error_at(info.value, THIS, LINES, marker, at, message)


@T.prim_func
def consumer_first(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        with T.ws(1):
            T.barrier_wait(full, 0)  # E:hang
            T.copy(s, C)
        with T.ws(0):
            T.copy(A, s)
            T.barrier_arrive(full)


def test_interpreter_runs_consecutive_bodies_concurrently():
    """Warpgroup 1 waits first; as on the GPU, warpgroup 0's arrival releases it:
    the interpreter runs the two bodies as concurrent tasks."""
    a = np.arange(64 * 64, dtype=np.float16).reshape(64, 64)
    c = np.zeros((64, 64), np.float16)
    tlc.interpret(consumer_first, a, c)
    assert (c == a).all()
    assert "mbarrier.try_wait.parity" in tlc.compile(consumer_first,
                                                     target="sm_90a").get_kernel_source()


@T.prim_func
def both_wait(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((64, 64), "float16")
        full = T.alloc_barrier(128)
        empty = T.alloc_barrier(128)
        with T.ws(1):
            T.barrier_wait(full, 0)  # E:stuck
            T.copy(s, C)
            T.barrier_arrive(empty)
        with T.ws(0):
            T.barrier_wait(empty, 0)
            T.copy(A, s)
            T.barrier_arrive(full)


@T.prim_func
def lone_wait(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=256) as _:
        full = T.alloc_barrier(128)
        with T.ws(1):
            T.barrier_wait(full, 0)  # E:lone


def test_interpreter_reports_a_wait_nothing_can_satisfy():
    """Each body waits for the other's arrival (the GPU would hang), or a body
    waits with no other beside it: the error names the wait."""
    a = np.ones((64, 64), np.float16)
    with pytest.raises(tlc.interpreter.InterpreterError) as info:
        tlc.interpret(both_wait, a, np.zeros((64, 64), np.float16))
    assert info.value.location.line == line_of(LINES, "stuck")
    assert ("waits for parity 0 of barrier 0 (phase 0, 128 of its 128 arrivals missing) "
            "while every other T.ws body beside it has finished or waits too") in str(info.value)
    with pytest.raises(tlc.interpreter.InterpreterError) as info:
        tlc.interpret(lone_wait, a)
    assert info.value.location.line == line_of(LINES, "lone")
    assert "no T.ws body runs beside this code to arrive" in str(info.value)


@T.prim_func
def max_nreg_on_sm80(A: T.Tensor((128,), "float16")):
    with T.Kernel(1, threads=384) as _:
        with T.ws(1):
            T.dec_max_nreg(40)  # E:nregsm80


def test_set_max_nreg_needs_sm90a():
    with pytest.raises(tlc.CompilationError) as info:
        tlc.compile(max_nreg_on_sm80, target="sm_80")
    assert_error_at(info.value, THIS, LINES, "nregsm80", "T.dec_max_nreg",
                    "needs setmaxnreg (sm_90a); the target has none")
    # The interpreter has nothing to do for it.
    tlc.interpret(max_nreg_on_sm80, np.zeros(128, np.float16))


@T.prim_func
def same_threads_in_order(A: T.Tensor((128,), "float32"), C: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=256) as _:
        s = T.alloc_shared((128,), "float32")
        t = T.alloc_shared((128,), "float32")
        full = T.alloc_barrier(128)
        with T.ws(0):
            T.copy(A, s)
        with T.ws(1):
            T.barrier_wait(full, 0)
            T.copy(t, C)
        with T.ws(0):  # after warpgroup 0's first body, beside warpgroup 1's
            for i in T.Parallel(128):
                t[i] = s[i] * 2
            T.barrier_arrive(full)


def test_interpreter_keeps_one_warpgroups_bodies_in_order():
    """Warpgroup 0's two bodies run one after the other (the same threads),
    beside warpgroup 1's, whose wait the second one releases."""
    a = np.arange(128, dtype=np.float32)
    c = np.zeros(128, np.float32)
    tlc.interpret(same_threads_in_order, a, c)
    assert (c == 2 * a).all()
