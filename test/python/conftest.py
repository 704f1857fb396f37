"""Shared pytest setup: GPU tests run only where a CUDA device and torch are."""

import os
import pathlib

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
