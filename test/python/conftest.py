"""Shared pytest setup: GPU tests run only where a CUDA device and torch are."""

import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _children_import_this_tlc() -> None:
    """Python processes the tests start import the tlc the tests import (with
    `python -m pytest` in the checkout's root, the checkout's tlc/ comes from
    the working directory, which the tests change)."""
    import tlc

    root = os.path.dirname(os.path.dirname(os.path.abspath(tlc.__file__)))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root] + paths)


_children_import_this_tlc()


def _have_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _have_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU with driver and torch (none here)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(autouse=True)
def _no_stray_cwd(monkeypatch, tmp_path):
    """Tests run in a temporary folder so no output lands in the checkout."""
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("TLC_TEST", "1")


# ---- The runtime library and a fake CUDA driver (test_runtime.py, test_tensor_maps.py) ----

HAVE_GCC = shutil.which("gcc") is not None


@pytest.fixture(scope="session")
def runtime_lib(tmp_path_factory):
    """Build libtlc_runtime.so and point TLC_RUNTIME_LIB at it."""
    old = os.environ.get("TLC_RUNTIME_LIB")
    if HAVE_GCC:
        lib = tmp_path_factory.mktemp("rt") / "libtlc_runtime.so"
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Wextra",
                        "-Werror", str(REPO / "runtime/tlc_runtime.c"), "-ldl", "-lpthread",
                        "-o", str(lib)], check=True)
    else:  # no compiler (the GPU machine): a library built elsewhere
        import tlc.runtime as rt

        lib = pathlib.Path(old or pathlib.Path(rt.__file__).with_name("libtlc_runtime.so"))
        if not lib.is_file():
            pytest.skip("no gcc to build libtlc_runtime.so and no prebuilt one")
    os.environ["TLC_RUNTIME_LIB"] = str(lib)
    yield lib
    _restore_env("TLC_RUNTIME_LIB", old)


@pytest.fixture(scope="session")
def launch_module(tmp_path_factory):
    """Build the native launch path, tlc.runtime._launch (runtime/tlc_launch*.c),
    and point TLC_LAUNCH_MODULE at it (or at the built one beside tlc.runtime
    where there is no compiler; None where there is neither)."""
    import sysconfig

    old = os.environ.get("TLC_LAUNCH_MODULE")
    include = sysconfig.get_paths()["include"]
    if HAVE_GCC and os.path.isfile(os.path.join(include, "Python.h")):
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        module = tmp_path_factory.mktemp("launch") / f"_launch{suffix}"
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Wextra",
                        "-Werror", f"-I{include}", str(REPO / "runtime/tlc_launch.c"),
                        str(REPO / "runtime/tlc_launch_plan.c"), "-o",
                        str(module)], check=True)
    else:
        import tlc.runtime as rt

        found = sorted(pathlib.Path(rt.__file__).parent.glob("_launch.*"))
        module = pathlib.Path(old) if old else found[0] if found else None
    if module is not None:
        os.environ["TLC_LAUNCH_MODULE"] = str(module)
    yield module
    _restore_env("TLC_LAUNCH_MODULE", old)


def _restore_env(name: str, old: str | None) -> None:
    """Puts environment variable `name` back to `old` (None: unset)."""
    if old is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = old


def _build_fake_driver(folder: pathlib.Path, *flags: str) -> pathlib.Path:
    """libcuda.so.1 from test_runtime.FAKE_LIBCUDA, in folder."""
    if not HAVE_GCC:
        pytest.skip("needs gcc to build the fake libcuda.so.1")
    from test_runtime import FAKE_LIBCUDA

    (folder / "fake.c").write_text(FAKE_LIBCUDA)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", *flags, "-o",
                    str(folder / "libcuda.so.1"), str(folder / "fake.c")], check=True)
    return folder


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory, runtime_lib, launch_module):
    """A fake driver; the tests run with the native launch path where it is
    built (run_fake(native=False) turns it off)."""
    return _build_fake_driver(tmp_path_factory.mktemp("fakecuda"))


@pytest.fixture(scope="session")
def fake_driver_without_tma(tmp_path_factory, runtime_lib):
    """A fake driver older than CUDA 12.0: no cuTensorMapEncodeTiled."""
    return _build_fake_driver(tmp_path_factory.mktemp("fakecuda_old"), "-DFAKE_NO_TMA")
