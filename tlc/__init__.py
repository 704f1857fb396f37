"""tlc: a tile-language compiler for NVIDIA GPUs.

`import tlc` stays light: the compiler (and its MLIR bindings) load on first
use, so `tlc.runtime` can launch precompiled kernels on a machine without the
compiler's native libraries. TileLang programs work with `import tlc as
tilelang` and `import tlc.language as T`.
"""

from __future__ import annotations

import importlib

from .errors import CompilationError

__version__ = "0.1.0"

__all__ = [
    "CompilationError", "JITKernel", "TensorSupplyType", "__version__", "compile", "compiler",
    "jit", "language", "layout", "runtime",
]

_LAZY = {
    "jit": ("jit", "jit"),
    "compile": ("jit", "compile"),
    "JITKernel": ("jit", "JITKernel"),
    "TensorSupplyType": ("profiler", "TensorSupplyType"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{module}", __name__), attr)
    if name in ("compiler", "runtime", "language", "layout", "frontend"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tlc' has no attribute '{name}'")
