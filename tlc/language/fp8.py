"""`tilelang.language.fp8`'s helper: the fp8 dtype of the platform.

On NVIDIA GPUs (tlc's only targets) fp8 is OCP's: E4M3FN and E5M2. AMD's
FNUZ variants do not exist here.
"""

from __future__ import annotations

from .types import dtype, float8_e4m3fn, float8_e5m2

_FORMATS = {"e4m3": float8_e4m3fn, "e5m2": float8_e5m2}


def determine_fp8_type(fp8_format: str = "e4m3") -> dtype:
    """The fp8 dtype for `fp8_format` ("e4m3": T.float8_e4m3fn, "e5m2":
    T.float8_e5m2).

    Example: `dtype = determine_fp8_type("e5m2")`
    """
    if fp8_format not in _FORMATS:
        raise ValueError(f"unsupported fp8 format {fp8_format!r}: use 'e4m3' or 'e5m2'")
    return _FORMATS[fp8_format]


def determine_torch_fp8_type(fp8_format: str = "e4m3"):
    """The torch dtype of `determine_fp8_type(fp8_format)` (needs torch)."""
    return determine_fp8_type(fp8_format).as_torch()
