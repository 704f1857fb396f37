"""`from tilelang.contrib import nvcc`: the one query programs make of it,
`nvcc.get_target_compute_version()`. tlc runs no nvcc (it emits PTX in process)."""

from __future__ import annotations

__all__ = ["get_target_compute_version"]


def get_target_compute_version(target=None) -> str:
    """The compute version ("9.0") of `target` (an "sm_90a" / "cuda -arch=sm_90" string),
    else of the current CUDA device (torch), else of tlc's default target."""
    import re

    if target is None:
        try:
            import torch

            if torch.cuda.is_available():
                major, minor = torch.cuda.get_device_capability()
                return f"{major}.{minor}"
        except ImportError:
            pass
        from ..jit import _default_target

        target = _default_target()
    m = re.search(r"sm_(\d+)(\d)[a-z]?\b", str(target))
    if not m:
        raise ValueError(f"no sm_XX architecture in target {target!r}")
    return f"{m.group(1)}.{m.group(2)}"
