"""Names the on-chip buffers of the "optimized" IR snapshot.

The frontend gives each `T.alloc_shared` / `T.alloc_fragment` the location
`loc("A_shared"("file.py":12:9))`: a NameLoc around the statement's position.
The passes keep an allocation's location when they rebuild it (the
multi-buffered copy tile-pipeline-loops makes, a fragment converted around a
loop), but not its attributes, and the printed snapshot shows no locations.
So after the tile passes the compiler writes the names where the snapshot
shows them, as discardable attributes that nothing downstream reads:

    %0 = tile.alloc_shared {layout = #tile.shared<stages = 2, ...>, offset = 0 : i64,
                            tile.name = "A_shared"} : memref<2x128x32xf16, ...>

`tile.name` is the program's variable; tlc.layout reads it beside the
buffer's #tile.shared layout (stages, column blocks, swizzle).
"""

from __future__ import annotations

from .. import ir

ALLOCS = ("tile.alloc_shared", "tile.alloc_fragment")


def buffer_name(location: ir.Location) -> str | None:
    """The name of a NameLoc (possibly inside a callsite or fused one), else None."""
    if location.is_a_name():
        return location.name_str
    if location.is_a_fused():
        for inner in location.locations:
            name = buffer_name(inner)
            if name is not None:
                return name
    return None


def name_buffers(module: ir.Module) -> None:
    """Puts `tile.name` on the allocations of `module`."""
    context = module.context

    def visit(op):
        if op.name in ALLOCS:
            name = buffer_name(op.location)
            if name is not None:
                op.attributes["tile.name"] = ir.StringAttr.get(name, context)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
