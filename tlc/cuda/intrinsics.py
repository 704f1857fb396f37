"""`from tilelang.cuda.intrinsics import make_mma_swizzle_layout`, under tlc's name."""

from ..layout.swizzled import make_mma_swizzle_layout

__all__ = ["make_mma_swizzle_layout"]
