"""Python started in the checkout's root imports the checkout's tlc/, which
takes the native modules from a built tlc (tlc/source_tree.py); without one,
importing them is a one-line ImportError saying what to run."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python(code: str, cwd: str, *args, python=(sys.executable,)):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([*python, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _built_tlc() -> str | None:
    """A built tlc the checkout can use: its build tree, or one installed."""
    build = os.path.join(REPO, "build", "python_packages", "tlc")
    if os.path.isdir(os.path.join(build, "_mlir_libs")):
        return build
    r = _python("from importlib.metadata import distribution as d; "
                "print(d('tlc').locate_file('tlc'))", "/")
    folder = r.stdout.strip()
    return folder if r.returncode == 0 and os.path.isdir(os.path.join(folder, "_mlir_libs")) \
        else None


def test_checkout_imports_and_compiles():
    if _built_tlc() is None:
        pytest.skip("no built tlc: neither build/python_packages/tlc nor an installed tlc "
                    f"for {sys.executable}")
    code = ("import sys, tlc, tlc.compiler, tlc.cli, tlc.runtime.driver as d\n"
            "print(tlc.__file__)\n"
            "print(d.library_path().exists())\n"
            "sys.exit(tlc.cli.main(sys.argv[1:]))\n")
    r = _python(code, REPO, "examples/elementwise.tile", "--kernel", "vadd")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == os.path.join(REPO, "tlc", "__init__.py")  # the checkout's sources
    assert lines[1] == "True"  # and the runtime library of the built one
    assert ".entry vadd(" in r.stdout


def test_without_a_built_tlc_the_error_says_what_to_run(tmp_path):
    """tlc/ with no build beside it, and no installed tlc in reach (python -S)."""
    os.symlink(os.path.join(REPO, "tlc"), tmp_path / "tlc")
    code = ("import tlc\n"
            "try:\n"
            "    import tlc.compiler\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    r = _python(code, str(tmp_path), python=[sys.executable, "-S"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"tlc.ir is a native module, and the tlc imported from "
                               f"{tmp_path / 'tlc'} has none: build it first: `bash "
                               "tools/quickstart.sh`")
    assert len(r.stdout.splitlines()) == 1
