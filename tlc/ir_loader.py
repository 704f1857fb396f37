"""Imports tlc.ir (MLIR's upstream ir.py) without importing numpy.

MLIR's ir.py imports numpy at module level only to register four attribute
builders (dense F64 / I32 / I64 / Index elements from Python sequences) that
tlc's code never calls, and numpy's import is 70-90 ms of the first compile
of a process that has not loaded numpy (the `tlc` command, a script without
torch). So, while numpy is not loaded, tlc.ir runs with `import numpy`
failing (its ImportError branch skips those builders) and the same four
builders are registered here, importing numpy when one is first called.
Where numpy is loaded already, tlc.ir is imported as it is.

`install()` (from tlc/__init__.py) puts a finder for the one module name
`tlc.ir` in front of sys.meta_path; every other import is untouched.
"""

from __future__ import annotations

import importlib.machinery
import sys

_MODULE = "tlc.ir"


def _register_lazy_builders(ir) -> None:
    def dense(np_dtype: str, element_type):
        def build(x, context):
            import numpy as np

            return ir.DenseElementsAttr.get(np.array(x, dtype=getattr(np, np_dtype)),
                                            type=element_type(context), context=context)
        return build

    for kind, np_dtype, element_type in (
            ("F64ElementsAttr", "float64", lambda c: ir.F64Type.get(context=c)),
            ("I32ElementsAttr", "int32", lambda c: ir.IntegerType.get_signless(32, context=c)),
            ("I64ElementsAttr", "int64", lambda c: ir.IntegerType.get_signless(64, context=c)),
            ("IndexElementsAttr", "int64", lambda c: ir.IndexType.get(context=c))):
        ir.register_attribute_builder(kind, replace=True)(dense(np_dtype, element_type))


class _Loader:  # importlib.abc.Loader's protocol (importing importlib.abc costs ~30 ms)
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module) -> None:
        if "numpy" in sys.modules:
            self.inner.exec_module(module)
            return
        sys.modules["numpy"] = None  # `import numpy` raises ImportError meanwhile
        try:
            self.inner.exec_module(module)
        finally:
            if "numpy" in sys.modules and sys.modules["numpy"] is None:
                del sys.modules["numpy"]
        _register_lazy_builders(module)


class _Finder:  # importlib.abc.MetaPathFinder's protocol
    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Routes the import of tlc.ir through the loader above (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
