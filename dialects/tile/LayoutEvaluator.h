//===- LayoutEvaluator.h - A #tile.layout map evaluated fast ----*- C++ -*-===//
//
// The loops that enumerate every (thread, register) pair of a layout (the
// coverage check, slices, equivalence) evaluate its affine map tens of
// thousands of times. LayoutAttr::apply walks the expression tree each time;
// this flattens the map's results once into a post-order list of nodes and
// evaluates them with one pass over an array.
//
//===----------------------------------------------------------------------===//

#ifndef TLC_DIALECTS_TILE_LAYOUTEVALUATOR_H
#define TLC_DIALECTS_TILE_LAYOUTEVALUATOR_H

#include "dialects/tile/TileDialect.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::tile {

class LayoutEvaluator {
public:
  explicit LayoutEvaluator(LayoutAttr layout);

  /// The indices `layout.apply(thread, reg)` gives, into `out` (resized).
  void apply(int64_t thread, int64_t reg, SmallVectorImpl<int64_t> &out);

private:
  struct Node {
    AffineExprKind kind;
    int64_t value; ///< a constant; for a dim, 0 = thread, 1 = register
    int32_t lhs, rhs;
  };
  int32_t flatten(AffineExpr expr);

  SmallVector<Node> nodes;
  SmallVector<int32_t> results;
  SmallVector<int64_t> values;
};

} // namespace mlir::tile

#endif // TLC_DIALECTS_TILE_LAYOUTEVALUATOR_H
