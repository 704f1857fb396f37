"""The compile-time breakdown: `tlc --time-passes` and TLC_TIMING=1 name every
stage and every pass of the pipeline (times are printed, never checked)."""

import os
import re
import subprocess
import sys

import pytest

import tlc
import tlc.language as T
from tlc import cli
from tlc import timing
from tlc.compiler import pipeline
from tlc.compiler.targets import get_target


SHARED_OVER_BUDGET = """
func.func @big() {
  %c1 = arith.constant 1 : index
  tile.kernel blocks(%bx) in (%c1) threads = 128 {
    %a = tile.alloc_shared : memref<256x512xf16, #gpu.address_space<workgroup>>
  }
  return
}
"""


def _all_pipelines(arch="sm_90a"):
    """(stage, pipeline text) of every stage compile_module runs."""
    return [("optimized", pipeline.OPTIMIZE_PIPELINE), ("gpu", pipeline.GPU_PIPELINE),
            ("nvvm", pipeline.nvvm_pipeline(get_target(arch))), ("ptx", pipeline.PTX_PIPELINE)]


def _table_rows(text: str) -> list[tuple[int, str]]:
    """(depth, name) of the rows of the one table in `text`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("tlc timing: "))
    assert lines[start + 1].split() == ["stage", "/", "pass", "ms", "%"]
    rows = []
    for line in lines[start + 2:]:
        m = re.match(r"^  ( *)(\S.*?)\s+(\d+\.\d\d)\s+(\d+\.\d)$", line)
        assert m, f"not a table row: {line!r}"
        rows.append((len(m.group(1)) // 2, m.group(2)))
        if m.group(2) == "total":
            break
    return rows


def _check_every_pass(rows, arch="sm_90a"):
    """Each stage's row is followed by its passes, named and nested as in the
    pipeline text, in pipeline order, and the verification of the result."""
    names = [name for _, name in rows]
    for stage, text in _all_pipelines(arch):
        title = f"{stage}: {pipeline.STAGE_TITLES[stage]}"
        assert title in names, f"no row for stage {title}"
        at = names.index(title)
        depth = rows[at][0]
        expected = [(depth + 1 + d, p) for d, p in timing.pipeline_passes(text)]
        expected.append((depth + 1, "verify"))  # once, after the last pass
        assert rows[at + 1:at + 1 + len(expected)] == expected
    assert names[-1] == "total"


def test_pipeline_passes_reads_nesting_and_options():
    assert timing.pipeline_passes("builtin.module(a,b{x=1 y={z}},gpu.module(c,d{o=2}),e)") == [
        (0, "a"), (0, "b"), (0, "gpu.module"), (1, "c"), (1, "d"), (0, "e")]
    passes = [p for _, p in timing.pipeline_passes(pipeline.nvvm_pipeline(get_target("sm_90a")))]
    assert passes[:3] == ["lower-affine", "nvvm-attach-target", "gpu.module"]
    assert "convert-gpu-to-nvvm" in passes


REPORT = """\
===-------------------------------------------------------------------------===
                         ... Execution time report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 0.0400 seconds

  ----User Time----  ----Wall Time----  ----Name----
    0.0050 ( 10.0%)    0.0040 ( 10.0%)  LowerAffinePass
    0.0300 ( 60.0%)    0.0300 ( 75.0%)  'gpu.module' Pipeline
    0.0200 ( 40.0%)    0.0200 ( 50.0%)    Canonicalizer
    0.0000 (  0.0%)    0.0000 (  0.0%)      (A) DominanceInfo
    0.0100 ( 20.0%)    0.0100 ( 25.0%)    CSE
    0.0001 (  0.0%)    0.0001 (  0.0%)  Rest
    0.0500 (100.0%)    0.0400 (100.0%)  Total

