"""tlc: a tile-language compiler for NVIDIA GPUs.

`import tlc` stays light: the compiler (and its MLIR bindings) load on first
use, so `tlc.runtime` can launch precompiled kernels on a machine without the
compiler's native libraries. TileLang programs work with `import tlc as
tilelang` and `import tlc.language as T`.
"""

from __future__ import annotations

import importlib

from .source_tree import extend as _extend_from_checkout

_extend_from_checkout(__path__)  # imported from a checkout: find the native modules built

from .ir_loader import install as _install_ir_loader  # noqa: E402

_install_ir_loader()  # tlc.ir without numpy (tlc/ir_loader.py)

from .errors import CompilationError  # noqa: E402

from .version import __version__

# tlc.jit is a module and a function: import the module now (it is light: it
# loads the compiler only when it compiles) so that the name `tlc.jit` is the
# function. Imported lazily, the import system would set the attribute to the
# module after __getattr__ had returned the function once.
from .jit import JITKernel, compile, jit  # noqa: E402,A004
from .pass_config import PassConfigKey  # noqa: E402
from .host import cdiv  # noqa: E402
from .cache_control import disable_cache, enable_cache, is_cache_enabled  # noqa: E402

__all__ = [
    "AutoTuner", "CompilationError", "DataType", "JITKernel", "PassConfigKey", "TensorSupplyType",
    "__version__", "autotune", "autotuner", "cdiv", "compile", "compiler", "disable_cache",
    "enable_cache", "interpret", "interpreter", "is_cache_enabled", "jit", "language", "layout",
    "math", "profiler", "runtime", "testing", "utils",
]

_LAZY = {
    "TensorSupplyType": ("utils.tensor", "TensorSupplyType"),
    "autotune": ("autotuner", "autotune"),
    "DataType": ("language.types", "DataType"),
    "AutoTuner": ("autotuner", "AutoTuner"),
    "interpret": ("interpreter", "interpret"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    if name in ("compiler", "runtime", "language", "layout", "frontend", "profiler",
                "testing", "utils", "autotuner", "interpreter", "math", "cuda", "contrib",
                "engine", "tirx", "carver"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tlc' has no attribute '{name}'")
