"""tlc: a tile-language compiler for NVIDIA GPUs.

`import tlc` stays light: the compiler (and its MLIR bindings) load on first
use, so `tlc.runtime` can launch precompiled kernels on a machine without
the compiler's native libraries.
"""

from __future__ import annotations

import importlib

from .errors import CompilationError

__version__ = "0.1.0"

__all__ = ["CompilationError", "__version__", "compile", "compiler", "runtime"]


def compile(source, target: str | None = None, name: str | None = None):
    """Compiles tile IR (an `ir.Module` or its text) for `target` (default
    sm_90a) and returns the launchable `tlc.runtime.Kernel` named `name`
    (the only one when the module has one)."""
    from . import compiler, runtime

    if isinstance(source, str):
        compiled = compiler.compile_text(source, target)
    else:
        compiled = compiler.compile_module(source, target)
    return runtime.Kernel.from_dict(compiled.artifact(name))


def __getattr__(name: str):
    if name in ("compiler", "runtime"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tlc' has no attribute '{name}'")
