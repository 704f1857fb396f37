"""Assembling generated PTX with ptxas, which is on PATH on the project's
machines and in CI (CUDA 13.0). Where it is absent (a checkout without CUDA)
the assembly step is skipped, with a message saying so; the PTX checks before
it still ran."""

import shutil
import subprocess

import pytest


def assemble(ptx: str, arch: str, tmp_path, stack: bool = False) -> str:
    """ptxas accepts `ptx` for `arch` with no spills and no stack frame unless
    `stack` (printf's argument buffer lives on the stack, as does a fragment
    indexed at run time: then a few bytes of spills too), and every setmaxnreg
    kept; returns ptxas's report."""
    ptxas = shutil.which("ptxas")
    if not ptxas:
        pytest.skip("ptxas is not installed here: PTX checked, not assembled")
    path = tmp_path / "k.ptx"
    path.write_text(ptx)
    r = subprocess.run([ptxas, f"-arch={arch}", "-v", str(path), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert stack or "0 bytes spill stores" in r.stderr, r.stderr
    assert stack or "0 bytes stack frame" in r.stderr, r.stderr
    assert "'setmaxnreg' ignored" not in r.stderr, r.stderr
    return r.stderr
