"""The wheel: tools/wheel_contents.py's rules on made-up file lists, and the
whole smoke test (tools/wheel_smoke.sh: build, install into a fresh virtual
environment, compile there) when TLC_WHEEL_SMOKE=1 asks for it."""

import importlib.util
import os
import stat
import subprocess
import sys
import zipfile

import pytest
from conftest import REPO

_spec = importlib.util.spec_from_file_location("wheel_contents",
                                               REPO / "tools" / "wheel_contents.py")
wheel_contents = importlib.util.module_from_spec(_spec)
sys.modules["wheel_contents"] = wheel_contents  # dataclasses look their module up there
_spec.loader.exec_module(wheel_contents)
Entry = wheel_contents.Entry

MiB = 1 << 20
SOURCES = {"tlc/__init__.py", "tlc/jit.py", "tlc/layout/__init__.py", "tlc/dialects/tile.py"}


def good_wheel() -> list:
    """The file list of a correct wheel for SOURCES."""
    return [Entry(name, 100) for name in sorted(SOURCES)] + [
        Entry("tlc/ir.py", 100),
        Entry("tlc/dialects/_tile_ops_gen.py", 100),
        Entry("tlc/dialects/arith.py", 100),
        Entry("tlc/_mlir_libs/__init__.py", 100),
        Entry("tlc/_mlir_libs/libTLCPythonCAPI.so", 96 * MiB, crc=1),
        Entry("tlc/_mlir_libs/libMLIRPythonSupport-tlc.so", 4 * MiB, crc=2),
        Entry("tlc/runtime/libtlc_runtime.so", 40000),
        Entry("tlc-0.1.0.data/scripts/tlc-opt", 36 * MiB, crc=3),
        Entry("tlc-0.1.0.dist-info/METADATA", 1000),
        Entry("tlc-0.1.0.dist-info/RECORD", 1000),
    ]


def test_a_correct_wheel_has_no_problems():
    assert wheel_contents.problems(good_wheel(), SOURCES) == []


def test_a_versioned_twin_of_the_native_library_is_a_problem():
    entries = good_wheel() + [Entry("tlc/_mlir_libs/libTLCPythonCAPI.so.22.1", 96 * MiB, crc=1)]
    found = wheel_contents.problems(entries, SOURCES)
    assert any("2 copies of libTLCPythonCAPI" in p for p in found)
    assert any(p.startswith("identical large files: tlc/_mlir_libs/libTLCPythonCAPI.so,")
               for p in found)


def test_identical_large_files_under_any_name_are_a_problem():
    entries = good_wheel() + [Entry("tlc/_mlir_libs/libMLIRPythonSupport-tlc.so.1", 4 * MiB,
                                    crc=2)]
    assert wheel_contents.problems(entries, SOURCES) == [
        ("identical large files: tlc/_mlir_libs/libMLIRPythonSupport-tlc.so, "
         "tlc/_mlir_libs/libMLIRPythonSupport-tlc.so.1")]


def test_no_native_library_is_a_problem():
    entries = [e for e in good_wheel() if "libTLCPythonCAPI" not in e.name]
    assert wheel_contents.problems(entries, SOURCES) == ["0 copies of libTLCPythonCAPI: none"]


def test_files_outside_the_package_are_problems():
    entries = good_wheel() + [Entry("lib/libTLCPasses.a", 100),
                              Entry("src/python/TLCPythonSources.Package/jit.py", 100),
                              Entry("tlc-0.1.0.data/data/share/x", 100)]
    assert wheel_contents.problems(entries, SOURCES) == [
        "lib/libTLCPasses.a: outside tlc/, .dist-info and .data/scripts",
        "src/python/TLCPythonSources.Package/jit.py: outside tlc/, .dist-info and .data/scripts",
        "tlc-0.1.0.data/data/share/x: outside tlc/, .dist-info and .data/scripts"]


def test_a_stale_module_beside_its_package_is_a_problem():
    entries = good_wheel() + [Entry("tlc/layout.py", 100)]
    assert wheel_contents.problems(entries, SOURCES) == [
        "tlc/layout.py: in the wheel but not in the checkout (stale)"]


def test_a_source_left_out_of_the_wheel_is_a_problem():
    entries = [e for e in good_wheel() if e.name != "tlc/layout/__init__.py"]
    assert wheel_contents.problems(entries, SOURCES) == [
        "tlc/layout/__init__.py: in the checkout but not in the wheel"]


def test_a_symlink_stored_in_the_wheel_is_a_problem(tmp_path):
    path = tmp_path / "tlc-0.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("tlc/__init__.py", "")
        link = zipfile.ZipInfo("tlc/_mlir_libs/libTLCPythonCAPI.so")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        wheel.writestr(link, "libTLCPythonCAPI.so.22.1")
    entries = wheel_contents.read_wheel(path)
    assert [e.symlink for e in entries] == [False, True]
    assert wheel_contents.problems(entries, {"tlc/__init__.py"}) == [
        "tlc/_mlir_libs/libTLCPythonCAPI.so: stored as a symbolic link"]


def test_checkout_sources_are_the_package_files():
    sources = wheel_contents.checkout_sources(REPO)
    assert {"tlc/__init__.py", "tlc/layout/__init__.py", "tlc/dialects/tile.py"} <= sources
    assert "tlc/layout.py" not in sources
    assert not any("__pycache__" in s for s in sources)


def test_the_command_exits_1_listing_the_problems(tmp_path):
    path = tmp_path / "tlc-0.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("tlc/__init__.py", "")
    result = subprocess.run([sys.executable, str(REPO / "tools" / "wheel_contents.py"),
                             str(path), str(REPO)], check=False, capture_output=True, text=True)
    assert result.returncode == 1
    assert "problem: 0 copies of libTLCPythonCAPI: none" in result.stderr
    assert "problem: tlc/jit.py: in the checkout but not in the wheel" in result.stderr


@pytest.mark.skipif(os.environ.get("TLC_WHEEL_SMOKE") != "1",
                    reason="builds and installs the wheel (~1-2 min): set TLC_WHEEL_SMOKE=1")
def test_wheel_installs_and_compiles():
    env = dict(os.environ)
    env.setdefault("TLC_VENV", sys.prefix)  # the environment running the tests built tlc
    result = subprocess.run(["bash", str(REPO / "tools" / "wheel_smoke.sh")], env=env,
                            check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "wheel smoke test passed" in result.stdout
