"""Stream-K in sm_90a's persistent warp-specialized GEMM (no GPU needed: the
compiled artifact and PTX are checked; bench/build_gemm_streamk.py's kernels
are checked and timed on the H200)."""

import os
import sys

import pytest

import ptxas
import tlc
import tlc.language as T

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import gemm  # noqa: E402

WIDE = dict(block_M=128, block_N=256, block_K=64, threads=256, num_stages=3, panel=8)


def compile_gemm(m, n, k, off=False, **config):
    configs = {"tlc.disable_stream_k": True} if off else None
    return tlc.jit(out_idx=[-1], target="sm_90a", pass_configs=configs)(
        gemm.matmul.factory)(m, n, k, **(config or WIDE))


def test_k_heavy_gemm_is_stream_k():
    # 512 x 512 x 16384 in 128 x 256 tiles: 8 tiles of 256 K iterations for 132 SMs.
    kernel = compile_gemm(512, 512, 16384)
    art = kernel.artifact
    # One kernel on one block per SM, with the partial tiles (a row of 128 x 256
    # fp32 per SM) and the flags the launcher zeroes as its scratch.
    assert art["version"] == 2 and len(art["kernels"]) == 1
    assert art["kernels"][0]["grid"] == ["__sm_count__", "1", "1"]
    assert art["scratch"] == [
        {"name": "streamk_partials0", "dtype": "float32", "shape": ["__sm_count__", 32768]},
        {"name": "streamk_flags", "dtype": "int32", "shape": ["__sm_count__"],
         "zero_fill": True}]
    assert [p["name"] for p in art["params"]] == ["A", "B", "C"]
    optimized = kernel.get_mlir("optimized")
    for op in ("tile.store_partials", "tile.add_partials", "tile.semaphore_signal",
               "tile.semaphore_wait", "tile.stream_k", "tile.reduce_partials"):
        assert op in optimized
    # Aligned shares reduce-scatter: the flags raised to level 2 once a slice is summed.
    assert "level = 2" in optimized
    ptx = kernel.get_kernel_source()
    # The flag: set by an exchange after a GPU-scope fence, read by atomics then fenced.
    assert "atom.global.exch.b32" in ptx and "membar.gl" in ptx
    assert "atom.global.or.b32" in ptx or "atom.global.add.u32" in ptx
    # The schedule's arithmetic is 32-bit (no 64-bit division sequences).
    assert "div.s64" not in ptx and "rem.s64" not in ptx
    # The epilogue still leaves by TMA stores.
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx


@pytest.mark.parametrize("off,shape", [(True, (512, 512, 16384)), (False, (1024, 1024, 1024)),
                                       (False, (4096, 4096, 4096)), (False, (128, 8192, 8192))])
def test_persistent_kernel_without_stream_k(off, shape):
    # Turned off, or known counts where sharing would not pay on 132 SMs: 1024^3
    # has 32 tiles of 16 iterations (a share of 8 plus the fix-up is longer),
    # 4096^3 512 tiles of 64 (3 waves and a share of 56 of the last); M = 128
    # is one row of tiles, a memory-bound decode shape.
    kernel = compile_gemm(*shape, off=off)
    art = kernel.artifact
    assert art["version"] == 1 and art["grid"][0].startswith("min(")
    assert "__sm_count__" in art["grid"][0] and "setmaxnreg" in kernel.get_kernel_source()
    assert "tile.semaphore" not in kernel.get_mlir("optimized")


@pytest.mark.parametrize("shape,config,tiles", [
    ((256, 1024, 32768), dict(block_M=256, block_N=128, block_K=64, threads=256,
                              num_stages=3, panel=8), 8),
    ((128, 2048, 16384), dict(block_M=128, block_N=128, block_K=64, threads=128,
                              num_stages=4), 16),
    ((4096, 128, 8192), dict(block_M=256, block_N=128, block_K=64, threads=256,
                             num_stages=3), 16),
])
def test_k_heavy_single_row_of_tiles_is_stream_k(shape, config, tiles, tmp_path):
    # M (or N) fits one block row: 8 to 16 tiles, at most 132 / 8, would keep at
    # most one SM in eight busy, so their K iterations are shared.
    kernel = compile_gemm(*shape, **config)
    assert kernel.artifact["version"] == 2, tiles
    assert kernel.artifact["kernels"][0]["grid"][0] == "__sm_count__"
    assert "tile.stream_k" in kernel.get_mlir("optimized")
    ptxas.assemble(kernel.get_kernel_source(), "sm_90a", tmp_path)


