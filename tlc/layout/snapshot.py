"""Reads the buffers' layouts from a kernel's "optimized" IR snapshot.

After the tile passes every on-chip buffer is one line of the snapshot:

    %2 = tile.alloc_fragment {layout = #tile.layout<threads = 128, regs = 128,
           map = (d0, d1) -> (...)>, tile.name = "C_local"} : memref<128x128xf32, ...>
    %0 = tile.alloc_shared {layout = #tile.shared<stages = 2, swizzle = <bits = 3,
           base = 4, shift = 3>>, offset = 0 : i64, tile.name = "A_shared"}
           : memref<2x128x32xf16, ...>

`tile.name` is the program's variable (tlc.compiler.buffer_names writes it);
buffers without one (made by the compiler, or in hand-written tile IR) are
named by their SSA value (`%2`). A name met twice (a fragment the compiler
converted around a loop keeps its name; two kernels of one program) is
`name`, then `name#2`, `name#3`.
"""

from __future__ import annotations

import re

from .buffers import FragmentLayout, SharedLayout, dtype_name
from .errors import LayoutError

_ALLOC = re.compile(r"^\s*(?P<ssa>%[\w$.-]+) = tile\.alloc_(?P<kind>shared|fragment)"
                    r"\s*(?P<attrs>\{.*\})?\s*:\s*(?P<type>memref<.*>)\s*$")
_LAYOUT = re.compile(r"^#tile\.layout<threads = (\d+), regs = (\d+), map = (.*)>$")
_SHARED = re.compile(r"^#tile\.shared<(?:stages = (?P<stages>\d+))?(?:, )?"
                     r"(?:column_block = (?P<block>\d+))?(?:, )?"
                     r"(?:swizzle = (?:#tile\.swizzle)?<bits = (?P<bits>\d+), base = (?P<base>\d+), "
                     r"shift = (?P<shift>\d+)>)?>$")


def layouts_from_ir(text: str) -> dict[str, FragmentLayout | SharedLayout]:
    """{buffer name: layout} of the fragments and shared buffers in the text of
    an "optimized" snapshot, in the order the IR allocates them."""
    from .. import ir
    from ..compiler import new_context

    found: dict = {}
    lines = [m for m in map(_ALLOC.match, text.splitlines()) if m]
    if not lines:
        return found
    with new_context():
        for m in lines:
            attrs = ir.DictAttr(ir.Attribute.parse(m["attrs"] or "{}"))
            name = ir.StringAttr(attrs["tile.name"]).value if "tile.name" in attrs \
                else m["ssa"]
            unique, n = name, 1
            while unique in found:
                n += 1
                unique = f"{name}#{n}"
            memref = ir.MemRefType(ir.Type.parse(m["type"]))
            shape = list(memref.shape)
            element = str(memref.element_type)
            if m["kind"] == "fragment":
                found[unique] = _fragment(unique, attrs, shape, element)
            else:
                found[unique] = _shared(unique, attrs, shape, memref.element_type, element)
    return found


def _fragment(name: str, attrs, shape, element: str) -> FragmentLayout:
    if "layout" not in attrs:
        raise LayoutError(f"fragment '{name}' has no layout in the snapshot (its IR is from "
                          "before tile-infer-layout)")
    m = _LAYOUT.match(str(attrs["layout"]))
    if not m:
        raise LayoutError(f"fragment '{name}': cannot read its layout {attrs['layout']}")
    return FragmentLayout(shape, int(m[1]), int(m[2]), m[3], dtype_name(element), name)


def _shared(name: str, attrs, shape, element_type, element: str) -> SharedLayout:
    from .. import ir

    swizzle, block, stages = None, 0, 1
    if "layout" in attrs:
        m = _SHARED.match(str(attrs["layout"]))
        if not m:
            raise LayoutError(f"shared buffer '{name}': cannot read its layout "
                              f"{attrs['layout']}")
        if m["bits"] is not None:
            swizzle = (int(m["bits"]), int(m["base"]), int(m["shift"]))
        block = int(m["block"] or 0)
        if m["stages"] is not None:
            stages, shape = int(m["stages"]), shape[1:]
    offset = ir.IntegerAttr(attrs["offset"]).value if "offset" in attrs else 0
    bits = element_type.width if hasattr(element_type, "width") else _bits(element)
    return SharedLayout(shape, dtype_name(element), max(1, bits // 8), swizzle, offset,
                        stages, block, name)


def _bits(element: str) -> int:
    m = re.search(r"(\d+)", element)
    if not m:
        raise LayoutError(f"cannot tell the size of element type {element}")
    return int(m[1])


def kernel_layouts(kernel) -> dict[str, FragmentLayout | SharedLayout]:
    """{buffer name: layout} of a compiled kernel (a tlc.JITKernel), read from
    its "optimized" IR snapshot."""
    stages = getattr(kernel, "stages", None)
    name = getattr(kernel, "name", type(kernel).__name__)
    if not isinstance(stages, dict):
        raise LayoutError(f"{kernel!r} is not a compiled kernel (tlc.JITKernel): its layouts "
                          "are read from the IR the compiler kept")
    if not stages.get("optimized"):
        raise LayoutError(f"kernel '{name}' has no 'optimized' IR snapshot (it has: "
                          f"{', '.join(stages) or 'none'}); compile it with tlc.jit or "
                          "tlc.compile to read its layouts")
    return layouts_from_ir(stages["optimized"])


def kernel_layout(kernel, buffer: str) -> FragmentLayout | SharedLayout:
    """The layout of one buffer of a compiled kernel, by its name in the program."""
    if not isinstance(buffer, str):
        raise LayoutError(f"a buffer is named by a string, got {buffer!r}")
    found = kernel.layouts() if hasattr(kernel, "layouts") else kernel_layouts(kernel)
    if buffer not in found:
        known = ", ".join(found) or "none"
        raise LayoutError(f"kernel '{kernel.name}' has no fragment or shared buffer named "
                          f"'{buffer}' (its buffers: {known})")
    return found[buffer]
