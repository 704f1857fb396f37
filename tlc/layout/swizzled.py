"""Layouts a program can ask for with T.annotate_layout (tilelang.layout)."""

from __future__ import annotations


class SwizzledLayout:
    """The XOR swizzle of a shared buffer (#tile.swizzle): 128-byte by default."""

    def __init__(self, bits: int = 3, base: int = 4, shift: int = 3, buffer=None):
        self.bits, self.base, self.shift = bits, base, shift
        self.buffer = buffer  # the buffer it was made for (T.annotate_layout checks it)

    def attr(self) -> str:
        return f"#tile.swizzle<bits = {self.bits}, base = {self.base}, shift = {self.shift}>"

    def __repr__(self) -> str:
        return f"SwizzledLayout({self.bits}, {self.base}, {self.shift})"


def make_swizzled_layout(buffer=None) -> SwizzledLayout:
    """The 128-byte swizzle that ldmatrix, wgmma and TMA all accept, made for
    `buffer` (a shared buffer of the program): T.annotate_layout rejects it
    on any other buffer."""
    from ..frontend.values import BufferRef

    if buffer is not None:
        if not isinstance(buffer, BufferRef):
            raise TypeError(f"make_swizzled_layout takes a shared buffer, got {buffer!r}")
        if buffer.place != "shared":
            raise TypeError(f"make_swizzled_layout takes a shared buffer; '{buffer.name}' is "
                            f"{buffer.place}")
    return SwizzledLayout(buffer=buffer)
