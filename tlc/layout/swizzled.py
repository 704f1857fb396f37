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


class RowMajorLayout:
    """The plain row-major layout TileLang's make_mma_swizzle_layout gives a buffer it does
    not swizzle (`is_smooth`, or rows not a multiple of 64 bytes). T.annotate_layout pins the
    buffer row-major (`tile.row_major`): no swizzle, and a gemm reading it is an error (tlc
    lays gemm operands out itself)."""

    def __init__(self, buffer=None):
        self.buffer = buffer

    def __repr__(self) -> str:
        return "RowMajorLayout()"


def make_mma_swizzle_layout(shared_buf, is_smooth: bool = False):
    """TileLang's mma swizzle (tilelang.cuda.intrinsics): the XOR swizzle of 16-byte chunks
    within 128-byte row segments that ldmatrix reads without bank conflicts, for a shared
    buffer whose rows are a multiple of 64 bytes: 128-byte rows and longer take
    Swizzle<3, 4, 3>, 64-byte rows Swizzle<2, 4, 3>. `is_smooth`, or other rows: the
    row-major layout (RowMajorLayout)."""
    from ..dtypes import lookup
    from ..frontend.values import BufferRef

    if not isinstance(shared_buf, BufferRef) or shared_buf.place != "shared":
        raise TypeError(f"make_mma_swizzle_layout takes a shared buffer, got {shared_buf!r}")
    row_bytes = int(shared_buf.shape[-1]) * lookup(shared_buf.dtype).bits // 8
    if is_smooth or row_bytes % 64:
        return RowMajorLayout(buffer=shared_buf)
    return SwizzledLayout(3 if row_bytes >= 128 else 2, 4, 3, buffer=shared_buf)
