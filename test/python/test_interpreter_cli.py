"""`tlc run`: interpret a kernel on random inputs from the command line."""

import numpy as np
import pytest

from tlc.cli import main


def test_run_tile_kernel_and_save(repo, tmp_path, capsys):
    out = tmp_path / "t.npz"
    rc = main(["run", str(repo / "examples/elementwise.tile"), "--kernel", "vadd",
               "--size", "M=100", "--size", "N=300", "--seed", "3", "--save", str(out)])
    assert rc == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("interpreted vadd (the whole grid, seed 3) in ")
    assert lines[1].startswith("  C: 100x300 float32  min ")
    saved = np.load(out)
    np.testing.assert_array_equal(saved["C"], saved["A"] + saved["B"])
    assert saved["A"].shape == (100, 300)


def test_run_some_blocks_of_a_gemm(repo, capsys):
    rc = main(["run", str(repo / "examples/gemm.tile"), "--size", "M=256", "-D", "N=128",
               "-D", "K=64", "--block", "0,1"])
    assert rc == 0
    assert "interpreted gemm (blocks (0, 1), seed 0)" in capsys.readouterr().out


def test_run_errors(repo, tmp_path, capsys):
    mlir = str(repo / "examples/vadd.mlir")
    assert main(["run", mlir]) == 1
    assert "size M of 'A' is not known before the run: give it with --size M=N" in \
        capsys.readouterr().err
    assert main(["run", mlir, "--size", "M=4", "--size", "N=4", "--size", "Q=3"]) == 1
    assert "vadd has no size or scalar parameter named Q" in capsys.readouterr().err
    rc = main(["run", str(repo / "examples/gemm.tile"), "--size", "M=64", "--block", "0,7",
               "--save", str(tmp_path / "no.npz")])
    assert rc == 1
    err = capsys.readouterr().err
    assert "gemm.tile:18:10: error: tile.kernel: blocks: (0, 7) is not a block of the grid " \
           "(8, 1)" in err
    assert not (tmp_path / "no.npz").exists()


def test_run_usage_errors(repo):
    for argv in (["--size", "M"], ["--block", "a,b"], ["-D", "N=1"]):
        with pytest.raises(SystemExit) as e:
            main(["run", str(repo / "examples/vadd.mlir"), *argv])
        assert e.value.code == 2
