//===- LowerReduce.h - tile.reduce -> registers, shuffles, shared memory -*- C++ -*-===//

#ifndef TLC_PASSES_LOWERREDUCE_H
#define TLC_PASSES_LOWERREDUCE_H

#include "dialects/tile/TileDialect.h"

namespace mlir::tile {

/// Lowers `op` in place: each thread combines the registers of a row, then
/// the threads of a warp holding the same rows combine with xor shuffles,
/// then (when several warps hold parts of a row) the warps combine through
/// the shared scratch at the op's `tile.scratch_offset` in `smem`.
LogicalResult lowerReduce(ReduceOp op, Value tid, Value smem, Value srcRegs,
                          LayoutAttr srcLayout, Value dstRegs, LayoutAttr dstLayout);

} // namespace mlir::tile

#endif // TLC_PASSES_LOWERREDUCE_H
