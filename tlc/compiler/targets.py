"""The GPU targets tlc compiles for and their limits."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CompilationError


@dataclass(frozen=True)
class Target:
    """An NVIDIA GPU architecture as the compiler sees it."""

    arch: str  # e.g. "sm_90a"
    ptx_features: str  # PTX ISA version the NVPTX backend emits
    max_shared_bytes: int  # dynamic shared memory a block may opt into
    max_threads: int = 1024

    @property
    def chip(self) -> str:
        return self.arch

    @property
    def wgmma(self) -> bool:
        """Whether gemms that qualify run on Hopper's wgmma (sm_90a only:
        the 'a' features are not forward compatible)."""
        return self.arch == "sm_90a"


# Shared memory per block (opt-in maximum) from the CUDA programming guide's
# compute-capability table: 227 KB on sm_90, 163 KB on sm_80, 99 KB on sm_86/89.
TARGETS = {
    "sm_90a": Target("sm_90a", "+ptx80", 232448),
    "sm_90": Target("sm_90", "+ptx80", 232448),
    "sm_89": Target("sm_89", "+ptx80", 101376),
    "sm_86": Target("sm_86", "+ptx80", 101376),
    "sm_80": Target("sm_80", "+ptx80", 166912),
}

DEFAULT_TARGET = "sm_90a"


def get_target(arch: str | Target | None) -> Target:
    """The Target for an architecture name ("sm_90a", "sm_80", ...)."""
    if isinstance(arch, Target):
        return arch
    arch = arch or DEFAULT_TARGET
    if arch not in TARGETS:
        known = ", ".join(sorted(TARGETS))
        raise CompilationError(f"unknown target '{arch}' (known targets: {known})")
    return TARGETS[arch]
