"""Layouts a program can ask for with T.annotate_layout (tilelang.layout)."""

from __future__ import annotations


class SwizzledLayout:
    """The XOR swizzle of a shared buffer (#tile.swizzle): 128-byte by default."""

    def __init__(self, bits: int = 3, base: int = 4, shift: int = 3):
        self.bits, self.base, self.shift = bits, base, shift

    def attr(self) -> str:
        return f"#tile.swizzle<bits = {self.bits}, base = {self.base}, shift = {self.shift}>"

    def __repr__(self) -> str:
        return f"SwizzledLayout({self.bits}, {self.base}, {self.shift})"


def make_swizzled_layout(buffer=None) -> SwizzledLayout:
    """The 128-byte swizzle that ldmatrix, wgmma and TMA all accept."""
    return SwizzledLayout()
