//===- InferLayout.cpp - Assign a layout to every fragment ----------------===//
//
// First version: fragments get blocked layouts sized for 16-byte accesses;
// parallel loops take the layout of the fragments they index. Tensor-core
// layouts (from tile.gemm) will seed the propagation ahead of these defaults.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Mma.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEINFERLAYOUT
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-infer-layout"

namespace {

int64_t elementBytes(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

/// The vector width (in elements) that makes the fragment's copies 16 bytes
/// wide on the narrowest element type it is copied to or from.
int64_t preferredVector(AllocFragmentOp alloc) {
  int64_t bytes = elementBytes(alloc.getType().getElementType());
  for (Operation *user : alloc->getUsers())
    if (auto copy = dyn_cast<CopyOp>(user)) {
      Value other = copy.getSrc() == alloc.getResult() ? copy.getDst() : copy.getSrc();
      bytes = std::min(bytes, elementBytes(
                                  cast<MemRefType>(other.getType()).getElementType()));
    }
  return 16 / bytes;
}

/// The fragment a memref.load/store in a parallel body indexes, if any.
std::optional<std::pair<AllocFragmentOp, Operation *>>
getFragmentAccess(Operation *op) {
  Value memref;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    memref = load.getMemRef();
  else if (auto store = dyn_cast<memref::StoreOp>(op))
    memref = store.getMemRef();
  else
    return std::nullopt;
  auto alloc = memref.getDefiningOp<AllocFragmentOp>();
  if (!alloc)
    return std::nullopt;
  return std::make_pair(alloc, op);
}

LogicalResult inferFragment(AllocFragmentOp alloc) {
  if (alloc.getLayout())
    return success();
  auto kernel = alloc->getParentOfType<KernelOp>();
  std::string why;
  FailureOr<LayoutAttr> layout =
      LayoutAttr::getBlocked(alloc.getContext(), alloc.getType().getShape(),
                             kernel.getThreads(), preferredVector(alloc), why);
  if (failed(layout))
    return alloc.emitOpError("has no layout for ")
           << kernel.getThreads() << " threads: " << why;
  alloc.setLayoutAttr(*layout);
  return success();
}

LogicalResult inferParallel(ParallelOp loop) {
  if (loop.getLayout())
    return success();
  Block &body = loop.getBody().front();
  std::optional<std::pair<AllocFragmentOp, Operation *>> first;
  WalkResult result = loop.getBody().walk([&](Operation *op) {
    auto access = getFragmentAccess(op);
    if (!access)
      return WalkResult::advance();
    auto [alloc, use] = *access;
    ValueRange indices = isa<memref::LoadOp>(use)
                             ? cast<memref::LoadOp>(use).getIndices()
                             : cast<memref::StoreOp>(use).getIndices();
    if (alloc.getType().getShape() != loop.getShape() ||
        !llvm::equal(indices, body.getArguments())) {
      use->emitOpError("indexes a fragment of shape ")
          << alloc.getType() << " with other than the loop's own indices; a "
          << "parallel loop over a fragment must index it by (i, j, ...) "
          << "exactly, with the loop's shape";
      return WalkResult::interrupt();
    }
    if (!first) {
      first = access;
      return WalkResult::advance();
    }
    if (first->first.getLayoutAttr() != alloc.getLayoutAttr()) {
      InFlightDiagnostic diag =
          use->emitOpError("reads or writes a fragment whose layout differs "
                           "from another fragment in the same parallel loop");
      diag.attachNote(first->second->getLoc()) << "the other fragment's access";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (first) {
    loop.setLayoutAttr(first->first.getLayoutAttr());
    return success();
  }
  // No fragment: spread the iterations so consecutive threads take
  // consecutive elements (coalesced when the body reads global memory).
  auto kernel = loop->getParentOfType<KernelOp>();
  std::string why;
  FailureOr<LayoutAttr> layout = LayoutAttr::getBlocked(
      loop.getContext(), loop.getShape(), kernel.getThreads(), 1, why);
  if (failed(layout))
    return loop.emitOpError("cannot spread its iterations over ")
           << kernel.getThreads() << " threads: " << why;
  loop.setLayoutAttr(*layout);
  return success();
}

/// Gives a gemm's accumulator the tensor-core layout its lowering needs.
LogicalResult inferGemm(GemmOp gemm) {
  auto alloc = gemm.getC().getDefiningOp<AllocFragmentOp>();
  if (!alloc)
    return gemm.emitOpError("C must come from tile.alloc_fragment in this kernel");
  auto kernel = gemm->getParentOfType<KernelOp>();
  std::string why;
  FailureOr<WarpPartition> part = partitionGemm(gemm, kernel.getThreads(), why);
  if (failed(part))
    return gemm.emitOpError(why);
  LayoutAttr layout =
      getAccumulatorLayout(gemm.getContext(), *part, kernel.getThreads());
  if (!alloc.getLayout()) {
    alloc.setLayoutAttr(layout);
    return success();
  }
  if (alloc.getLayoutAttr() == layout)
    return success();
  InFlightDiagnostic diag = gemm.emitOpError(
      "needs C in the tensor-core accumulator layout, but C already has "
      "another layout (from another gemm or an annotation)");
  diag.attachNote(alloc.getLoc()) << "C is allocated here";
  return diag;
}

struct TileInferLayout : mlir::tile::impl::TileInferLayoutBase<TileInferLayout> {
  void runOnOperation() final {
    if (failed(inferLayouts(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::inferLayouts(ModuleOp module) {
  // Tensor-core layouts first: they are fixed by the hardware, the rest adapt.
  WalkResult gemms = module.walk([](GemmOp gemm) {
    return failed(inferGemm(gemm)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (gemms.wasInterrupted())
    return failure();
  WalkResult fragments = module.walk([](AllocFragmentOp alloc) {
    return failed(inferFragment(alloc)) ? WalkResult::interrupt()
                                        : WalkResult::advance();
  });
  if (fragments.wasInterrupted())
    return failure();
  WalkResult loops = module.walk([](ParallelOp loop) {
    return failed(inferParallel(loop)) ? WalkResult::interrupt()
                                       : WalkResult::advance();
  });
  return failure(loops.wasInterrupted());
}
