"""The GPU targets tlc compiles for.

The table of architectures, their features and limits is C++'s
(`#tile.target`, dialects/tile/TileTarget.cpp); a compiled module carries its
target as the `tile.target` attribute, which every pass reads. Python keeps
only the architecture's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._mlir_libs import _site_initialize_0 as _native
from ..errors import CompilationError

#: The architectures tlc knows (from the C++ table).
TARGETS: tuple[str, ...] = tuple(_native.known_targets().split(", "))

DEFAULT_TARGET = "sm_90a"

#: The PTX ISA version the NVPTX backend emits (ptxas 13.0 accepts up to 9.0).
PTX_FEATURES = "+ptx80"


@dataclass(frozen=True)
class Target:
    """An NVIDIA GPU architecture as the compiler sees it."""

    arch: str  # e.g. "sm_90a"

    @property
    def chip(self) -> str:
        return self.arch

    @property
    def attribute_text(self) -> str:
        """The module attribute that names this target."""
        return f'#tile.target<"{self.arch}">'


def get_target(arch: str | Target | None) -> Target:
    """The Target for an architecture name ("sm_90a", "sm_80", ...)."""
    if isinstance(arch, Target):
        return arch
    arch = arch or DEFAULT_TARGET
    if arch not in TARGETS:
        raise CompilationError(
            f"unknown target '{arch}' (known targets: {', '.join(sorted(TARGETS))})")
    return Target(arch)
