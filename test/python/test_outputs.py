"""Safe outputs: the `tlc` command's -o, save_artifact, and reading inputs
and artifacts that are missing, not regular or damaged. Every failure is one
line naming the path (exit 1 for the command), with nothing left behind."""

import json
import os
import stat
import subprocess
import sys

import pytest

from tlc import output, runtime
from tlc.cli import main
from tlc.runtime import ArtifactError

from test_runtime import vadd_dict


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def tlc_cmd(capfd):
    """Runs the `tlc` command in this process (a new process costs a second)."""

    def run(*args):
        capfd.readouterr()
        try:
            rc = main(list(args))
        except SystemExit as e:
            rc = e.code
        out, err = capfd.readouterr()
        return Result(rc, out, err)

    return run


@pytest.fixture
def vadd(repo, tmp_path):
    path = tmp_path / "in.mlir"
    path.write_text((repo / "examples/vadd.mlir").read_text())
    return path


def one_line_error(r, *fragments):
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.startswith(".tlc-")]


def test_dev_null_is_written_through_not_replaced(vadd, tlc_cmd):
    before = os.stat("/dev/null")
    r = tlc_cmd(str(vadd), "-o", "/dev/null")
    assert r.returncode == 0, r.stderr
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_dev_stdout_writes_to_stdout(vadd, tlc_cmd):
    r = tlc_cmd(str(vadd), "-o", "/dev/stdout")
    assert r.returncode == 0 and ".entry vadd(" in r.stdout


def test_output_equal_to_input_is_refused(vadd, tmp_path, tlc_cmd):
    text = vadd.read_text()
    one_line_error(tlc_cmd(str(vadd), "-o", str(vadd)), str(vadd), "it is the input file")
    os.symlink(vadd, tmp_path / "alias.mlir")
    one_line_error(tlc_cmd(str(tmp_path / "alias.mlir"), "-o", str(vadd)), "input file")
    assert vadd.read_text() == text


def test_symlink_output_is_not_followed(vadd, tmp_path, tlc_cmd):
    (tmp_path / "real.ptx").write_text("keep")
    os.symlink(tmp_path / "real.ptx", tmp_path / "link.ptx")
    one_line_error(tlc_cmd(str(vadd), "-o", str(tmp_path / "link.ptx")), "symbolic link")
    assert (tmp_path / "real.ptx").read_text() == "keep"
    assert os.path.islink(tmp_path / "link.ptx")
    os.symlink(tmp_path / "nowhere.ptx", tmp_path / "dangling.ptx")
    one_line_error(tlc_cmd(str(vadd), "-o", str(tmp_path / "dangling.ptx")), "symbolic link")
    assert not (tmp_path / "nowhere.ptx").exists()


@pytest.mark.parametrize("case", ["directory", "empty", "missing dir", "not a dir",
                                  "too long", "read-only", "full"])
def test_write_failures_are_one_line_naming_the_path(vadd, tmp_path, case, tlc_cmd):
    paths = {
        "directory": str(tmp_path), "empty": "", "missing dir": str(tmp_path / "no/x.ptx"),
        "not a dir": str(vadd) + "/x.ptx", "too long": str(tmp_path / ("a" * 300)),
        "read-only": str(tmp_path / "ro" / "x.ptx"), "full": "/dev/full",
    }
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    if case == "read-only" and os.geteuid() == 0:
        paths[case] = "/sys/x.ptx"  # root writes into a 0555 folder; sysfs refuses files
    path = paths[case]
    line = one_line_error(tlc_cmd(str(vadd), "-o", path), f"cannot write '{path}'")
    assert line.startswith("tlc: error: ")
    assert leftovers(tmp_path) == []


def test_closed_or_full_stdout(vadd):
    r = subprocess.run(f"{sys.executable} -m tlc.cli {vadd} >&-", shell=True,
                       capture_output=True, text=True)
    one_line_error(r, "standard output", "closed")
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "tlc.cli", str(vadd)], stdout=full,
                           stderr=subprocess.PIPE, text=True)
    one_line_error(r, "standard output", "No space left")


def test_output_mode_follows_umask(vadd, tmp_path):
    out = tmp_path / "out.ptx"
    old = os.umask(0o027)
    try:
        assert main([str(vadd), "-o", str(out)]) == 0
        assert out.stat().st_mode & 0o777 == 0o640
        os.umask(0o002)
        assert main([str(vadd), "-o", str(out)]) == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o664 and leftovers(tmp_path) == []


def test_fifo_output_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    output.write_output(str(fifo), "hello\n")
    assert reader.communicate(timeout=10)[0] == b"hello\n"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_fifo_and_non_utf8_inputs(tmp_path, tlc_cmd):
    fifo = tmp_path / "in.mlir"
    os.mkfifo(fifo)
    one_line_error(tlc_cmd(str(fifo)), str(fifo), "a FIFO")
    bad = tmp_path / "bad.mlir"
    bad.write_bytes(b"module {\n}\n// \xff\xfe\n")
    one_line_error(tlc_cmd(str(bad)), str(bad), "line 3 is not UTF-8")
    one_line_error(tlc_cmd(str(tmp_path / "none.mlir")), "none.mlir")


def test_non_utf8_tile_file_names_file_and_line(tmp_path, tlc_cmd):
    bad = tmp_path / "bad.tile"
    bad.write_bytes(b"# ok\nX = 1  # \xe9t\xe9\n")
    line = one_line_error(tlc_cmd(str(bad)), f"{bad}:2:")
    assert "not UTF-8" in line


# ---- save_artifact / load_artifact ------------------------------------------------------------


def test_save_artifact_refuses_devices_and_directories(tmp_path):
    with pytest.raises(output.OutputError, match="it is a directory"):
        runtime.save_artifact(vadd_dict(), tmp_path)
    runtime.save_artifact(vadd_dict(), "/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(OSError, match="No such file"):  # an OutputError is an OSError
        runtime.save_artifact(vadd_dict(), tmp_path / "no" / "k.tlcart")
    assert leftovers(tmp_path) == []


def test_load_artifact_failures_name_the_path(tmp_path):
    missing = tmp_path / "missing.tlcart"
    with pytest.raises(ArtifactError, match=f"cannot read artifact '{missing}'"):
        runtime.load_artifact(missing)
    deep = tmp_path / "deep.tlcart"
    deep.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ArtifactError, match=f"{deep}: .*nest"):
        runtime.load_artifact(deep)
    nested_check = dict(vadd_dict(), check=json.loads("[" * 900 + "]" * 900))
    nested = tmp_path / "nested.tlcart"
    nested.write_text(json.dumps(nested_check))
    try:
        runtime.load_artifact(nested)  # deep but legal: loads, or a clear error
    except ArtifactError as e:
        assert str(nested) in str(e)
    fifo = tmp_path / "fifo.tlcart"
    os.mkfifo(fifo)
    with pytest.raises(ArtifactError, match="a FIFO"):
        runtime.load_artifact(fifo)
    with pytest.raises(ArtifactError, match="a directory"):
        runtime.load_artifact(tmp_path)


def test_kernel_from_deeply_nested_metadata():
    nested = []
    for _ in range(100000):
        nested = [nested]
    with pytest.raises(ArtifactError, match="nested too deeply"):
        runtime.Kernel.from_dict(dict(vadd_dict(), check=nested))
