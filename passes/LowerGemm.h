//===- LowerGemm.h - tile.gemm -> ldmatrix + mma.sync -----------*- C++ -*-===//

#ifndef TLC_PASSES_LOWERGEMM_H
#define TLC_PASSES_LOWERGEMM_H

#include "dialects/tile/TileDialect.h"
#include "passes/TileAccess.h"

namespace mlir::tile {

/// Lowers `op` in place: each warp loads its A and B sub-tiles from shared
/// memory with ldmatrix and accumulates with mma.sync m16n8k16 into the
/// registers `accRegs` of the C fragment (laid out as `accLayout`). When A is
/// a fragment, its registers `aRegs` (laid out as `aLayout`) are the operand.
LogicalResult lowerGemm(GemmOp op, const SharedBuffers &shared, Value tid,
                        int64_t threads, Value accRegs, LayoutAttr accLayout,
                        Value aRegs, LayoutAttr aLayout);

} // namespace mlir::tile

#endif // TLC_PASSES_LOWERGEMM_H
