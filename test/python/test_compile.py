"""The compiler from Python: tile IR -> PTX + metadata, errors at the user's line."""

import json
from pathlib import Path
import re
import subprocess
import sys

import numpy as np
import pytest

import ptxas

import tlc
from tlc import compiler, ir
from tlc.compiler import pipeline

VADD_BLOCK_LOADS = 16  # 2 inputs x (32x128 f32 / 128 threads / 4 per vector)


def ptxas_ok(ptx: str, tmp_path) -> None:
    ptxas.assemble(ptx, "sm_90a", tmp_path)


def test_vadd_mlir_to_ptx(repo, tmp_path):
    compiled = compiler.compile_text((repo / "examples/vadd.mlir").read_text())
    ptx = compiled.ptx["vadd"]
    assert ".target sm_90a" in ptx
    assert ".entry vadd(" in ptx
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == VADD_BLOCK_LOADS
    assert len(re.findall(r"st\.global\.v4\.b32", ptx)) == VADD_BLOCK_LOADS // 2
    assert ".local" not in ptx  # fragments live in registers
    ptxas_ok(ptx, tmp_path)


def test_vadd_metadata(repo):
    art = compiler.compile_text((repo / "examples/vadd.mlir").read_text()).artifact()
    assert art["grid"] == ["ceildiv(N, 128)", "ceildiv(M, 32)", "1"]
    assert art["threads"] == [128, 1, 1]
    assert art["shared_bytes"] == 0
    assert [(p["name"], p["shape"], p["access"]) for p in art["params"]] == [
        ("A", ["M", "N"], "read"), ("B", ["M", "N"], "read"), ("C", ["M", "N"], "write")]


def test_builders_to_launchable_kernel(repo, tmp_path):
    sys.path.insert(0, str(repo / "examples"))
    try:
        import elementwise
    finally:
        sys.path.pop(0)
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.load_all_available_dialects()
        for build in (elementwise.build_vadd, elementwise.build_scale_bias):
            for dtype in ("float32", "float16"):
                kernel = tlc.compile(build(dtype))
                assert list(kernel.kernel.grid_exprs[:2]) == ["ceildiv(N, 128)", "ceildiv(M, 32)"]
                ptxas_ok(kernel.get_kernel_source(), tmp_path)


SHARED_OVER_BUDGET = """
func.func @big() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<256x512xf16, #gpu.address_space<workgroup>>
  }
  return
}
"""


def test_shared_memory_budget_names_numbers_and_line():
    with pytest.raises(tlc.CompilationError) as e:
        compiler.compile_text(SHARED_OVER_BUDGET, filename="big.mlir")
    msg = str(e.value)
    assert "big.mlir:4:3: error: the kernel needs 262144 bytes of shared memory but the " \
           "target allows 232448 per block" in msg
    assert "big.mlir:5:10: note: 262144 bytes for this" in msg
    # sm_80 allows less.
    with pytest.raises(tlc.CompilationError, match="allows 166912 per block"):
        compiler.compile_text(SHARED_OVER_BUDGET.replace("256x512", "256x400"), "sm_80")


def test_verifier_error_points_at_line(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text(
        "func.func @f() {\n"
        "  %c1 = arith.constant 1 : index\n"
        "  tile.kernel blocks(%bx) in (%c1) threads = 2048 {\n"
        "  }\n"
        "  return\n"
        "}\n")
    with pytest.raises(tlc.CompilationError) as e:
        compiler.compile_text(src.read_text(), filename=str(src))
    assert e.value.location.line == 3 and e.value.location.col == 3
    text = str(e.value)
    assert "threads must be in [1, 1024], got 2048" in text
    assert "tile.kernel blocks(%bx)" in text and "^" in text  # the source line and a caret
    assert "see current operation" not in text  # no IR dumps for users


def test_unknown_target():
    with pytest.raises(tlc.CompilationError, match="unknown target 'sm_12'"):
        compiler.get_target("sm_12")


def test_targets_come_from_the_compiler():
    # One table (C++'s #tile.target), read through the native module.
    assert compiler.TARGETS == ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a")


def test_module_carries_its_target(repo):
    text = (repo / "examples" / "vadd.mlir").read_text()
    compiled = compiler.compile_text(text, "sm_80", stop_after="optimized", keep_ir=True)
    assert 'tile.target = #tile.target<"sm_80">' in compiled.stages["optimized"]
    # A module that names its target compiles for it when none is asked for...
    tagged = 'module attributes {tile.target = #tile.target<"sm_86">} {\n' + text + "\n}\n"
    assert compiler.compile_text(tagged, None, stop_after="gpu").target.arch == "sm_86"
    # ...and is not silently compiled for another.
    with pytest.raises(tlc.CompilationError,
                       match="the module is for sm_86 .* but the target asked for is sm_90a"):
        compiler.compile_text(tagged, "sm_90a", "tagged.mlir")


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "tlc.cli", *args], capture_output=True, text=True)


