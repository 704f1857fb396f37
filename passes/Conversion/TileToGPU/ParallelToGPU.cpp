//===- ParallelToGPU.cpp - tile.parallel, tile.pipelined -> per-thread loops ===//
//
// A parallel loop runs, in each thread, the iterations of the elements its
// layout gives the thread: the body once per register, unrolled, with its
// fragment accesses on that register and its global accesses masked. A
// pipelined loop the pipeliner left as it is becomes an scf.for.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"
#include "dialects/tile/Layout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The memref and indices of an element access.
std::pair<Value, ValueRange> accessed(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return {load.getMemRef(), load.getIndices()};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return {store.getMemRef(), store.getIndices()};
  return {Value(), ValueRange()};
}

/// tile.parallel.
struct ParallelLowering : TileOpLowering<ParallelOp> {
  using TileOpLowering::TileOpLowering;

  LogicalResult matchAndRewrite(ParallelOp loop, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<LayoutAttr> layout = loop.getLayout();
    if (!layout)
      return loop.emitOpError("has no layout; run tile-infer-layout first");
    Block &body = loop.getBody().front();
    // Row vectors (m[i] in a loop over (i, j)) hold the loop's layout sliced
    // along the missing dimension: register r of the loop reads the row
    // register sourceToResult[r].
    DenseMap<Operation *, SmallVector<int64_t>> rowAccesses;
    WalkResult mismatch = loop.getBody().walk([&](Operation *op) {
      auto [memref, indices] = accessed(op);
      std::optional<Fragment> fragment =
          memref ? fragmentOf(memref, Value()) : std::optional<Fragment>();
      if (!fragment)
        return WalkResult::advance();
      if (indices.size() < body.getNumArguments()) {
        std::optional<int64_t> dim = droppedDim(indices, body.getArguments());
        std::string why;
        FailureOr<SlicedLayout> sliced =
            dim ? sliceLayout(*layout, loop.getShape(), *dim, why)
                : FailureOr<SlicedLayout>(failure());
        if (failed(sliced) || !equivalentLayouts(sliced->layout, fragment->layout)) {
          op->emitOpError("reads or writes a row fragment that does not hold "
                          "the rows of the loop's elements");
          return WalkResult::interrupt();
        }
        rowAccesses[op] = sliced->sourceToResult;
        return WalkResult::advance();
      }
      if (!equivalentLayouts(fragment->layout, *layout)) {
        op->emitOpError("reads or writes a fragment whose layout differs from "
                        "the parallel loop's; layout conversion is not "
                        "supported yet");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (mismatch.wasInterrupted())
      return failure();

    // Each thread runs the iterations of the elements it holds, unrolled so
    // register indices are constants.
    for (int64_t r = 0; r < layout->getRegs(); ++r) {
      IRMapping mapping;
      SmallVector<Value> index = applyLayout(rewriter, loop.getLoc(), *layout, info.tid, r);
      for (auto [iv, value] : llvm::zip(body.getArguments(), index))
        mapping.map(iv, value);
      // Clone the whole body first: rewriting an access replaces its uses,
      // which must all exist by then.
      SmallVector<Operation *> clones;
      for (Operation &op : body)
        clones.push_back(rewriter.clone(op, mapping));
      DenseMap<Operation *, int64_t> rowRegs;
      for (auto &[orig, regs] : rowAccesses)
        rowRegs[mapping.lookup(orig)] = regs[r];
      for (Operation *clone : clones)
        if (failed(rewriteAccesses(rewriter, clone, r, rowRegs)))
          return failure();
    }
    rewriter.eraseOp(loop);
    return success();
  }

  /// Redirects fragment accesses to register `reg` and guards global ones.
  LogicalResult rewriteAccesses(ConversionPatternRewriter &b, Operation *root, int64_t reg,
                                const DenseMap<Operation *, int64_t> &rowRegs) const {
    SmallVector<Operation *> accesses;
    root->walk([&](Operation *op) {
      if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp>(op))
        accesses.push_back(op);
    });
    for (Operation *op : accesses) {
      OpBuilder::InsertionGuard insertion(b);
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
        // T.atomic_add into a global tensor: outside it, nothing is added.
        if (getPlace(atomic.getMemRefType()) != Place::Global)
          return atomic.emitOpError("adds atomically into global tensors only");
        if (!atomic.getResult().use_empty())
          return atomic.emitOpError("returns the previous value, which tlc does not support");
        Value inside = insideBounds(b, loc, b.getRemappedValue(atomic.getMemref()),
                                    atomic.getIndices());
        auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
        b.moveOpBefore(op, guard.thenBlock()->getTerminator());
        continue;
      }
      auto load = dyn_cast<memref::LoadOp>(op);
      auto store = dyn_cast<memref::StoreOp>(op);
      auto [memref, indices] = accessed(op);
      if (std::optional<Fragment> fragment = fragmentOf(memref, b.getRemappedValue(memref))) {
        auto row = rowRegs.find(op); // a row vector: the register of this row
        Value r = arith::ConstantIndexOp::create(b, loc, row == rowRegs.end() ? reg : row->second);
        b.modifyOpInPlace(op, [&] {
          op->setOperand(load ? 0 : 1, fragment->regs);
          op->setOperands(load ? 1 : 2, indices.size(), ValueRange{r});
        });
        continue;
      }
      // Global tensors and local arrays (as the plain arrays they become).
      Value converted = b.getRemappedValue(memref);
      if (getPlace(cast<MemRefType>(converted.getType())) != Place::Global)
        continue;
      Value inside = insideBounds(b, loc, converted, indices);
      if (store) {
        auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
        b.moveOpBefore(op, guard.thenBlock()->getTerminator());
        continue;
      }
      Type elem = load.getType();
      auto guard = scf::IfOp::create(b, loc, TypeRange{elem}, inside,
                                     /*withElseRegion=*/true);
      b.setInsertionPointToEnd(guard.thenBlock());
      Operation *inThen = b.clone(*load);
      scf::YieldOp::create(b, loc, inThen->getResult(0));
      b.setInsertionPointToEnd(guard.elseBlock());
      scf::YieldOp::create(b, loc,
                           arith::ConstantOp::create(b, loc, elem, b.getZeroAttr(elem))
                               .getResult());
      b.replaceOp(load, guard.getResults());
    }
    return success();
  }
};

/// tile.pipelined (one tile-pipeline-loops left as it is): an scf.for.
struct PipelinedLowering : TileOpLowering<PipelinedOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(PipelinedOp loop, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto forOp = scf::ForOp::create(rewriter, loop.getLoc(), adaptor.getLowerBound(),
                                    adaptor.getUpperBound(), adaptor.getStep());
    forOp->setAttr("tile.num_stages", loop.getNumStagesAttr());
    Block &body = loop.getBody().front();
    Block *forBody = forOp.getBody();
    rewriter.inlineBlockBefore(&body, forBody->getTerminator(), forOp.getInductionVar());
    rewriter.eraseOp(loop);
    return success();
  }
};

} // namespace

void mlir::tile::populateParallelToGPUPatterns(const TypeConverter &converter,
                                               const KernelInfo &info,
                                               RewritePatternSet &patterns) {
  patterns.add<ParallelLowering,  // tile.parallel
               PipelinedLowering  // tile.pipelined
               >(converter, info);
}
