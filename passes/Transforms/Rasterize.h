//===- Rasterize.h - Block renumbering for T.use_swizzle --------*- C++ -*-===//

#ifndef TLC_PASSES_TRANSFORMS_RASTERIZE_H
#define TLC_PASSES_TRANSFORMS_RASTERIZE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::tile {

/// The attribute T.use_swizzle puts on a tile.kernel: {panel_size, order}.
constexpr llvm::StringLiteral kRasterizationAttr = "tile.rasterization";

/// Renumbers the blocks (ids[0], ids[1]) of a gx x gy grid as `attr` (a
/// kRasterizationAttr) says: consecutive blocks walk panels of `panel_size`
/// rows ("row") or columns ("col"), snaking between panels, so that blocks
/// running together share operand tiles in L2.
void rasterize(OpBuilder &b, Location loc, DictionaryAttr attr, Value gx, Value gy,
               SmallVector<Value> &ids);

} // namespace mlir::tile

#endif // TLC_PASSES_TRANSFORMS_RASTERIZE_H