def test_cli_ptx_and_artifact(repo, tmp_path):
    out = tmp_path / "vadd.ptx"
    r = run_cli(str(repo / "examples/vadd.mlir"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert ".entry vadd(" in out.read_text()
    art = tmp_path / "vadd.tlcart"
    r = run_cli(str(repo / "examples/vadd.mlir"), "--emit=artifact", "-o", str(art))
    assert r.returncode == 0, r.stderr
    assert json.loads(art.read_text())["name"] == "vadd"
    r = run_cli(str(repo / "examples/vadd.mlir"), "--emit=gpu")
    assert "gpu.func @vadd" in r.stdout and "tile.copy" not in r.stdout


def test_cli_error_leaves_no_output(tmp_path):
    bad = tmp_path / "big.mlir"
    bad.write_text(SHARED_OVER_BUDGET)
    out = tmp_path / "big.ptx"
    r = run_cli(str(bad), "-o", str(out))
    assert r.returncode == 1
    assert f"{bad}:4:3: error: the kernel needs 262144 bytes" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]


def test_import_tlc_does_not_load_the_compiler():
    code = ("import sys, tlc, tlc.runtime; "
            "print(any(m.startswith('tlc._mlir_libs') for m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


@pytest.mark.gpu
def test_vadd_runs_on_gpu(repo):
    import torch

    kernel = tlc.compile((repo / "examples/vadd.mlir").read_text())
    for m, n in [(4096, 4096), (1000, 1000)]:
        a, b = (torch.randn(m, n, device="cuda") for _ in range(2))
        c = torch.full((m, n), float("nan"), device="cuda")
        kernel(a, b, c)
        torch.cuda.synchronize()
        assert torch.equal(c, a + b)


NT_GEMM = """
func.func @nt(%A: memref<256x64xf16>, %B: memref<256x64xf16>, %C: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 256 {
    %a = tile.alloc_shared : memref<128x64xf16, #gpu.address_space<workgroup>>
    %b = tile.alloc_shared : memref<256x64xf16, #gpu.address_space<workgroup>>
    %c = tile.alloc_fragment : memref<128x256xf32, #tile.space<fragment>>
    tile.copy %A[%c0, %c0] [128, 64] to %a[%c0, %c0] [128, 64] : memref<256x64xf16> to memref<128x64xf16, #gpu.address_space<workgroup>>
    tile.copy %B[%c0, %c0] [256, 64] to %b[%c0, %c0] [256, 64] : memref<256x64xf16> to memref<256x64xf16, #gpu.address_space<workgroup>>
    tile.gemm %a, %b, %c {clear_accum, transpose_b} : memref<128x64xf16, #gpu.address_space<workgroup>>, memref<256x64xf16, #gpu.address_space<workgroup>>, memref<128x256xf32, #tile.space<fragment>>
    tile.copy %c[%c0, %c0] [128, 256] to %C[%c0, %c0] [128, 256] : memref<128x256xf32, #tile.space<fragment>> to memref<256x256xf32>
  }
  return
}
"""


def test_wgmma_on_sm90a_mma_sync_elsewhere(tmp_path):
    # 128 x 256, K 64, 8 warps = two warpgroups: one m64n256k16 per warpgroup
    # and K slice (4 in the PTX), fences around them; sm_80 and sm_90 (no
    # 'a' features) keep ldmatrix + mma.sync.
    ptx = compiler.compile_text(NT_GEMM, "sm_90a").ptx["nt"]
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16") == 4
    assert "wgmma.fence.sync.aligned" in ptx and "wgmma.wait_group.sync.aligned" in ptx
    assert "fence.proxy.async.shared::cta" in ptx and "mma.sync" not in ptx
    ptxas_ok(ptx, tmp_path)
    for arch in ("sm_90", "sm_80"):
        other = compiler.compile_text(NT_GEMM, arch).ptx["nt"]
        assert "wgmma" not in other and "mma.sync.aligned.m16n8k16" in other


def test_wgmma_needs_the_swizzle_of_its_rows():
    # Run without tile-swizzle-shared-memory, the operands would not match the
    # descriptors: the lowering refuses instead of computing garbage.
    ctx = compiler.new_context()
    module = compiler.parse(NT_GEMM, ctx, "nt.mlir")
    pipeline.set_target(module, "sm_90a")
    with pytest.raises(tlc.CompilationError, match="needs A and B in shared memory with "
                                                   "the swizzle of their K rows for wgmma"):
        pipeline.run_pipeline(
            module, "builtin.module(tile-select-mma,tile-infer-layout,tile-allocate-shared-memory,"
            "tile-outline-kernels,convert-tile-to-gpu)", "gpu")


def test_wgmma_nn_reads_b_n_major(tmp_path):
    # B stored K x N: its shared tile is kept as 64-column blocks and the
    # wgmma transposes it (imm-trans-b = 1, the last operand).
    nn = NT_GEMM.replace("%B: memref<256x64xf16>", "%B: memref<64x256xf16>") \
                .replace("tile.copy %B[%c0, %c0] [256, 64] to %b[%c0, %c0] [256, 64] : "
                         "memref<256x64xf16> to memref<256x64xf16,",
                         "tile.copy %B[%c0, %c0] [64, 256] to %b[%c0, %c0] [64, 256] : "
                         "memref<64x256xf16> to memref<64x256xf16,") \
                .replace("%b = tile.alloc_shared : memref<256x64xf16",
                         "%b = tile.alloc_shared : memref<64x256xf16") \
                .replace("memref<256x64xf16, #gpu.address_space<workgroup>>, memref<128x256xf32",
                         "memref<64x256xf16, #gpu.address_space<workgroup>>, memref<128x256xf32") \
                .replace("{clear_accum, transpose_b}", "{clear_accum}")
    assert "transpose_b" not in nn
    ptx = compiler.compile_text(nn, "sm_90a").ptx["nt"]
    calls = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16 \{[^}]*\}, "
                       r"%rd\d+, %rd\d+, p, 1,  1, 0,  1;", ptx)
    assert len(calls) == 4, ptx[:2000]
    ptxas_ok(ptx, tmp_path)


