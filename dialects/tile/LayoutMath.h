//===- LayoutMath.h - Layout algebra: slicing a layout along a dimension -*- C++ -*-===//
//
// What reductions need to know about a fragment layout: which registers of a
// thread hold the same output element, which threads hold the other parts of
// it, and the (replicated) layout of the reduced fragment.
//
//===----------------------------------------------------------------------===//

#ifndef TLC_PASSES_LAYOUTMATH_H
#define TLC_PASSES_LAYOUTMATH_H

#include "dialects/tile/TileDialect.h"

#include <string>

namespace mlir::tile {

/// A layout sliced along one dimension: the layout of the tensor without that
/// dimension, held by the same threads.
struct SlicedLayout {
  /// The layout of the result, every element held by every thread that held
  /// a part of it.
  LayoutAttr layout;
  /// For each register of the source, the result register holding its slice.
  SmallVector<int64_t> sourceToResult;
  /// For each result register, the source registers sliced into it.
  SmallVector<SmallVector<int64_t>> resultToSources;
  /// Thread-index bits that move along the sliced dimension only, within a
  /// warp (lanes) and across warps: the threads a reduction must combine.
  int64_t laneMask = 0, warpMask = 0;
};

/// Slices `layout` (of a tile of `shape`) along `dim`; fails with the reason
/// when the registers holding one slice do not form an affine pattern.
FailureOr<SlicedLayout> sliceLayout(LayoutAttr layout, ArrayRef<int64_t> shape,
                                    int64_t dim, std::string &why);

/// Whether two layouts place every (thread, register) on the same element
/// (the same function, however their maps are written).
bool equivalentLayouts(LayoutAttr a, LayoutAttr b);

/// The loop dimension a row-vector access leaves out: `indices` must be the
/// loop indices `ivs` with exactly one removed.
std::optional<int64_t> droppedDim(ValueRange indices, ValueRange ivs);

} // namespace mlir::tile

#endif // TLC_PASSES_LAYOUTMATH_H
