//===- TileOpsBinding.td - Python bindings of the tile ops -*- tablegen -*-===//
#ifndef TLC_PYTHON_TILE_OPS_BINDING
#define TLC_PYTHON_TILE_OPS_BINDING
include "dialects/tile/TileOps.td"
#endif
