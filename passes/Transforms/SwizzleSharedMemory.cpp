//===- SwizzleSharedMemory.cpp - XOR-swizzle gemm operands ----------------===//
//
// ldmatrix reads one 16-byte chunk from each of 8 consecutive rows. With rows
// of 64 bytes or more those chunks sit a multiple of 64 bytes apart and fall
// into the same banks; XOR-ing the row bits into the chunk bits puts the 8
// chunks into 8 different 16-byte bank groups. The 16-byte copies that fill
// the buffer write whole rows per 8 threads and stay conflict-free too.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESWIZZLESHAREDMEMORY
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-swizzle-shared-memory"

std::optional<std::array<int64_t, 3>> mlir::tile::chooseSwizzle(MemRefType type) {
  int64_t rowBytes = type.getShape().back() * type.getElementTypeBitWidth() / 8;
  if (type.getRank() < 2 || type.getDimSize(type.getRank() - 2) < 8)
    return std::nullopt; // fewer than 8 rows: nothing for ldmatrix to collide on
  if (rowBytes >= 128 && llvm::isPowerOf2_64(rowBytes)) {
    // The XOR reads offset bits up to base + shift + bits - 1, which must stay
    // below bit 18 (SwizzleAttr's rule): wider rows get no swizzle, and the
    // shared-memory budget rejects such a buffer later, with the numbers.
    int64_t shift = llvm::Log2_64(rowBytes) - 4;
    if (4 + shift + 3 - 1 >= 18)
      return std::nullopt;
    return std::array<int64_t, 3>{3, 4, shift};
  }
  if (rowBytes == 64)
    return std::array<int64_t, 3>{2, 4, 3};
  if (rowBytes == 32)
    return std::array<int64_t, 3>{1, 4, 3};
  return std::nullopt;
}

namespace {

/// Swizzles the allocation `operand` is (or a stage of), unless the program
/// pinned it row-major; `forGemm`: a gemm reads it, which needs the swizzle
/// even where views name it (they address their bytes through it), while
/// other uses leave a viewed buffer row-major.
void swizzleOperand(Value operand, bool forGemm) {
  AllocSharedOp alloc = sharedAllocation(operand); // or a stage of one
  if (!alloc || alloc->hasAttr("tile.row_major") || (!forGemm && isViewed(alloc)))
    return; // not shared at all, or pinned row-major
  SharedLayoutAttr layout = sharedLayout(alloc);
  if (layout.getSwizzle())
    return; // annotated, or swizzled for another use already
  std::optional<std::array<int64_t, 3>> s = chooseSwizzle(alloc.getType());
  if (layout.getColumnBlock()) // rows of 128 bytes within each block
    s = std::array<int64_t, 3>{3, 4, 3};
  if (!s)
    return;
  alloc.setLayoutAttr(
      layout.withSwizzle(SwizzleAttr::get(alloc.getContext(), (*s)[0], (*s)[1], (*s)[2])));
}

struct TileSwizzleSharedMemory
    : mlir::tile::impl::TileSwizzleSharedMemoryBase<TileSwizzleSharedMemory> {
  void runOnOperation() final { swizzleSharedMemory(getOperation()); }
};

} // namespace

void mlir::tile::swizzleSharedMemory(ModuleOp module) {
  module.walk([](GemmOp gemm) {
    swizzleOperand(gemm.getA(), /*forGemm=*/true);
    swizzleOperand(gemm.getB(), /*forGemm=*/true);
  });
  // A tile an accumulator is stored into (an epilogue staged through shared
  // memory): each warp writes 4-byte pieces of 8 rows at once, which in rows
  // of 128 bytes or more all land in the same few banks; the swizzle spreads
  // them, and the 16-byte row copies that read the tile stay conflict-free.
  module.walk([](CopyOp copy) {
    if (!copy.getAsync() && getPlace(copy.getSrc().getType()) == Place::Fragment &&
        getPlace(copy.getDst().getType()) == Place::Shared)
      swizzleOperand(copy.getDst(), /*forGemm=*/false);
  });
}
