"""Epilogues staged through shared memory leave by TMA stores on sm_90a
(tile-select-tma-stores), with the synchronisation tile-insert-barriers adds."""

import os
import sys

import numpy as np
import pytest

import ptxas
import tlc
import tlc.language as T

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import gemm  # noqa: E402

STORE = "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"


def staged(M, N, K, **kw):
    return gemm.matmul.factory(M, N, K, 128, 256, 64, 256, 3, c_shared=True, **kw)


def test_staged_epilogue_is_a_tma_store(tmp_path):
    kernel = tlc.compile(staged(1000, 1000, 520, panel=8), out_idx=[2], target="sm_90a")
    optimized = kernel.get_mlir("optimized")
    # The shared tile: 64-column blocks, TMA's 128-byte swizzle; the map's box one block.
    assert ("layout = #tile.shared<column_block = 64, swizzle = <bits = 3, base = 4, "
            "shift = 3>>") in optimized
    assert "tile.tma_store" in optimized and "tile.copy %4" not in optimized
    ptx = kernel.get_kernel_source()
    assert ptx.count(STORE) == 4  # 256 columns, 64 a box
    assert ptx.count("cp.async.bulk.commit_group") == 1
    # The persistent kernel waits for a tile's store before the next tile is staged, and
    # before it exits; the threads' writes are fenced before the store.
    assert ptx.count("cp.async.bulk.wait_group.read") == 2
    assert "fence.proxy.async.shared::cta" in ptx
    art = kernel.artifact
    assert {"param": "C", "box": [128, 64], "swizzle": 128, "fill": "zero"} in art["tensor_maps"]
    assert [p["access"] for p in art["params"]] == ["read", "read", "write"]
    ptxas.assemble(ptx, "sm_90a", tmp_path)


@pytest.mark.parametrize("how", ["none", "sm_80", "disable_tma_lower", "disable_tma",
                                 "odd_stride"])
def test_stays_a_copy(how, tmp_path):
    # A loop of tiles each staged and stored: a TMA store ("none"), unless ...
    target, configs, n = "sm_90a", None, 1000
    if how == "sm_80":
        target = "sm_80"
    elif how == "disable_tma_lower":
        configs = {"tl.disable_tma_lower": True}
    elif how == "odd_stride":
        n = 1004  # 2008-byte rows of C: not a multiple of 16 bytes

    @T.prim_func
    def epilogue(A: T.Tensor((256, n), "float16"), C: T.Tensor((256, n), "float16")):
        with T.Kernel(T.ceildiv(n, 64), threads=128) as bx:
            s = T.alloc_shared((128, 64), "float16")
            for r in T.serial(2):
                T.copy(A[r * 128, bx * 64], s)
                T.copy(s, C[r * 128, bx * 64], disable_tma=how == "disable_tma")

    kernel = tlc.compile(epilogue, target=target, pass_configs=configs)
    tma = how == "none"
    assert ("tile.tma_store" in kernel.get_mlir("optimized")) == tma
    assert ("global.shared::cta" in kernel.get_kernel_source()) == tma
    if tma:
        ptxas.assemble(kernel.get_kernel_source(), "sm_90a", tmp_path)


def test_shared_copy_program_interprets_the_same():
    # The program is the same computation whichever way the tile leaves.
    rng = np.random.default_rng(5)
    a = rng.standard_normal((256, 192)).astype(np.float16)
    b = rng.standard_normal((192, 256)).astype(np.float16)
    c = np.full((256, 256), np.nan, np.float16)
    tlc.interpret(gemm.matmul.factory(256, 256, 192, 128, 128, 64, 256, 3, c_shared=True),
                  a, b, c)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ b.astype(np.float32),
                               rtol=2e-2, atol=0.1)


def test_a_store_ending_the_kernel_stays_the_threads():
    # MLA decode (not persistent) stages its output in a shared tile whose store ends the
    # kernel: the threads store it, the block does not wait for a TMA unit's read to exit.
    import mla_decode

    kernel = tlc.compile(mla_decode.mla_decode.factory(8, 128, T.dynamic("pages"), 16),
                         out_idx=[4], target="sm_90a")
    assert "tile.tma_store" not in kernel.get_mlir("optimized")
    assert "global.shared::cta" not in kernel.get_kernel_source()
    assert "cp.async.bulk.tensor" in kernel.get_kernel_source()  # its loads are TMA's


@pytest.mark.parametrize("stages,tma", [(3, True), (4, False)])
def test_accumulator_copied_straight_out(stages, tma, tmp_path):
    # examples/gemm.py's own epilogue, T.copy(C_local, C[...]): the compiler adds the
    # shared tile for the TMA store when the budget has room (3 stages of 128x256x64:
    # 144 KiB + 64 KiB), and leaves the threads' store when it has not (4 stages).
    kernel = tlc.compile(gemm.matmul.factory(4096, 4096, 4096, 128, 256, 64, 256, stages,
                                             panel=8), out_idx=[2], target="sm_90a")
    optimized = kernel.get_mlir("optimized")
    assert ("tile.tma_store" in optimized) == tma
    assert (kernel.get_kernel_source().count(STORE) == 4) == tma
    assert kernel.artifact["shared_bytes"] <= 232448
    ptxas.assemble(kernel.get_kernel_source(), "sm_90a", tmp_path)
