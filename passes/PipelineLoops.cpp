//===- PipelineLoops.cpp - Multi-buffer and overlap T.Pipelined loops -----===//
//
// A tile.pipelined loop whose body starts by copying global tiles into shared
// buffers (the producers) is rewritten so those copies run L = num_stages - 1
// iterations ahead as cp.async into num_stages-deep buffers:
//
//   prologue:  for s < L: issue iteration s's copies into stage s; commit
//   loop i:    wait until iteration i's copies landed (<= L-1 groups pending)
//              barrier (stage i complete for all; stage i-1 no longer read)
//              issue iteration i+L's copies into stage (i+L) % S; commit
//              the rest of the body, reading stage i % S
//   after:     wait for all groups
//
// A wgmma gemm of the body that leaves D groups pending (its #tile.mma depth)
// still reads the stages of the D iterations before: the copies then run
// L = num_stages - 1 - D ahead, so the stage a copy overwrites was last read
// by wgmmas that every warpgroup waited for before the barrier; after the
// loop a wgmma wait for all groups precedes any use of the accumulators.
//
// The copies of iterations past the end are predicated off (they read
// nothing and zero a stage no iteration reads) rather than branched around,
// so the loop body stays one basic block that ptxas schedules as a whole:
// the cp.async issue interleaves with the tensor-core work. Every iteration
// still commits a group, so the wait count stays uniform; a loop of fewer
// than S-1 iterations is correct too. Loops that do not have this shape are
// left as they are.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/TileAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPIPELINELOOPS
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-pipeline-loops"

namespace {

/// A global -> shared copy at the top of a pipelined body, and the pure ops
/// in the body that compute its operands (from the induction variable).
struct Producer {
  CopyOp copy;
  AllocSharedOp buffer;
  SetVector<Operation *> slice;
};

/// Collects the in-body ops `value` depends on; fails on anything impure.
bool collectSlice(Value value, Block &body, SetVector<Operation *> &slice) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != &body)
    return true; // defined outside the loop, or the induction variable
  if (!isPure(def))
    return false;
  for (Value operand : def->getOperands())
    if (!collectSlice(operand, body, slice))
      return false;
  slice.insert(def);
  return true;
}

/// The producers of `loop`, or none when the loop does not have the shape
/// this pass pipelines.
SmallVector<Producer> findProducers(PipelinedOp loop) {
  Block &body = loop.getBody().front();
  SmallVector<Producer> producers;
  DenseSet<Operation *> buffers;
  for (Operation &op : body) {
    auto copy = dyn_cast<CopyOp>(&op);
    if (!copy)
      continue;
    auto buffer = copy.getDst().getDefiningOp<AllocSharedOp>();
    MemRefType src = copy.getSrc().getType();
    if (!buffer || getPlace(src) != Place::Global || copy.getAsync() ||
        src.getElementType() != buffer.getType().getElementType() ||
        buffers.contains(buffer))
      continue;
    // Every use of the buffer is in this loop, none before the copy.
    bool ok = llvm::all_of(buffer->getUses(), [&](OpOperand &use) {
      Operation *user = body.findAncestorOpInBlock(*use.getOwner());
      return user && (user == copy || copy->isBeforeInBlock(user));
    });
    Producer p{copy, buffer, {}};
    for (Value operand : copy->getOperands())
      ok &= collectSlice(operand, body, p.slice);
    if (!ok)
      continue;
    buffers.insert(buffer);
    producers.push_back(std::move(p));
  }
  return producers;
}

/// Emits the producers' copies for iteration `iv`, into stage `stage`, as
/// async copies predicated on `inside`.
void issue(OpBuilder &b, ArrayRef<Producer> producers, Value oldIv, Value iv,
           Value stage, Value inside,
           const DenseMap<Operation *, AllocSharedOp> &staged) {
  IRMapping mapping;
  mapping.map(oldIv, iv);
  for (Producer p : producers) {
    for (Operation *op : p.slice)
      if (!mapping.contains(op->getResult(0)))
        b.clone(*op, mapping);
    AllocSharedOp all = staged.lookup(p.buffer);
    Value view = StageOp::create(b, p.copy.getLoc(), p.buffer.getType(), all, stage);
    mapping.map(p.copy.getDst(), view);
    auto copy = cast<CopyOp>(b.clone(*p.copy, mapping));
    copy.setAsync(true);
    copy.getPredMutable().assign(inside);
  }
}

/// The most wgmma groups a gemm of `loop`'s body leaves pending.
int64_t pendingWgmma(PipelinedOp loop) {
  int64_t depth = 0;
  for (auto gemm : loop.getBody().front().getOps<GemmOp>())
    if (MmaAttr mma = gemm.getMmaAttr())
      depth = std::max(depth, mma.getDepth());
  return depth;
}

