"""The example programs under examples/ imported as modules, for the tests
that check their kernels (each example stays a script a user runs)."""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> ModuleType:
    """examples/<name>.py as a module named example_<name> (a name in a folder,
    `families/gemv`, as example_families_gemv)."""
    module_name = "example_" + name.replace("/", "_")
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
