"""Test helpers with TileLang's names (`tilelang.testing`).

`requires_cuda` and `requires_cuda_compute_version*` are pytest skip marks
(pytest is imported when one is used); `set_random_seed` seeds Python, numpy
and torch when it is installed; `main()` runs pytest on the calling file.
"""

from __future__ import annotations

import random
import sys

from .utils.tensor import torch_assert_close

__all__ = [
    "main", "requires_cuda", "requires_cuda_compute_version", "requires_package",
    "requires_cuda_compute_version_eq", "requires_cuda_compute_version_ge",
    "requires_cuda_compute_version_gt", "requires_cuda_compute_version_le",
    "requires_cuda_compute_version_lt", "set_random_seed", "torch_assert_close",
]


def set_random_seed(seed: int = 42) -> None:
    """Seeds Python's random, numpy and (when installed) torch on the CPU and every GPU."""
    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def _cuda_capability():
    """(major, minor) of the current CUDA device, or None without torch or a GPU."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    return tuple(torch.cuda.get_device_capability())


def _skip_unless(ok: bool, reason: str):
    import pytest

    return pytest.mark.skipif(not ok, reason=reason)


def requires_package(*names: str):
    """Skips a test unless every named package imports: `@requires_package("flash_attn")`."""
    import importlib.util

    missing = [n for n in names if importlib.util.find_spec(n) is None]
    return _skip_unless(not missing, f"needs the package(s) {', '.join(missing)}")


def requires_cuda(func=None):
    """Skips a test where torch sees no CUDA device: `@requires_cuda` or `@requires_cuda()`."""
    mark = _skip_unless(_cuda_capability() is not None, "needs a CUDA device and torch")
    return mark(func) if func is not None else mark


_MODES = {"eq": lambda a, b: a == b, "ge": lambda a, b: a >= b, "gt": lambda a, b: a > b,
          "le": lambda a, b: a <= b, "lt": lambda a, b: a < b}


def requires_cuda_compute_version(major: int, minor: int = 0, mode: str = "ge"):
    """Skips a test unless the device's compute capability compares to
    (major, minor) by `mode` ("eq", "ge", "gt", "le", "lt")."""
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
    cap = _cuda_capability()
    ok = cap is not None and _MODES[mode](cap, (major, minor))
    found = f"sm_{cap[0]}{cap[1]}" if cap else "no CUDA device"
    return _skip_unless(ok, f"needs compute capability {mode} {major}.{minor} ({found})")


def requires_cuda_compute_version_eq(major: int, minor: int = 0):
    return requires_cuda_compute_version(major, minor, "eq")


def requires_cuda_compute_version_ge(major: int, minor: int = 0):
    return requires_cuda_compute_version(major, minor, "ge")


def requires_cuda_compute_version_gt(major: int, minor: int = 0):
    return requires_cuda_compute_version(major, minor, "gt")


def requires_cuda_compute_version_le(major: int, minor: int = 0):
    return requires_cuda_compute_version(major, minor, "le")


def requires_cuda_compute_version_lt(major: int, minor: int = 0):
    return requires_cuda_compute_version(major, minor, "lt")


def main() -> None:
    """Runs pytest on the file that calls it (`if __name__ == "__main__":
    tlc.testing.main()`), with the command line's extra arguments; exits with
    pytest's status."""
    import pytest

    caller = sys._getframe(1).f_globals.get("__file__")
    if caller is None:
        raise RuntimeError("tlc.testing.main() runs the tests of the file that calls it; "
                           "call it from a file")
    raise SystemExit(pytest.main([caller, *sys.argv[1:]]))