"""


def test_parse_pass_report_takes_wall_time_and_passes_other_text_on():
    rows, other = timing.parse_pass_report("a warning\n" + REPORT + "after\n")
    assert rows == [(0, "LowerAffinePass", 0.004), (0, "'gpu.module' Pipeline", 0.03),
                    (1, "Canonicalizer", 0.02), (1, "CSE", 0.01)]
    assert other.split() == ["a", "warning", "after"]


def test_cli_time_passes_names_every_stage_and_pass(repo, tmp_path, capfd):
    out = tmp_path / "vadd.ptx"
    plain = tmp_path / "plain.ptx"
    src = str(repo / "examples/elementwise.tile")
    assert cli.main([src, "--kernel", "vadd", "-o", str(plain)]) == 0
    assert capfd.readouterr().err == ""
    assert cli.main([src, "--kernel", "vadd", "--time-passes", "-o", str(out)]) == 0
    err = capfd.readouterr().err
    assert out.read_text() == plain.read_text()  # timing changes nothing compiled
    assert err.count("tlc timing: ") == 1 and "Execution time report" not in err
    rows = _table_rows(err)
    names = [name for _, name in rows]
    for stage in ("import the compiler (MLIR bindings)", "frontend: run the .tile file",
                  "context + dialects",
                  "frontend: vadd, Python AST -> tile IR", "verify tile IR", "read PTX",
                  "artifact"):
        assert stage in names
    _check_every_pass(rows)


def test_cli_time_passes_on_mlir_and_on_an_error(repo, tmp_path, capfd):
    assert cli.main([str(repo / "examples/vadd.mlir"), "--time-passes", "--arch", "sm_80",
                     "-o", str(tmp_path / "v.ptx")]) == 0
    rows = _table_rows(capfd.readouterr().err)
    assert "parse tile IR" in [n for _, n in rows]
    _check_every_pass(rows, "sm_80")
    bad = tmp_path / "big.mlir"
    bad.write_text(SHARED_OVER_BUDGET)  # fails inside tile-allocate-shared-memory
    assert cli.main([str(bad), "--time-passes", "-o", str(tmp_path / "b.ptx")]) == 1
    err = capfd.readouterr().err
    assert "232448 per block" in err and "tlc timing: " in err
    assert "tile-infer-layout" in err and "Execution time report" not in err
    assert not (tmp_path / "b.ptx").exists()


def _add(M, N):
    @T.prim_func
    def add(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
            C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 32), threads=128) as (bx, by):
            a = T.alloc_fragment((32, 128), "float32")
            b = T.alloc_fragment((32, 128), "float32")
            T.copy(A[by * 32, bx * 128], a)
            T.copy(B[by * 32, bx * 128], b)
            for i, j in T.Parallel(32, 128):
                a[i, j] += b[i, j]
            T.copy(a, C[by * 32, bx * 128])

    return add


@pytest.fixture
def timed(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TLC_TIMING", "1")
    monkeypatch.delenv("TLC_TARGET", raising=False)


def test_tlc_timing_for_jit_names_cache_frontend_passes_and_artifact(timed, capfd):
    tlc.jit(_add)(256, 256)
    rows = _table_rows(capfd.readouterr().err)
    names = [name for _, name in rows]
    for stage in ("disk-cache lookup", "frontend: run the factory _add",
                  "frontend: add, Python AST -> tile IR", "artifact", "disk-cache write",
                  "load kernel (runtime)"):
        assert stage in names
    _check_every_pass(rows)
    tlc.jit(_add)(256, 256)  # a new factory: the disk cache answers
    assert [n for _, n in _table_rows(capfd.readouterr().err)][0] == "disk-cache lookup"


KERNEL_MODULE = """
import tlc
import tlc.language as T


@tlc.jit
def double(N):
    @T.prim_func
    def double(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            x = T.alloc_fragment((128,), "float32")
            T.copy(X[bx * 128], x)
            for i in T.Parallel(128):
                x[i] = x[i] * 2.0
            T.copy(x, Y[bx * 128])

    return double
"""


def test_a_timed_disk_cache_hit_loads_no_compiler(timed, tmp_path, monkeypatch, capfd):
    """Timing costs a disk-cache hit in a new process no import of the compiler."""
    (tmp_path / "timed_double.py").write_text(KERNEL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import timed_double

    timed_double.double(256)  # compiles and fills the disk cache
    capfd.readouterr()
    code = ("import sys, timed_double\n"
            "timed_double.double(256)\n"
            "print(any(m.startswith(('tlc._mlir_libs', 'tlc.compiler')) for m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"
    assert [n for _, n in _table_rows(r.stderr)][0] == "disk-cache lookup"


def test_tlc_timing_for_compile(timed, capfd):
    tlc.compile(_add(64, 64))
    rows = _table_rows(capfd.readouterr().err)
    _check_every_pass(rows)


def test_no_timing_without_the_variable(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TLC_TIMING", "0")
    tlc.jit(_add)(128, 128)
    assert capfd.readouterr().err == ""


def test_a_failing_pipeline_in_a_session_raises_and_restores_stderr(capfd):
    with pytest.raises(tlc.CompilationError, match="232448 per block"):
        with timing.session("big"):
            tlc.compiler.compile_text(SHARED_OVER_BUDGET, filename="big.mlir")
    assert "tlc timing: big" in capfd.readouterr().err
    os.write(2, b"fd 2 is stderr again\n")
    assert capfd.readouterr().err == "fd 2 is stderr again\n"
