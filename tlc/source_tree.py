"""Importing tlc from a checkout, whose tlc/ folder holds the Python sources
but not the native modules the build makes (tlc._mlir_libs, tlc.ir,
tlc.passmanager, tlc.dialects.*, runtime/libtlc_runtime.so).

When tlc/ has no _mlir_libs beside its __init__.py, the package's search path
is extended with the folder of a built tlc: the checkout's build tree
(build/python_packages/tlc) or else the installed distribution's folder. The
checkout's own modules still come first, so edits in tlc/ take effect; only
what tlc/ lacks is found there. With neither, importing a native module is an
ImportError of one line saying what to run.
"""

from __future__ import annotations

import os
import sys

NATIVE_MODULES = ("_mlir_libs", "ir", "passmanager", "rewrite", "extras", "dialects")
HOW_TO_BUILD = ("build it first: `bash tools/quickstart.sh` (or `pip install "
                "--no-build-isolation .`) in the checkout")


def _has_native_modules(folder: str) -> bool:
    return os.path.isdir(os.path.join(folder, "_mlir_libs"))


def built_package(package_dir: str) -> str | None:
    """The folder of a built tlc to take the native modules from, or None."""
    candidates = [os.path.join(os.path.dirname(package_dir), "build", "python_packages", "tlc")]
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        candidates.append(str(distribution("tlc").locate_file("tlc")))
    except (ImportError, PackageNotFoundError, OSError):
        pass
    for folder in candidates:
        try:
            if _has_native_modules(folder) and not os.path.samefile(folder, package_dir):
                return folder
        except OSError:
            continue
    return None


class _MissingNative:
    """Last on sys.meta_path: a native module nobody found is a clear error (a
    meta-path finder by its find_spec; importlib.abc would cost 20 ms here)."""

    def __init__(self, package_dir: str):
        self.package_dir = package_dir

    def find_spec(self, name, path=None, target=None):
        parts = name.split(".")
        if len(parts) > 1 and parts[0] == "tlc" and parts[1] in NATIVE_MODULES:
            raise ImportError(f"{name} is a native module, and the tlc imported from "
                              f"{self.package_dir} has none: {HOW_TO_BUILD}", name=name)
        return None


def extend(package_path: list[str]) -> None:
    """Lets a source-tree tlc (package_path: its __path__) import the native modules."""
    package_dir = package_path[0]
    if _has_native_modules(package_dir):
        return  # an installed or built package: complete as it is
    folder = built_package(package_dir)
    if folder is not None:
        package_path.append(folder)
    elif not any(isinstance(f, _MissingNative) for f in sys.meta_path):
        sys.meta_path.append(_MissingNative(package_dir))
