//===- TileAttrsBinding.td - Python enums of the tile attrs -*- tablegen -*-===//
#ifndef TLC_PYTHON_TILE_ATTRS_BINDING
#define TLC_PYTHON_TILE_ATTRS_BINDING
include "dialects/tile/TileAttrs.td"
#endif
