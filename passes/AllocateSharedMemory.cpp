//===- AllocateSharedMemory.cpp - Place shared buffers --------------------===//

#include "passes/LayoutMath.h"
#include "passes/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEALLOCATESHAREDMEMORY
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-allocate-shared-memory"

namespace {

int64_t bufferBytes(MemRefType type) {
  int64_t bits = type.getNumElements() * type.getElementTypeBitWidth();
  return llvm::divideCeil(bits, 8);
}

LogicalResult allocateKernel(KernelOp kernel, int64_t maxBytes) {
  int64_t end = 0;
  SmallVector<AllocSharedOp> allocs;
  kernel.walk([&](AllocSharedOp alloc) {
    // The swizzle pattern repeats every 1024 bytes, so swizzled buffers start
    // on a 1024-byte boundary; the rest on 128 bytes (a TMA box's need).
    int64_t align = alloc.getSwizzle() ? 1024 : 128;
    int64_t offset = llvm::alignTo(end, align);
    alloc.setOffsetAttr(IntegerAttr::get(IntegerType::get(alloc.getContext(), 64), offset));
    end = offset + bufferBytes(alloc.getType());
    allocs.push_back(alloc);
  });
  // Reductions across warps exchange partial results through shared memory:
  // one slot per result element and warp group.
  kernel.walk([&](ReduceOp reduce) {
    auto src = reduce.getSrc().getDefiningOp<AllocFragmentOp>();
    if (!src || !src.getLayout())
      return WalkResult::advance(); // the lowering reports it
    std::string why;
    FailureOr<SlicedLayout> sliced = sliceLayout(
        src.getLayoutAttr(), src.getType().getShape(), reduce.getDim(), why);
    if (failed(sliced) || !sliced->warpMask)
      return WalkResult::advance();
    int64_t groups = int64_t(1) << llvm::popcount(uint64_t(sliced->warpMask));
    int64_t bytes = reduce.getDst().getType().getNumElements() * groups * 4;
    int64_t offset = llvm::alignTo(end, 128);
    reduce->setAttr("tile.scratch_offset",
                    IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), offset));
    end = offset + bytes;
    return WalkResult::advance();
  });
  // A fragment whose registers hold short runs (an mma accumulator: 2
  // elements) would be stored to global memory in pieces of 4 or 8 bytes;
  // staged through shared memory the block writes whole 16-byte vectors.
  // Staging is added only where the budget has room for it.
  kernel.walk([&](CopyOp copy) {
    auto frag = copy.getSrc().getDefiningOp<AllocFragmentOp>();
    MemRefType dst = copy.getDst().getType();
    if (!frag || !frag.getLayout() || copy.getAsync() || getPlace(dst) != Place::Global)
      return;
    int64_t bytes = std::max<int64_t>(1, dst.getElementTypeBitWidth() / 8);
    SmallVector<int64_t> tile = copy.getTileShape();
    if (tile.size() != 2 || tile.back() * bytes % 16 != 0 ||
        frag.getLayoutAttr().getContiguousRun() * bytes >= 16)
      return;
    int64_t offset = llvm::alignTo(end, 1024);
    int64_t size = tile[0] * tile[1] * bytes;
    if (offset + size > maxBytes)
      return;
    copy->setAttr("tile.staging_offset",
                  IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), offset));
    end = offset + size;
  });
  // A copy between fragments whose layouts place elements differently (an
  // accumulator cast into another gemm's A operand with another warp
  // partition) goes through shared memory: each thread stores its registers,
  // the block meets, each thread loads the ones its new layout gives it.
  // Unlike staging for speed this one is needed: it counts against the
  // budget like a buffer.
  SmallVector<CopyOp> conversions;
  kernel.walk([&](CopyOp copy) {
    auto src = copy.getSrc().getDefiningOp<AllocFragmentOp>();
    auto dst = copy.getDst().getDefiningOp<AllocFragmentOp>();
    if (!src || !dst || !src.getLayout() || !dst.getLayout() ||
        equivalentLayouts(src.getLayoutAttr(), dst.getLayoutAttr()))
      return;
    int64_t bytes = std::max<int64_t>(1, dst.getType().getElementTypeBitWidth() / 8);
    int64_t offset = llvm::alignTo(end, 1024);
    copy->setAttr("tile.staging_offset",
                  IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), offset));
    end = offset + dst.getType().getNumElements() * bytes;
    conversions.push_back(copy);
  });
  kernel->setAttr("tile.shared_bytes",
                  IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), end));
  if (end <= maxBytes)
    return success();
  InFlightDiagnostic diag = kernel.emitError()
                            << "the kernel needs " << end
                            << " bytes of shared memory but the target allows "
                            << maxBytes << " per block";
  for (AllocSharedOp alloc : allocs)
    diag.attachNote(alloc.getLoc())
        << bufferBytes(alloc.getType()) << " bytes for this "
        << alloc.getType() << " buffer";
  for (CopyOp copy : conversions)
    diag.attachNote(copy.getLoc())
        << bufferBytes(copy.getDst().getType())
        << " bytes to convert the layout of this fragment copy";
  return failure();
}

struct TileAllocateSharedMemory
    : mlir::tile::impl::TileAllocateSharedMemoryBase<TileAllocateSharedMemory> {
  using Base::Base;
  void runOnOperation() final {
    if (failed(allocateSharedMemory(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::allocateSharedMemory(ModuleOp module) {
  WalkResult result = module.walk([&](KernelOp kernel) {
    FailureOr<TargetAttr> target = TargetAttr::require(kernel, DEBUG_TYPE);
    if (failed(target))
      return WalkResult::interrupt();
    return failed(allocateKernel(kernel, target->getSharedBytes())) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