@pytest.mark.parametrize("shape,config", [
    ((128, 8192, 8192), WIDE),  # 32 tiles: a decode shape, bound by memory
    ((64, 8192, 8192), dict(block_M=64, block_N=128, block_K=64, threads=128, num_stages=8)),
    ((128, 4352, 16384), dict(block_M=128, block_N=256, block_K=64, threads=256,
                              num_stages=3)),  # 17 tiles: more than 132 / 8
])
def test_single_row_of_many_tiles_stays_data_parallel(shape, config):
    kernel = compile_gemm(*shape, **config)
    assert kernel.artifact["version"] == 1
    assert "tile.semaphore" not in kernel.get_mlir("optimized")


@pytest.mark.parametrize("config", [
    WIDE,
    dict(block_M=128, block_N=128, block_K=64, threads=128, num_stages=4, panel=8),
    dict(block_M=64, block_N=128, block_K=64, threads=128, num_stages=8),
])
def test_stream_k_kernels_do_not_spill(config, tmp_path):
    kernel = compile_gemm(256, 1024, 32768, **config)
    assert kernel.artifact["version"] == 2
    ptxas.assemble(kernel.get_kernel_source(), "sm_90a", tmp_path)


def gemm_from(start: float):
    """A GEMM with M dynamic (its tile count known only at the launch) whose
    accumulator starts at `start`."""
    M = T.dynamic("M")

    @T.prim_func
    def prog(A: T.Tensor((M, 1024), "float16"), B: T.Tensor((1024, 1024), "float16"),
             C: T.Tensor((M, 1024), "float32")):
        with T.Kernel(8, T.ceildiv(M, 128), threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            acc = T.alloc_fragment((128, 128), "float32")
            T.fill(acc, start)
            for k in T.Pipelined(16, num_stages=3):
                T.copy(A[by * 128, k * 64], A_s)
                T.copy(B[k * 64, bx * 128], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * 128, bx * 128])

    return tlc.compile(prog, out_idx=[2], target="sm_90a")


def test_dynamic_size_leaves_the_choice_to_the_kernel():
    # The kernel is compiled with stream-K; its schedule decides per launch.
    # The owner adds the partials itself: the reduce-scatter fix-up is built
    # only for counts known to use it (beside the serial one it slowed
    # data-parallel tiles, bench/results/2026-12-04/session21).
    kernel = gemm_from(0.0)
    assert kernel.artifact["version"] == 2
    assert kernel.artifact["kernels"][0]["grid"][0] == "__sm_count__"
    optimized = kernel.get_mlir("optimized")
    assert "tile.add_partials" in optimized and "tile.reduce_partials" not in optimized


@pytest.mark.parametrize("shape,scatters", [
    ((256, 1024, 32768), True),    # 16 tiles of 512 iterations: 8 shares each
    ((512, 512, 16384), True),     # 16 tiles of 256: 8 shares each
    ((1000, 1000, 8000), False),   # 64 tiles of 125: 2 shares each, serial adds
    ((8192, 8192, 8192), False),   # 15 full waves, the rest spread: serial adds
])
def test_reduce_scatter_only_where_known_counts_use_it(shape, scatters):
    kernel = compile_gemm(*shape, block_M=128, block_N=128, block_K=64, threads=128,
                          num_stages=4, panel=8) if shape[0] < 8192 else compile_gemm(*shape)
    optimized = kernel.get_mlir("optimized")
    assert "tile.stream_k" in optimized and "tile.add_partials" in optimized
    assert ("tile.reduce_partials" in optimized) == scatters


def test_accumulator_not_started_at_zero_is_not_stream_k():
    # An accumulator filled with ones before the loop cannot be summed from
    # pieces of its K range (each would add the ones again).
    kernel = gemm_from(1.0)
    optimized = kernel.get_mlir("optimized")
    assert "tile.persistent" in optimized and "tile.stream_k" not in optimized
    assert kernel.artifact["version"] == 1
