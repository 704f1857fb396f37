"""Layouts: the ones a program asks for, and the ones the compiler chose.

- `make_swizzled_layout(buffer)`: a swizzle for T.annotate_layout (tilelang.layout).
- `kernel.layouts()` / `kernel.layout(name)` (tlc.JITKernel): the layout of each
  fragment and shared buffer of a compiled kernel, as `FragmentLayout` (which
  thread and register hold each element) and `SharedLayout` (the address and
  bank of each element) objects.
- `plot(layout, "c.svg")` (TileLang's `plot_layout`): draws one as SVG or PNG.
"""

from .buffers import FragmentLayout, SharedLayout
from .errors import LayoutError
from .plot import plot, plot_layout
from .snapshot import kernel_layout, kernel_layouts, layouts_from_ir
from .swizzled import SwizzledLayout, make_swizzled_layout

__all__ = [
    "FragmentLayout", "LayoutError", "SharedLayout", "SwizzledLayout", "kernel_layout",
    "kernel_layouts", "layouts_from_ir", "make_swizzled_layout", "plot", "plot_layout",
]