def _pipelined_gemm_ptx(repo, stages, trans_b):
    sys.path.insert(0, str(repo / "examples"))
    try:
        import gemm
    finally:
        sys.path.pop(0)
    return gemm.matmul(1024, 1024, 1024, 128, 256, 64, 256, stages,
                       trans_B=trans_b).get_kernel_source()


@pytest.mark.parametrize("trans_b", [False, True])
def test_wgmma_overlaps_the_next_iteration_with_four_stages(repo, tmp_path, trans_b):
    # A plain T.Pipelined loop of T.copy + T.gemm on sm_90a is warp-specialized:
    # a producer warpgroup (setmaxnreg down) issues TMA loads on per-stage
    # mbarriers, the consumers (setmaxnreg up) wait for them. Four stages: each
    # gemm leaves its wgmma group pending; all are waited for after the loop.
    # Three stages keep the wgmma synchronous. No cp.async is left.
    ptx = _pipelined_gemm_ptx(repo, 4, trans_b)
    waits = lambda text, what: re.findall(rf"{what}\s+(\d+);", text)  # noqa: E731
    assert sorted(waits(ptx, r"wgmma\.wait_group\.sync\.aligned")) == ["0", "1"], ptx
    assert "cp.async.wait_group" not in ptx and "cp.async.ca" not in ptx
    assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait.parity" in ptx
    assert re.search(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+40;", ptx)
    assert re.search(r"\.param \.align 128 \.b8 \w+\[128\]", ptx)
    ptxas_ok(ptx, tmp_path)
    three = _pipelined_gemm_ptx(repo, 3, trans_b)
    assert waits(three, r"wgmma\.wait_group\.sync\.aligned") == ["0"]
    assert "cp.async.bulk.tensor.2d" in three


@pytest.mark.parametrize("key", ["tl.disable_tma_lower", "tl.disable_warp_specialized"])
def test_pass_configs_turn_warp_specialization_off(repo, key):
    # TileLang's switches keep sm_90a's cp.async pipeline (wgmma still), and
    # the cache keeps the two kernels apart.
    sys.path.insert(0, str(repo / "examples"))
    import gemm

    args = (1024, 1024, 1024, 128, 256, 64, 256, 3)
    plain = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)(*args)
    off = tlc.jit(out_idx=[-1], target="sm_90a", pass_configs={key: True})(
        gemm.matmul.factory)(*args)
    assert "cp.async.bulk.tensor" in plain.get_kernel_source()
    ptx = off.get_kernel_source()
    assert "cp.async.bulk.tensor" not in ptx and "setmaxnreg" not in ptx
    assert "cp.async.wait_group" in ptx and "wgmma.mma_async" in ptx
    assert off.artifact["threads"] == [256, 1, 1] and plain.artifact["threads"] == [384, 1, 1]
    assert off.artifact["target"] == plain.artifact["target"] == "sm_90a"


def test_copy_disable_tma_keeps_the_loop_off_tma(tmp_path):
    import tlc.language as T

    def gemm(disable):
        @T.prim_func
        def nt(A: T.Tensor((512, 512), "float16"), B: T.Tensor((512, 512), "float16"),
               C: T.Tensor((512, 512), "float32")):
            with T.Kernel(4, 4, threads=256) as (bx, by):
                A_s = T.alloc_shared((128, 64), "float16")
                B_s = T.alloc_shared((128, 64), "float16")
                acc = T.alloc_fragment((128, 128), "float32")
                T.clear(acc)
                for k in T.Pipelined(8, num_stages=3):
                    T.copy(A[by * 128, k * 64], A_s, disable_tma=disable)
                    T.copy(B[bx * 128, k * 64], B_s)
                    T.gemm(A_s, B_s, acc, transpose_B=True)
                T.copy(acc, C[by * 128, bx * 128])
        return tlc.compile(nt, target="sm_90a").get_kernel_source()

    assert "cp.async.bulk.tensor" in gemm(False)
    off = gemm(True)
    assert "cp.async.bulk.tensor" not in off and "cp.async.wait_group" in off
    ptxas_ok(off, tmp_path)


