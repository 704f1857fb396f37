"""The GPU targets tlc compiles for.

The table of architectures, their features and limits is C++'s
(`#tile.target`, dialects/tile/TileTarget.cpp); a compiled module carries its
target as the `tile.target` attribute, which every pass reads. Python keeps
only the architecture's name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .._mlir_libs import _site_initialize_0 as _native
from ..errors import CompilationError
from ..pass_config import FAST_MATH, NO_STREAM_K, NO_TMA

#: The architectures tlc knows (from the C++ table).
TARGETS: tuple[str, ...] = tuple(_native.known_targets().split(", "))

DEFAULT_TARGET = "sm_90a"

#: The PTX ISA version the NVPTX backend emits (8.1: vector reductions; ptxas 13.0
#: accepts up to 9.0).
PTX_FEATURES = "+ptx81"


#: NO_TMA: the suffix of a target name whose TMA feature is turned off
#: (TileLang's tl.disable_tma_lower / tl.disable_warp_specialized): sm_90a GEMMs
#: then keep the cp.async pipeline instead of a warp-specialized TMA producer.

#: sm_90a's features without TMA, as #tile.target spells them.
_NO_TMA_FEATURES = "[cp_async, mma_sync, wgmma, setmaxnreg, cluster, vector_reduce, fp8_convert]"


@dataclass(frozen=True)
class Target:
    """An NVIDIA GPU architecture as the compiler sees it."""

    arch: str  # e.g. "sm_90a"
    tma: bool = True  # False: the target's TMA feature is turned off
    fast_math: bool = False  # FAST_MATH: contraction, approximations, f32 denormals flushed
    stream_k: bool = True  # False (NO_STREAM_K): persistent GEMMs without stream-K

    @property
    def chip(self) -> str:
        return self.arch

    @property
    def name(self) -> str:
        """The name get_target reads back (cache keys use it)."""
        return (self.arch + ("" if self.tma else NO_TMA) + ("" if self.stream_k else NO_STREAM_K)
                + (FAST_MATH if self.fast_math else ""))

    @property
    def attribute_text(self) -> str:
        """The module attribute that names this target."""
        if not self.tma:
            return f'#tile.target<"{self.arch}", features = {_NO_TMA_FEATURES}>'
        return f'#tile.target<"{self.arch}">'


def get_target(arch: str | Target | None) -> Target:
    """The Target for an architecture name ("sm_90a", "sm_80", ...; with
    NO_TMA appended, the architecture without its TMA feature; with
    NO_STREAM_K appended after that, compiled without stream-K; with FAST_MATH
    appended last, compiled with fast math)."""
    if isinstance(arch, Target):
        return arch
    if arch and arch.endswith(FAST_MATH):
        return replace(get_target(arch[:-len(FAST_MATH)]), fast_math=True)
    if arch and arch.endswith(NO_STREAM_K):
        base = get_target(arch[:-len(NO_STREAM_K)])
        if base.arch != "sm_90a":
            raise CompilationError(f"target '{arch}': only sm_90a has stream-K to turn off")
        return replace(base, stream_k=False)
    if arch and arch.endswith(NO_TMA):
        base = get_target(arch[:-len(NO_TMA)])
        if base.arch != "sm_90a":
            raise CompilationError(f"target '{arch}': only sm_90a has TMA copies to turn off")
        return Target(base.arch, tma=False)
    arch = arch or DEFAULT_TARGET
    if arch not in TARGETS:
        raise CompilationError(
            f"unknown target '{arch}' (known targets: {', '.join(sorted(TARGETS))})")
    return Target(arch)
