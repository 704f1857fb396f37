"""The example programs under examples/ imported as modules, for the tests
that check their kernels (each example stays a script a user runs)."""

from __future__ import annotations

import importlib.util
import pathlib
from types import ModuleType

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> ModuleType:
    """examples/<name>.py as a module named example_<name>."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
