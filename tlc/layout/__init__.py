"""Layouts: the ones a program asks for, and the ones the compiler chose.

- `make_swizzled_layout(buffer)`: a swizzle for T.annotate_layout (tilelang.layout);
  `make_mma_swizzle_layout(buffer, is_smooth=False)` TileLang's mma swizzle
  (tilelang.cuda.intrinsics, also `tlc.cuda.intrinsics`).
- `Fragment(shape, forward_fn=... | forward_thread_fn=..., forward_index_fn=...,
  replicate=1)` (also `T.Fragment`): a fragment's register layout for
  T.annotate_layout, as TileLang writes it (element -> thread, local index);
  `make_fully_replicated_layout_fragment`, `make_gemm_fragment_8x8` and
  `make_gemm_fragment_8x8_transposed` make common ones.
- `Layout(shape, forward_fn)` (also `T.Layout`): where a global tensor keeps its
  elements, for T.annotate_layout (tlc.layout.index_map).
- `kernel.layouts()` / `kernel.layout(name)` (tlc.JITKernel): the layout of each
  fragment and shared buffer of a compiled kernel, as `FragmentLayout` (which
  thread and register hold each element) and `SharedLayout` (the address and
  bank of each element) objects.
- `plot(layout, "c.svg")` (TileLang's `plot_layout`): draws one as SVG or PNG
  (a `Fragment` too).
"""

from .buffers import FragmentLayout, SharedLayout
from .errors import LayoutError
from .fragment import (Fragment, make_fully_replicated_layout_fragment, make_gemm_fragment_8x8,
                       make_gemm_fragment_8x8_transposed)
from .index_map import Layout
from .plot import plot, plot_layout
from .snapshot import kernel_layout, kernel_layouts, layouts_from_ir
from .swizzled import RowMajorLayout, SwizzledLayout, make_mma_swizzle_layout, make_swizzled_layout

__all__ = [
    "Fragment", "FragmentLayout", "Layout", "LayoutError", "SharedLayout", "SwizzledLayout",
    "kernel_layout", "kernel_layouts", "layouts_from_ir", "make_fully_replicated_layout_fragment",
    "make_gemm_fragment_8x8", "make_gemm_fragment_8x8_transposed", "make_mma_swizzle_layout",
    "make_swizzled_layout", "RowMajorLayout",
    "plot", "plot_layout",
]