@pytest.mark.parametrize("dtype", ["float8_e4m3", "float8_e5m2"])
def test_fp8_gemm_runs_on_wgmma_with_tma(repo, tmp_path, dtype):
    sys.path.insert(0, str(repo / "examples"))
    import fp8_gemm

    kernel = fp8_gemm.fp8_matmul(1024, 1024, 1024, in_dtype=dtype)
    ptx = kernel.get_kernel_source()
    kind = "e4m3" if dtype == "float8_e4m3" else "e5m2"
    assert f"wgmma.mma_async.sync.aligned.m64n256k32.f32.{kind}.{kind}" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait.parity" in ptx
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("block_K,swizzle", [(64, 64), (32, 32)])
def test_fp8_gemm_k_tiles_of_64_and_32_bytes(repo, tmp_path, block_K, swizzle):
    # K rows of one 64- or 32-byte atom: the 64- / 32-byte swizzle, as for
    # 16-bit K tiles of 32 and 16 (DeepSeek's indexer: index heads of 64).
    sys.path.insert(0, str(repo / "examples"))
    import fp8_gemm

    kernel = fp8_gemm.fp8_matmul(512, 512, 512, 128, 128, block_K, in_dtype="float8_e4m3fn")
    ptx = kernel.get_kernel_source()
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") == block_K // 32
    assert "cp.async.bulk.tensor.2d" in ptx
    assert f"swizzle = {swizzle}" in kernel.get_mlir("optimized")
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("layout", ["TN", "TT"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_m_major_a_runs_on_wgmma(repo, tmp_path, layout, dtype):
    # A stored K x M (transpose_A) is wgmma's transposed A (imm-trans-a 1),
    # loaded by TMA in 64-column blocks, warp-specialized like NN / NT.
    sys.path.insert(0, str(repo / "examples"))
    import gemm

    kernel = gemm.matmul(1024, 1024, 1024, 128, 256, 64, 256, 3, dtype, "float32",
                         trans_A=True, trans_B=layout[1] == "T")
    ptx = kernel.get_kernel_source()
    kind = "f16" if dtype == "float16" else "bf16"
    wgmma = [l for l in ptx.splitlines() if "wgmma.mma_async" in l]
    assert wgmma and all(f"m64n256k16.f32.{kind}.{kind}" in l for l in wgmma)
    trans_b = "0" if layout[1] == "T" else "1"
    assert all(l.rstrip().endswith(f"1, 1,  1, {trans_b};") or
               l.replace(" ", "").endswith(f"p,1,1,1,{trans_b};") for l in wgmma), wgmma[0][-40:]
    assert "mma.sync" not in ptx and "cp.async.bulk.tensor.2d" in ptx
    ptxas_ok(ptx, tmp_path)


@pytest.mark.parametrize("layout", ["NN", "TN", "TT"])
@pytest.mark.parametrize("block_N", [128, 256])
def test_fp8_gemm_operands_not_k_major_are_transposed(repo, tmp_path, layout, block_N):
    # wgmma reads fp8 operands K-major only: an N-major B or an M-major A is
    # transposed in shared memory (tile.transpose, 4 x 4 byte blocks) by the
    # consumers, still warp-specialized with TMA (an N-major B of 256 columns
    # in two 128-byte column blocks).
    sys.path.insert(0, str(repo / "examples"))
    import fp8_gemm

    ta, tb = layout[0] == "T", layout[1] == "T"
    # Two K-major copies per transposed operand: TN's 128 x 256 fits 2 stages.
    stages = 2 if layout == "TN" and block_N == 256 else 3
    kernel = fp8_gemm.fp8_matmul(1024, 1024, 1024, 128, block_N, 128, 256, stages,
                                 trans_A=ta, trans_B=tb)
    module = fp8_gemm.fp8_matmul.factory(1024, 1024, 1024, 128, block_N, 128, 256, stages,
                                         trans_A=ta, trans_B=tb).build_module()
    text = str(module)
    assert text.count("tile.transpose") == (ta + (not tb))
    assert "#tile.shared<stages = 2>" in text  # the copy transposed while the other is read
    ptx = kernel.get_kernel_source()
    assert f"wgmma.mma_async.sync.aligned.m64n{block_N}k32.f32.e4m3.e4m3" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx and "setmaxnreg" in ptx
    assert "prmt.b32" in ptx and "ld.shared.u8" not in ptx
    # One wgmma group left running while the next K tile is transposed (a
    # 2-stage pipeline has no stage to spare for it).
    assert ("wgmma.wait_group.sync.aligned \t1;" in ptx) == (stages > 2)
    ptxas_ok(ptx, tmp_path)


def test_fp8_gemm_before_sm_90a_is_an_error_at_its_line():
    import tlc.language as T

    @T.prim_func
    def nt(A: T.Tensor((256, 256), "float8_e4m3"), B: T.Tensor((256, 256), "float8_e4m3"),
           C: T.Tensor((256, 256), "float32")):
        with T.Kernel(2, 4, threads=128) as (bx, by):
            A_s = T.alloc_shared((64, 128), "float8_e4m3")
            B_s = T.alloc_shared((128, 128), "float8_e4m3")
            acc = T.alloc_fragment((64, 128), "float32")
            T.clear(acc)
            for k in T.Pipelined(2, num_stages=2):
                T.copy(A[by * 64, k * 128], A_s)
                T.copy(B[bx * 128, k * 128], B_s)
                T.gemm(A_s, B_s, acc, transpose_B=True)
            T.copy(acc, C[by * 64, bx * 128])

    with pytest.raises(tlc.CompilationError) as e:
        tlc.compile(nt, target="sm_90")
    assert "test_compile.py" in str(e.value)
    assert "fp8 gemms run on sm_90a's wgmma only" in str(e.value)


def test_fp8_gemm_narrow_operands_are_transposed(repo, tmp_path):
    # A 64-column N-major B (128 x 64) is a tile.transpose of 16-quad blocks;
    # a 96-column one no shape it takes: a T.Parallel copy, byte by byte.
    sys.path.insert(0, str(repo / "examples"))
    import fp8_gemm

    text = str(fp8_gemm.fp8_matmul.factory(256, 256, 256, 64, 64, 128, 128, 2,
                                           trans_B=False).build_module())
    assert "tile.transpose" in text and "memref<64x128xf8E4M3FN" in text
    ptx = fp8_gemm.fp8_matmul(256, 256, 256, 64, 64, 128, 128, 2,
                              trans_B=False).get_kernel_source()
    assert "prmt.b32" in ptx and "wgmma.mma_async.sync.aligned.m64n64k32" in ptx
    ptxas_ok(ptx, tmp_path)
    text = str(fp8_gemm.fp8_matmul.factory(192, 192, 256, 64, 96, 128, 128, 2,
                                           trans_B=False).build_module())
    assert "tile.transpose" not in text and "tile.parallel" in text
    assert "memref<96x128xf8E4M3FN" in text  # B's K-major copy


def test_bool_buffers_are_bytes_in_memory(tmp_path):
    # Element reads and writes of bool tensors and fragments compile (they used
    # to abort in the memref-to-LLVM conversion): bools live as i8 in memory,
    # as torch and numpy keep them, and as i1 in registers.
    import tlc.language as T

    @T.prim_func
    def negate(X: T.Tensor((128,), "bool"), Y: T.Tensor((128,), "bool"),
               Z: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            x = T.alloc_fragment((128,), "bool")
            T.copy(X[0], x)
            for i in T.Parallel(128):
                x[i] = not x[i]
                Z[i] = T.if_then_else(X[i], 1.0, 2.0)
            T.copy(x, Y[0])

    assert "memref<128xi8>" in str(negate.build_module())
    kernel = tlc.compile(negate, target="sm_90a")
    kernel.save(str(tmp_path / "negate.tlcart"))
    params = json.loads((tmp_path / "negate.tlcart").read_text())["params"]
    assert [p["dtype"] for p in params] == ["bool", "bool", "float32"]
    ptxas_ok(kernel.get_kernel_source(), tmp_path)
    import numpy as np
    x = np.arange(128) % 3 == 0
    y, z = np.zeros(128, bool), np.zeros(128, np.float32)
    tlc.interpret(negate, x, y, z)
    assert (y == ~x).all() and (z == np.where(x, 1.0, 2.0)).all()


def test_fp8_tensor_parameters(tmp_path):
    # fp8 tensors are kernel parameters (named as torch names them); copies
    # move their bytes.
    import tlc.language as T

    @T.prim_func
    def copy8(X: T.Tensor((256, 128), "float8_e4m3"), Y: T.Tensor((256, 128), "float8_e5m2"),
              Z: T.Tensor((256, 128), "float8_e4m3")):
        with T.Kernel(2, threads=128) as bx:
            x = T.alloc_fragment((128, 128), "float8_e4m3")
            s = T.alloc_shared((128, 128), "float8_e5m2")
            T.copy(X[bx * 128, 0], x)
            T.copy(x, Z[bx * 128, 0])
            T.copy(Y[bx * 128, 0], s)
            T.copy(s, Y[bx * 128, 0])

    kernel = tlc.compile(copy8, target="sm_90a")
    kernel.save(str(tmp_path / "copy8.tlcart"))
    params = json.loads((tmp_path / "copy8.tlcart").read_text())["params"]
    assert [p["dtype"] for p in params] == ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fn"]
    ptxas_ok(kernel.get_kernel_source(), tmp_path)


def test_index_dense_array_is_a_message(tmp_path):
    # MLIR's parser asserts on `array<index: ...>` (a fuzzer mutant of a
    # tensor map's box): refused first, at the line and column.
    text = 'func.func @f() {\n  %x = "tile.foo"() {box = array<index: 1>} : () -> ()\n}\n'
    assert_refused(text, "arr", r"arr.mlir:2:28: error: a dense array's elements are integers",
                   "not index: write array<i64: ...>", tmp_path)
    # Inside a string it is text, not an array.
    quoted = 'module attributes {tile.note = "array<index"} {\n}\n'
    try:
        compiler.compile_text(quoted, "sm_90a", "q.mlir")
    except tlc.CompilationError as e:
        assert "dense array" not in str(e)


def test_deeply_nested_ir_is_a_message(tmp_path):
    # MLIR's parser recurses per nesting level: thousands of nested regions
    # used to overflow the stack. Refused first, at the line and column.
    nested = "func.func @f() {\n" + "scf.execute_region {\n" * 6000 + "}\n" * 6001
    assert_refused(nested, "deep", r"deep.mlir:257:20: error: the IR nests deeper than 256 levels",
                   "nests deeper than 256 levels", tmp_path)


def assert_refused(text: str, stem: str, match: str, cli_message: str, tmp_path) -> None:
    """`text` is a CompilationError matching `match` from the compiler, and
    from the tlc command a message with `cli_message`, no traceback, no output."""
    with pytest.raises(tlc.CompilationError, match=match):
        compiler.compile_text(text, "sm_90a", f"{stem}.mlir")
    path = tmp_path / f"{stem}.mlir"
    path.write_text(text)
    result = run_cli(str(path), "-o", str(tmp_path / f"{stem}.ptx"))
    assert result.returncode == 1 and cli_message in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / f"{stem}.ptx").exists()


def test_fp8_conversions_use_the_hardware_cvt(repo, tmp_path):
    # Casts from and to fp8 lower to cvt.rn.f16x2.e4m3x2 and
    # cvt.rn.satfinite.e5m2x2.f32 (tile-lower-fp8-conversions); the same
    # kernels ran bit-exact against torch on the H200 (test/gpu/fp8_check.py).
    import importlib.util

    spec = importlib.util.spec_from_file_location("fp8_check", repo / "test/gpu/fp8_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(tmp_path)
    for name, cvt in (("dequant", "cvt.rn.f16x2.e4m3x2"),
                      ("quant", "cvt.rn.satfinite.e5m2x2.f32")):
        ptx = json.loads((tmp_path / f"{name}.tlcart").read_text())["ptx"]
        assert cvt in ptx
        ptxas_ok(ptx, tmp_path)
    import tlc.language as T

    @T.prim_func
    def widen(X: T.Tensor((128,), "float8_e4m3"), Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            x = T.alloc_fragment((128,), "float32")
            T.copy(X[0], x)
            T.copy(x, Y[0])

    # sm_80 has no fp8 cvt: the conversion is integer arithmetic on the bits there
    ptx = tlc.compile(widen, target="sm_80").get_kernel_source()
    assert "e4m3x2" not in ptx
    ptxas_ok(ptx, tmp_path)


def test_fp8_conversions_of_a_run_share_a_cvt(repo, tmp_path):
    # 32 threads over 256 elements: each converts a run of 8 consecutive ones as
    # one vector, two elements a cvt, 4 cvt a thread both ways (8 before). The
    # same kernels ran bit-exact against torch on an H100 (2026-12-05,
    # bench/build_fp8_conversions.py's `_pairs` checks).
    import importlib.util
    import re

    spec = importlib.util.spec_from_file_location(
        "build_fp8_conversions", repo / "bench/build_fp8_conversions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for make, cvt in ((module.narrow, r"cvt\.rn\.satfinite\.e4m3x2\.f32"),
                      (module.widen, r"cvt\.rn\.f16x2\.e4m3x2")):
        ptx = tlc.compile(make("float8_e4m3fn", 32), target="sm_90a").get_kernel_source()
        assert len(re.findall(cvt, ptx)) == 4
        assert re.search(r"ld\.global\S*\.v[24]", ptx)  # the run is one vector
        ptxas_ok(ptx, tmp_path)


def test_every_dtype_of_the_table_is_a_kernel_parameter(tmp_path):
    # One table (tlc.dtypes) for the language, the compiler's parameters and
    # the runtime: every dtype is a tensor parameter named as the runtime (and
    # torch) name it; unsigned values convert as unsigned (60000 as uint16).
    import numpy as np

    import tlc.language as T
    from tlc.dtypes import TABLE
    from tlc.runtime.dtypes import DTYPES

    for info in TABLE:
        @T.prim_func
        def copy_any(X: T.Tensor((128,), info.name), Y: T.Tensor((128,), info.name)):
            with T.Kernel(1, threads=128):
                x = T.alloc_fragment((128,), info.name)
                T.copy(X[0], x)
                T.copy(x, Y[0])

        kernel = tlc.compile(copy_any, target="sm_90a")
        kernel.save(str(tmp_path / "k.tlcart"))
        params = json.loads((tmp_path / "k.tlcart").read_text())["params"]
        assert [p["dtype"] for p in params] == [info.runtime] * 2, info
        assert DTYPES[info.runtime].itemsize == info.itemsize

    @T.prim_func
    def widen(X: T.Tensor((128,), "uint16"), Y: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            for i in T.Parallel(128):
                Y[i] = T.cast(X[i], "float32")

    assert "uitofp" in str(widen.build_module())
    x = np.full(128, 60000, np.uint16)
    y = np.zeros(128, np.float32)
    tlc.interpret(widen, x, y)
    assert (y == 60000.0).all()


def test_installed_native_library_is_not_duplicated():
    # A wheel holds no symbolic links: a versioned SONAME would install the
    # ~96 MB C-API library twice (libX.so and libX.so.22.1).
    libs = Path(ir.__file__).parent / "_mlir_libs"  # where tlc.ir's native parts are
    capi = sorted(p.name for p in libs.glob("libTLCPythonCAPI.so*"))
    assert capi == ["libTLCPythonCAPI.so"], capi


def test_pass_configs_fast_math(tmp_path):
    # tl.enable_fast_math: a multiply and an add contract to one fma, f32
    # instructions and libdevice's functions flush denormals (.ftz); without
    # it neither happens. The
    # artifact still names the chip; the cache keeps the two kernels apart.
    import tlc.language as T
    from tlc.compiler.targets import get_target

    def axpb(fast):
        @tlc.jit(out_idx=[-1], target="sm_90a", pass_configs={"tl.enable_fast_math": fast})
        def factory(n):
            @T.prim_func
            def axpb(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32"),
                     C: T.Tensor((n,), "float32"), D: T.Tensor((n,), "float32")):
                with T.Kernel(T.ceildiv(n, 256), threads=128) as bx:
                    for i in T.Parallel(256):
                        D[bx * 256 + i] = A[bx * 256 + i] * B[bx * 256 + i] / C[bx * 256 + i] \
                            + T.exp2(A[bx * 256 + i])
            return axpb
        return factory(4096)

    plain, fast = axpb(False), axpb(True)
    p, f = plain.get_kernel_source(), fast.get_kernel_source()
    assert ".ftz" not in p and "fma.rn" not in p and "div.rn.f32" in p
    assert "ex2.approx.f32" in p
    assert ".ftz" in f and "div.rn.f32" not in f
    # libdevice's exp2f takes its flush-to-zero form too (one MUFU.EX2).
    assert "ex2.approx.ftz.f32" in f and "ex2.approx.f32" not in f
    assert plain.artifact["target"] == fast.artifact["target"] == "sm_90a"
    ptxas_ok(f, tmp_path)
    t = get_target("sm_90a+no_tma+fast_math")
    assert (t.arch, t.tma, t.fast_math, t.name) == ("sm_90a", False, True, "sm_90a+no_tma+fast_math")


def test_parallel_over_global_tensors_moves_16_byte_runs(tmp_path):
    # C = A + B as a T.Parallel indexing the global tensors (TileLang's
    # elementwise style): each thread takes runs of 16 bytes, one vector load
    # per input and one vector store per run (plus an element-wise path for
    # the runs a dynamic edge cuts), and the result matches.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from build_elementwise import parallel_vadd

    for dtype, runs in (("float16", 4), ("float32", 8)):
        prim = parallel_vadd(dtype)
        code = tlc.compile(prim, target="sm_90a").get_kernel_source()
        assert code.count("ld.global.v4.b32") == 2 * runs, code
        assert code.count("st.global.v4.b32") == runs, code
        ptxas_ok(code, tmp_path)
        rng = np.random.default_rng(0)
        a = rng.standard_normal((70, 130)).astype(dtype)
        b = rng.standard_normal((70, 130)).astype(dtype)
        c = np.zeros_like(a)
        tlc.interpret(prim, a, b, c)
        np.testing.assert_array_equal(c, a + b)


def parallel_fragment_round_trip(m, n, dtype):
    """A T.Parallel loading a global tile into a float32 fragment, then one
    storing it back scaled: each thread's registers hold runs of consecutive
    elements, which both loops move as vectors."""
    import tlc.language as T

    rows = T.dynamic("rows")

    @T.prim_func
    def round_trip(A: T.Tensor((rows, n), dtype), B: T.Tensor((rows, n), dtype)):
        with T.Kernel(T.ceildiv(rows, m), threads=128) as bx:
            f = T.alloc_fragment((m, n), "float32")
            for i, j in T.Parallel(m, n):
                f[i, j] = A[bx * m + i, j]
            for i, j in T.Parallel(m, n):
                B[bx * m + i, j] = f[i, j] * 2.0 + 1.0
    return round_trip


@pytest.mark.parametrize("dtype, vectors", [("float16", ("v4.b16", "v2.b32")),
                                            ("float32", ("v4.b32", "v4.f32"))])
def test_parallel_between_global_and_fragment_moves_runs(dtype, vectors, tmp_path):
    # Each thread holds runs of 4 consecutive float32 registers: 8- (fp16) or
    # 16-byte (fp32) global accesses instead of one element at a time (64 x
    # 256 elements on 128 threads: 32 runs a thread each way).
    prim = parallel_fragment_round_trip(64, 256, dtype)
    code = tlc.compile(prim, target="sm_90a").get_kernel_source()
    accesses = re.findall(r"\b(ld|st)\.global\.([\w.]+)", code)
    assert {(op, kind) for op, kind in accesses} <= {(op, v) for op in ("ld", "st")
                                                     for v in vectors}, code
    assert sum(op == "ld" for op, _ in accesses) == 32, code
    assert sum(op == "st" for op, _ in accesses) == 32, code
    ptxas_ok(code, tmp_path)
    a = np.random.default_rng(7).standard_normal((100, 256)).astype(dtype)
    b = np.zeros_like(a)
    tlc.interpret(prim, a, b)
    np.testing.assert_array_equal(b, (a.astype(np.float32) * 2 + 1).astype(dtype))


def test_parallel_with_a_row_vector_moves_runs(tmp_path):
    # Y = X * scale[i] + the row's own bias through fragments: a row vector read
    # without the last index is one register for each thread's run, so the loop
    # still moves its runs of the fragment as vectors (16-byte stores).
    import tlc.language as T

    @T.prim_func
    def row_scaled(X: T.Tensor((64, 128), "float32"), S: T.Tensor((64,), "float32"),
                   Y: T.Tensor((64, 128), "float32")):
        with T.Kernel(1, threads=128):
            x = T.alloc_fragment((64, 128), "float32")
            scale = T.alloc_fragment((64,), "float32")
            T.copy(X, x)
            T.reduce_max(x, scale, dim=1)
            for i in T.Parallel(64):
                scale[i] = scale[i] + S[i]
            for i, j in T.Parallel(64, 128):
                Y[i, j] = x[i, j] * scale[i]

    code = tlc.compile(row_scaled, target="sm_90a").get_kernel_source()
    stores = re.findall(r"\bst\.global\.([\w.]+)", code)
    assert stores and all(kind.startswith("v4") for kind in stores), stores
    ptxas_ok(code, tmp_path)
    x, scale, y = _interpret_row_scaled(row_scaled, (64, 128), np.float32, seed=5)
    np.testing.assert_allclose(y, x * (x.max(axis=1) + scale)[:, None], rtol=1e-6)


def _interpret_row_scaled(prim, shape, dtype, seed):
    """Runs `prim(X, S, Y)` (a tile X, a scale per row S) in the interpreter on
    random inputs; returns X, S and Y."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    scale = rng.standard_normal(shape[0]).astype(dtype)
    y = np.zeros_like(x)
    tlc.interpret(prim, x, scale, y)
    return x, scale, y


def test_parallel_runs_into_shared_with_a_row_scale(tmp_path):
    # Global -> swizzled shared in 16-byte runs (a gemm operand's buffer), each
    # row scaled by a value of a vector the run shares, then copied out.
    import tlc.language as T

    @T.prim_func
    def scaled(A: T.Tensor((256, 64), "float16"), S: T.Tensor((256,), "float16"),
               B: T.Tensor((256, 64), "float16")):
        with T.Kernel(4, threads=128) as bx:
            s = T.alloc_shared((64, 64), "float16")
            T.annotate_layout({s: tlc.layout.make_swizzled_layout(s)})
            for i, j in T.Parallel(64, 64):
                s[i, j] = A[bx * 64 + i, j] * S[bx * 64 + i]
            T.copy(s, B[bx * 64, 0])

    code = tlc.compile(scaled, target="sm_90a").get_kernel_source()
    assert code.count("ld.global.v4.b32") == 4 and code.count("st.shared.v4.b32") == 4, code
    ptxas_ok(code, tmp_path)
    a, scale, b = _interpret_row_scaled(scaled, (256, 64), np.float16, seed=3)
    np.testing.assert_array_equal(b, a * scale[:, None])