void pipeline(PipelinedOp loop, ArrayRef<Producer> producers) {
  int64_t stages = loop.getNumStages();
  int64_t pending = pendingWgmma(loop);
  int64_t ahead = stages - 1 - pending; // tile-select-mma keeps this >= 1
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto cst = [&](OpBuilder &ob, int64_t v) {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };

  // S-deep buffers, allocated where the originals were.
  DenseMap<Operation *, AllocSharedOp> staged;
  for (Producer p : producers) {
    OpBuilder ab(p.buffer);
    MemRefType type = p.buffer.getType();
    SmallVector<int64_t> shape{stages};
    llvm::append_range(shape, type.getShape());
    auto all = AllocSharedOp::create(
        ab, p.buffer.getLoc(),
        MemRefType::get(shape, type.getElementType(), MemRefLayoutAttrInterface(),
                        type.getMemorySpace()),
        p.buffer.getSwizzleAttr(), IntegerAttr());
    if (Attribute block = p.buffer->getAttr(kColumnBlockAttr)) // wgmma's B blocks
      all->setAttr(kColumnBlockAttr, block);
    staged[p.buffer] = all;
  }

  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(), step = loop.getStep();
  Value oldIv = loop.getBody().getArgument(0);
  auto guarded = [&](OpBuilder &ob, Value iv, Value stage) {
    Value inside = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::slt, iv, ub);
    issue(ob, producers, oldIv, iv, stage, inside, staged);
    NVVM::CpAsyncCommitGroupOp::create(ob, loc);
  };

  // Prologue: iterations 0 .. L-1.
  for (int64_t s = 0; s < ahead; ++s) {
    Value iv = arith::AddIOp::create(b, loc, lb,
                                     arith::MulIOp::create(b, loc, step, cst(b, s)));
    guarded(b, iv, cst(b, s));
  }

  // Steady state.
  auto forOp = scf::ForOp::create(b, loc, lb, ub, step);
  forOp->setAttr("tile.num_stages", loop.getNumStagesAttr());
  OpBuilder fb = OpBuilder::atBlockTerminator(forOp.getBody());
  Value iv = forOp.getInductionVar();
  Value i = arith::DivSIOp::create(fb, loc, arith::SubIOp::create(fb, loc, iv, lb), step);
  Value stage = arith::RemSIOp::create(fb, loc, i, cst(fb, stages));
  NVVM::CpAsyncWaitGroupOp::create(fb, loc, fb.getI32IntegerAttr(ahead - 1));
  gpu::BarrierOp::create(fb, loc);
  Value aheadIv = arith::AddIOp::create(
      fb, loc, iv, arith::MulIOp::create(fb, loc, step, cst(fb, ahead)));
  Value aheadStage = arith::RemSIOp::create(
      fb, loc, arith::AddIOp::create(fb, loc, i, cst(fb, ahead)), cst(fb, stages));
  guarded(fb, aheadIv, aheadStage);

  // The rest of the body reads this iteration's stage.
  IRMapping mapping;
  mapping.map(oldIv, iv);
  for (Producer p : producers)
    mapping.map(p.buffer.getResult(),
                StageOp::create(fb, loc, p.buffer.getType(), staged[p.buffer], stage));
  DenseSet<Operation *> skip;
  for (Producer p : producers)
    skip.insert(p.copy);
  for (Operation &op : loop.getBody().front())
    if (!skip.contains(&op))
      fb.clone(op, mapping);

  b.setInsertionPointAfter(forOp);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
  if (pending > 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  loop.erase();
  for (Producer p : producers)
    p.buffer.erase();
}

struct TilePipelineLoops : mlir::tile::impl::TilePipelineLoopsBase<TilePipelineLoops> {
  void runOnOperation() final {
    if (failed(pipelineLoops(getOperation())))
      signalPassFailure();
  }
};

/// Checks, before anything is unrolled, that `stages` copies of the
/// producers' buffers fit in the target's shared memory.
LogicalResult checkDepth(PipelinedOp loop, MutableArrayRef<Producer> producers) {
  int64_t perStage = 0;
  for (Producer &p : producers) {
    MemRefType type = p.buffer.getType();
    perStage += type.getNumElements() * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  }
  TargetAttr target = TargetAttr::lookup(loop);
  int64_t limit = target ? target.getSharedBytes() : 232448;
  int64_t stages = loop.getNumStages(), total = 0;
  if (!llvm::MulOverflow(stages, perStage, total) && total <= limit)
    return success();
  return loop.emitOpError("num_stages = ")
         << stages << " keeps " << stages << " copies of " << perStage
         << " bytes of shared buffers, more than the " << limit << " bytes a block has"
         << (target ? " on " + target.getArch().str() : std::string());
}

} // namespace

SmallVector<Value> mlir::tile::pipelinedBuffers(PipelinedOp loop) {
  SmallVector<Value> buffers;
  if (loop.getNumStages() < 2)
    return buffers;
  for (Producer &p : findProducers(loop))
    buffers.push_back(p.buffer.getResult());
  return buffers;
}

LogicalResult mlir::tile::pipelineLoops(ModuleOp module) {
  SmallVector<PipelinedOp> loops;
  module.walk([&](PipelinedOp loop) { loops.push_back(loop); });
  for (PipelinedOp loop : loops) {
    if (loop.getNumStages() < 2)
      continue;
    SmallVector<Producer> producers = findProducers(loop);
    if (producers.empty())
      continue;
    if (failed(checkDepth(loop, producers)))
      return failure();
    pipeline(loop, producers);
  }
  return success();
}
