//===- LowerCopy.h - tile.copy -> per-thread loads and stores ----*- C++ -*-===//

#ifndef TLC_PASSES_LOWERCOPY_H
#define TLC_PASSES_LOWERCOPY_H

#include "dialects/tile/TileDialect.h"
#include "passes/Conversion/TileToGPU/TileAccess.h"

namespace mlir::tile {

/// A fragment as lowered: each thread's registers and the layout filling them.
struct Fragment {
  Value regs;
  LayoutAttr layout;
};

/// The lowered fragments of a kernel, by their tile.alloc_fragment value.
using Fragments = DenseMap<Value, Fragment>;

/// Emits the per-thread code of `copy` before it (the caller erases it). A
/// copy with a `tile.staging_offset` goes through that shared buffer of the
/// block's dynamic shared memory `smem` (registered in `shared`, swizzled).
LogicalResult lowerCopy(CopyOp copy, Value tid, int64_t threads, Value smem,
                        const Fragments &fragments, SharedBuffers &shared);

} // namespace mlir::tile

#endif // TLC_PASSES_LOWERCOPY_H
