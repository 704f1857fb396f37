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
#include "passes/Transforms/Rasterize.h"
#include "passes/Transforms/StreamK.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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

/// On a tile.kernel: the program's T.disable_warp_group_reg_alloc(): a
/// warp-specialized loop moves no registers between its warpgroups.
static constexpr llvm::StringLiteral kNoRegisterMovesAttr = "tile.no_register_moves";

namespace {

/// A global -> shared copy at the top of a pipelined body, and the pure ops
/// in the body that compute its operands (from the induction variable). A
/// copy at the top of a top-level `if` (TileLang's block-sparse loop:
/// `if mask[k]: copy; copy; gemm`) is one too, made on that `if`'s
/// condition: `cond`, whose ops `slice` holds as well.
struct Producer {
  CopyOp copy;
  AllocSharedOp buffer;
  SetVector<Operation *> slice;
  Value cond;
};

/// The local buffer (T.alloc_var / T.alloc_local: per-thread) `op` loads
/// from, or null.
Value localLoaded(Operation *op) {
  auto load = dyn_cast<memref::LoadOp>(op);
  return load && getPlace(load.getMemRefType()) == Place::Local ? load.getMemRef() : Value();
}

/// Whether `op` only computes per-thread values: pure ops, loads of
/// read-only global tensors and of local buffers, stores to local buffers,
/// structured control flow (a T.alloc_var scalar's min over a table).
bool onlyWritesLocals(Operation *op) {
  return !op->walk([](Operation *inner) {
               auto store = dyn_cast<memref::StoreOp>(inner);
               bool ok = isPure(inner) || isReadOnlyGlobalLoad(inner) || localLoaded(inner) ||
                         (store && getPlace(store.getMemRefType()) == Place::Local) ||
                         isa<scf::ForOp, scf::IfOp, scf::YieldOp>(inner);
               return ok ? WalkResult::advance() : WalkResult::interrupt();
             }).wasInterrupted();
}

/// The kernel's prelude: its first ops, up to the first with another effect
/// than computing per-thread values (allocations, pure ops, read-only global
/// loads, ops that only write local buffers). Every thread runs it, so its
/// local values are the same in both warp roles of a warp-specialized loop.
DenseSet<Operation *> kernelPrelude(Block &body) {
  DenseSet<Operation *> prelude;
  for (Operation &op : body) {
    if (!isa<AllocSharedOp, AllocFragmentOp, AllocLocalOp>(op) && !onlyWritesLocals(&op))
      break;
    prelude.insert(&op);
  }
  return prelude;
}

/// Whether `value` is a load of a local buffer that only the kernel's prelude
/// writes.
bool isPreludeLocalLoad(Operation *op, const DenseSet<Operation *> &prelude, Block &body) {
  Value buffer = localLoaded(op);
  return buffer && llvm::all_of(buffer.getUsers(), [&](Operation *user) {
           if (isa<memref::LoadOp>(user))
             return true;
           Operation *top = body.findAncestorOpInBlock(*user);
           return top && prelude.contains(top);
         });
}

/// Collects the in-body ops `value` depends on; fails on anything impure
/// (loads of read-only global tensors excepted: copies whose start is read
/// at run time from a table; and loads of local buffers the loop does not
/// write: a start computed before the loop into a T.alloc_var).
bool collectSlice(Value value, Block &body, SetVector<Operation *> &slice,
                  Block *inner = nullptr) {
  Operation *def = value.getDefiningOp();
  if (!def || (def->getBlock() != &body && def->getBlock() != inner))
    return true; // defined outside the loop, or the induction variable
  Value local = localLoaded(def);
  Operation *loop = body.getParentOp();
  bool invariantLocal = local && llvm::all_of(local.getUsers(), [&](Operation *user) {
    return isa<memref::LoadOp>(user) || !loop->isAncestor(user);
  });
  if (!isPure(def) && !isReadOnlyGlobalLoad(def) && !invariantLocal)
    return false;
  for (Value operand : def->getOperands())
    if (!collectSlice(operand, body, slice, inner))
      return false;
  slice.insert(def);
  return true;
}

/// The copies at the top of `guard`'s then-block, a top-level `if` of
/// `loop`'s body without results or else branch: those before its first op
/// that is neither a copy nor pure.
SmallVector<CopyOp> leadingCopies(scf::IfOp guard) {
  SmallVector<CopyOp> copies;
  if (guard.getNumResults() || !guard.getElseRegion().empty())
    return copies;
  for (Operation &op : guard.thenBlock()->without_terminator()) {
    if (auto copy = dyn_cast<CopyOp>(op))
      copies.push_back(copy);
    else if (!isPure(&op))
      break;
  }
  return copies;
}

/// The producers of `loop`, or none when the loop does not have the shape
/// this pass pipelines.
SmallVector<Producer> findProducers(PipelinedOp loop) {
  Block &body = loop.getBody().front();
  SmallVector<Producer> producers;
  DenseSet<Operation *> buffers;
  auto consider = [&](CopyOp copy, scf::IfOp guard) {
    auto buffer = copy.getDst().getDefiningOp<AllocSharedOp>();
    MemRefType src = copy.getSrc().getType();
    if (!buffer || isViewed(buffer) || getPlace(src) != Place::Global || copy.getAsync() ||
        copy.getPred() || src.getElementType() != buffer.getType().getElementType() ||
        buffers.contains(buffer))
      return;
    // Every use of the buffer is in this loop, none before the copy; under an
    // `if`, all in its then-block (on iterations it skips, nothing reads the
    // stage the skipped copy would have filled).
    Block *at = copy->getBlock();
    bool ok = llvm::all_of(buffer->getUses(), [&](OpOperand &use) {
      Operation *user = at->findAncestorOpInBlock(*use.getOwner());
      return user && (user == copy || copy->isBeforeInBlock(user));
    });
    Producer p{copy, buffer, {}, Value()};
    Block *inner = guard ? guard.thenBlock() : nullptr;
    for (Value operand : copy->getOperands())
      ok &= collectSlice(operand, body, p.slice, inner);
    if (guard) {
      p.cond = guard.getCondition();
      ok &= collectSlice(p.cond, body, p.slice);
    }
    if (!ok)
      return;
    buffers.insert(buffer);
    producers.push_back(std::move(p));
  };
  for (Operation &op : body) {
    if (auto copy = dyn_cast<CopyOp>(&op))
      consider(copy, scf::IfOp());
    else if (auto guard = dyn_cast<scf::IfOp>(&op))
      for (CopyOp copy : leadingCopies(guard))
        consider(copy, guard);
  }
  return producers;
}

/// Clones `loop`'s body at `b` (but the producers' copies, which the
/// pipeline issues itself) with `mapping`.
void cloneBody(OpBuilder &b, PipelinedOp loop, ArrayRef<Producer> producers,
               IRMapping &mapping) {
  DenseSet<Operation *> skip;
  for (const Producer &p : producers)
    if (!p.cond)
      skip.insert(p.copy);
  for (Operation &op : loop.getBody().front())
    if (!skip.contains(&op))
      b.clone(op, mapping);
  // Copies under an `if` came with it.
  for (const Producer &p : producers)
    if (p.cond)
      mapping.lookup(CopyOp(p.copy).getOperation())->erase();
}

/// Emits the producers' copies for iteration `iv`, into stage `stage`, as
/// async copies predicated on `inside`.
void issue(OpBuilder &b, ArrayRef<Producer> producers, Value oldIv, Value iv,
           Value stage, Value inside,
           const DenseMap<Operation *, AllocSharedOp> &staged) {
  IRMapping mapping;
  mapping.map(oldIv, iv);
  for (Producer p : producers) {
    for (Operation *op : p.slice) {
      if (mapping.contains(op->getResult(0)))
        continue;
      if (!isa<memref::LoadOp>(op)) {
        b.clone(*op, mapping);
        continue;
      }
      // A table entry of an iteration past the end would be read past the
      // table's end: only iterations inside the loop read it.
      Type type = op->getResult(0).getType();
      auto read = scf::IfOp::create(b, op->getLoc(), type, inside, /*withElse=*/true);
      OpBuilder tb = read.getThenBodyBuilder();
      scf::YieldOp::create(tb, op->getLoc(), tb.clone(*op, mapping)->getResult(0));
      OpBuilder eb = read.getElseBodyBuilder();
      scf::YieldOp::create(eb, op->getLoc(),
                           arith::ConstantOp::create(eb, op->getLoc(), type,
                                                     eb.getZeroAttr(type))
                               .getResult());
      mapping.map(op->getResult(0), read.getResult(0));
    }
    // A copy the program's `if` skips is not issued (its stage, which that
    // `if` keeps its readers from, is left as it was).
    OpBuilder::InsertionGuard guard(b);
    if (p.cond) {
      auto skip = scf::IfOp::create(b, p.copy.getLoc(), mapping.lookup(p.cond),
                                    /*withElseRegion=*/false);
      b.setInsertionPoint(skip.thenBlock()->getTerminator());
    }
    AllocSharedOp all = staged.lookup(p.buffer);
    Value view = StageOp::create(b, p.copy.getLoc(), p.buffer.getType(), all, stage);
    mapping.map(p.copy.getDst(), view);
    auto copy = cast<CopyOp>(b.clone(*p.copy, mapping));
    copy.setAsync(true);
    copy.getPredMutable().assign(inside);
  }
}

/// S-deep copies of the producers' buffers, allocated where the originals
/// were.
DenseMap<Operation *, AllocSharedOp> stageBuffers(ArrayRef<Producer> producers,
                                                  int64_t stages) {
  DenseMap<Operation *, AllocSharedOp> staged;
  for (Producer p : producers)
    staged[p.buffer] = allocateStages(p.buffer, stages);
  return staged;
}

/// The most wgmma groups a gemm of `loop`'s body leaves pending, or the
/// program leaves running into the next iteration (kCarriedWgmmaAttr).
int64_t pendingWgmma(PipelinedOp loop) {
  int64_t depth = 0;
  for (auto gemm : loop.getBody().front().getOps<GemmOp>())
    if (MmaAttr mma = gemm.getMmaAttr())
      depth = std::max(depth, mma.getDepth());
  if (auto carried = loop->getAttrOfType<IntegerAttr>(kCarriedWgmmaAttr))
    depth = std::max(depth, carried.getInt());
  return depth;
}

/// The gemm of `loop`'s body that may prefetch (see tile.gemm's `prefetch`):
/// an mma.sync gemm that is the body's last op, reads A and B from two of
/// the producers' buffers, and is all the body does besides its copies and
/// pure index computations; null otherwise.
GemmOp prefetchingGemm(PipelinedOp loop, ArrayRef<Producer> producers, int64_t pending) {
  Block &body = loop.getBody().front();
  auto gemm = body.empty() ? GemmOp() : dyn_cast<GemmOp>(body.back());
  if (!gemm || pending != 0 || !gemm.getMmaAttr() ||
      gemm.getMmaAttr().getKind() != MmaKind::MmaSync)
    return GemmOp();
  auto produced = [&](Value v) {
    return llvm::any_of(producers, [&](Producer p) { return p.copy.getDst() == v; });
  };
  if (!produced(gemm.getA()) || !produced(gemm.getB()))
    return GemmOp();
  for (Operation &op : body)
    if (&op != gemm.getOperation() && !isPure(&op) &&
        !llvm::any_of(producers, [&](Producer p) { return p.copy.getOperation() == &op; }))
      return GemmOp();
  return gemm;
}

void pipeline(PipelinedOp loop, ArrayRef<Producer> producers) {
  int64_t stages = loop.getNumStages();
  int64_t pending = pendingWgmma(loop);
  // Copies issued after the body (a manual schedule's order) leave the
  // stage a prefetching gemm would read next unfilled: no prefetch then.
  GemmOp prefetching =
      loop.getCopiesLast() ? GemmOp() : prefetchingGemm(loop, producers, pending);
  int64_t ahead = stages - 1 - pending; // tile-select-mma keeps this >= 1
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto cst = [&](OpBuilder &ob, int64_t v) {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };

  DenseMap<Operation *, AllocSharedOp> staged = stageBuffers(producers, stages);

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
  // Each iteration waits for its stage and meets the block before it issues
  // the copies that overwrite the stage the last one read; a prefetching
  // gemm does both itself, after reading its stage's last K slice, and the
  // first iteration's wait and barrier go before the loop.
  if (!prefetching) {
    NVVM::CpAsyncWaitGroupOp::create(fb, loc, fb.getI32IntegerAttr(ahead - 1));
    gpu::BarrierOp::create(fb, loc);
  }
  Value aheadIv = arith::AddIOp::create(
      fb, loc, iv, arith::MulIOp::create(fb, loc, step, cst(fb, ahead)));
  Value aheadStage = arith::RemSIOp::create(
      fb, loc, arith::AddIOp::create(fb, loc, i, cst(fb, ahead)), cst(fb, stages));
  // The copies ahead overwrite the stage of iteration i + ahead - stages
  // (< i), which the barrier above ordered before them: issued before the
  // body, or after it (copies_last), the same stage is safe.
  if (!loop.getCopiesLast())
    guarded(fb, aheadIv, aheadStage);

  // The rest of the body reads this iteration's stage.
  IRMapping mapping;
  mapping.map(oldIv, iv);
  for (Producer p : producers)
    mapping.map(p.buffer.getResult(),
                StageOp::create(fb, loc, p.buffer.getType(), staged[p.buffer], stage));
  cloneBody(fb, loop, producers, mapping);
  if (loop.getCopiesLast())
    guarded(fb, aheadIv, aheadStage);
  if (prefetching) {
    // The stages it reads ahead: the first iteration's (before the loop,
    // after its wait and barrier) and the next one's.
    auto gemm = cast<GemmOp>(mapping.lookup(prefetching.getOperation()));
    auto stageOf = [&](OpBuilder &ob, Value buffer, Value index) -> Value {
      auto alloc = buffer.getDefiningOp<AllocSharedOp>();
      return StageOp::create(ob, loc, alloc.getType(), staged[alloc], index);
    };
    OpBuilder before(forOp);
    Value c0 = cst(before, 0);
    Value firstA = stageOf(before, prefetching.getA(), c0);
    Value firstB = stageOf(before, prefetching.getB(), c0);
    NVVM::CpAsyncWaitGroupOp::create(before, loc, before.getI32IntegerAttr(ahead - 1));
    gpu::BarrierOp::create(before, loc);
    OpBuilder inside(gemm);
    Value next = arith::RemSIOp::create(
        inside, loc, arith::AddIOp::create(inside, loc, i, cst(inside, 1)), cst(inside, stages));
    Value nextA = stageOf(inside, prefetching.getA(), next);
    Value nextB = stageOf(inside, prefetching.getB(), next);
    gemm.getPrefetchMutable().assign(ValueRange{firstA, firstB, nextA, nextB});
    gemm.setPrefetchWaitAttr(inside.getI32IntegerAttr(ahead - 1));
  }

  // Drained: every thread's copies (those of iterations past the end too,
  // which write zeros) and wgmma reads are done, and the block has met, so
  // the stages' bytes are free for other buffers after the loop.
  b.setInsertionPointAfter(forOp);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
  if (pending > 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  gpu::BarrierOp::create(b, loc);
  for (auto &[buffer, all] : staged)
    all->setAttr(kDrainedAttr, b.getUnitAttr());
  loop.erase();
  for (Producer p : producers)
    p.buffer.erase();
}

//===----------------------------------------------------------------------===//
// Warp specialization (sm_90a): TMA producer warpgroup, wgmma consumers
//===----------------------------------------------------------------------===//

/// Registers per thread the producer warpgroup keeps (setmaxnreg), and the
/// most a consumer thread takes.
constexpr int32_t kProducerRegisters = 40, kConsumerRegisterCap = 232;
constexpr int64_t kWarpgroup = 128;

} // namespace

// (The copy's destination is `buffer` or a tile.stage of it.)
std::optional<TmaCopy> mlir::tile::tmaCopy(CopyOp copy, AllocSharedOp buffer) {
  MemRefType src = copy.getSrc().getType();
  MemRefType dst = copy.getDst().getType(); // the buffer, or one stage of it
  if (!tmaProblem(src).empty() || dst.getRank() != 2 || copy.getPred() ||
      src.getElementType() != dst.getElementType() ||
      copy->hasAttr(kDisableTmaAttr) || // T.copy(..., disable_tma=True)
      copy.getSrc().getDefiningOp<MakeTensorOp>()) // no host-encoded tensor map
    return std::nullopt;
  if (copy.getDstSizes() != dst.getShape() ||
      llvm::any_of(copy.getDstOffsets(),
                   [](Value o) { return getConstantIntValue(o) != int64_t(0); }))
    return std::nullopt;
  ArrayRef<int64_t> sizes = copy.getSrcSizes();
  int64_t rows = 1;
  for (int64_t size : sizes.drop_back())
    rows *= size;
  int64_t columns = dst.getDimSize(1), elem = dst.getElementTypeBitWidth() / 8;
  if (sizes.back() != columns || rows != dst.getDimSize(0) || rows % 8 || elem < 1)
    return std::nullopt;
  TmaCopy t;
  t.box = SmallVector<int64_t>(sizes);
  if (isViewed(buffer))
    return std::nullopt; // T.reshape / T.view address it row-major
  int64_t chunkColumns = columns;
  SharedLayoutAttr layout = sharedLayout(buffer);
  if (int64_t block = layout.getColumnBlock()) {
    chunkColumns = block;
    if (columns % chunkColumns)
      return std::nullopt;
  } else if (!layout.getSwizzle() && columns * elem > kTmaSwizzleBytes &&
             columns * elem % kTmaSwizzleBytes == 0) {
    // Rows wider than the 128-byte swizzle (a tile no gemm reads, such as an
    // fp8 B the gemm reads transposed): 128-byte column blocks.
    chunkColumns = kTmaSwizzleBytes / elem;
    t.columnBlock = chunkColumns;
  }
  int64_t rowBytes = chunkColumns * elem;
  if (rowBytes != kTmaSwizzleBytes &&
      (chunkColumns != columns || (rowBytes != 64 && rowBytes != 32)))
    return std::nullopt;
  t.swizzleBytes = rowBytes;
  t.box.back() = chunkColumns;
  if (llvm::any_of(t.box, [](int64_t b) { return b > 256; }))
    return std::nullopt;
  return t;
}

namespace {


/// The ops of the kernel body `body`, nested ones too, computed from the
/// block indices `indices` (all of them when empty), directly or through
/// local buffers (a T.alloc_var assigned from them); an op with a region is
/// marked when anything in it is.
DenseSet<Operation *> blockDependent(Block &body, ValueRange indices = {}) {
  DenseSet<Value> from(indices.begin(), indices.end());
  if (indices.empty())
    from.insert(body.getArguments().begin(), body.getArguments().end());
  DenseSet<Operation *> fromBlock;
  DenseSet<Value> locals; // local buffers holding values from the block indices
  for (Operation &op : body) {
    bool dependent = false;
    op.walk([&](Operation *inner) { // defs before uses; an op after what it holds
      Value local = localLoaded(inner);
      bool uses = (local && locals.contains(local)) ||
                  llvm::any_of(inner->getOperands(), [&](Value v) {
                    Operation *def = v.getDefiningOp();
                    return from.contains(v) || (def && fromBlock.contains(def));
                  });
      if (uses || (inner == &op && dependent)) {
        fromBlock.insert(inner);
        dependent = true;
      }
    });
    if (!dependent)
      continue;
    op.walk([&](memref::StoreOp store) {
      if (getPlace(store.getMemRefType()) == Place::Local)
        locals.insert(store.getMemRef());
    });
  }
  return fromBlock;
}

/// Whether a warp-specialized `loop` makes its kernel persistent (`fromBlock`:
/// blockDependent of its kernel's body): a grid of
/// one or two dimensions and loop bounds independent of the block indices,
/// for the kernel to walk its tiles itself (every tile then has the same
/// number of iterations, so the mbarrier phases continue across tiles).
bool isPersistent(PipelinedOp loop, const DenseSet<Operation *> &fromBlock) {
  auto kernel = cast<KernelOp>(loop->getParentOp());
  // A kernel launched in clusters keeps its grid: its clusters' blocks share
  // tiles by their block indices.
  if (kernel->hasAttr(kClusterDimsAttr))
    return false;
  return kernel.getGrid().size() <= 2 && llvm::none_of(loop->getOperands(), [&](Value v) {
           return v.getDefiningOp() && fromBlock.contains(v.getDefiningOp());
         });
}

/// Whether a warp-specialized `loop` with `producers` makes its kernel
/// persistent: isPersistent, unless its copies are under the program's `if`
/// (a block-sparse loop), whose tiles take data-dependent times that a
/// static walk of the tiles would not balance, and whose iteration count
/// is carried per tile.
bool makesPersistent(PipelinedOp loop, ArrayRef<Producer> producers,
                     const DenseSet<Operation *> &fromBlock) {
  return isPersistent(loop, fromBlock) &&
         llvm::none_of(producers, [](const Producer &p) { return bool(p.cond); });
}

/// The cluster mask each producer's copy of `loop` is multicast to, 0 for
/// none: in a kernel launched in clusters along one grid dimension only (and no
/// T.use_swizzle, which remaps the block indices the tiles come from), a
/// copy whose tile does not depend on the block index along it is the same
/// tile in every block of the cluster, loaded once for all of them. The
/// loop's bounds must not depend on it either: every block of the cluster
/// then runs the same iterations, each waiting for the others' releases.
SmallVector<int64_t> multicastMasks(KernelOp kernel, PipelinedOp loop,
                                    ArrayRef<Producer> producers) {
  SmallVector<int64_t> masks(producers.size(), 0);
  auto dims = kernel->getAttrOfType<DenseI32ArrayAttr>(kClusterDimsAttr);
  if (!dims || kernel->hasAttr(kRasterizationAttr))
    return masks;
  int axis = -1;
  for (auto [i, d] : llvm::enumerate(dims.asArrayRef()))
    if (d > 1) {
      if (axis >= 0)
        return masks;
      axis = i;
    }
  if (axis < 0 || axis >= int(kernel.getBlockIndices().size()))
    return masks;
  Value index = kernel.getBlockIndices()[axis];
  DenseSet<Operation *> fromIndex = blockDependent(kernel.getBody().front(), index);
  auto dependent = [&](Value v) {
    return v == index || (v.getDefiningOp() && fromIndex.contains(v.getDefiningOp()));
  };
  if (llvm::any_of(loop->getOperands(), dependent))
    return masks;
  for (auto [n, p] : llvm::enumerate(producers))
    if (!p.cond && llvm::none_of(CopyOp(p.copy).getSrcOffsets(), dependent))
      masks[n] = (int64_t(1) << dims.asArrayRef()[axis]) - 1;
  return masks;
}

/// Whether `loop` is warp-specialized: sm_90a, the only pipelined loop of
/// its kernel and directly in its body, wgmma gemms only (those under an
/// `if` waited for there), every producer a TMA load (copies under an `if`
/// all under the same one), and the values the producers' copies need computed before the
/// loop without side effects (reads of tensors the kernel never writes
/// count as none: a sequence length, a page table). Fills `tma` per producer.
bool canWarpSpecialize(PipelinedOp loop, ArrayRef<Producer> producers,
                       SmallVector<TmaCopy> &tma) {
  auto kernel = dyn_cast<KernelOp>(loop->getParentOp());
  TargetAttr target = TargetAttr::lookup(loop);
  if (!kernel || !target || !target.has(TargetFeature::Tma) ||
      !target.has(TargetFeature::SetMaxNReg) || kernel->hasAttr(kProducerThreadsAttr) ||
      loop->getParentOfType<ModuleOp>()->hasAttr(kNoWarpSpecializationAttr))
    return false;
  int64_t threads = kernel.getThreads();
  if (threads % kWarpgroup || threads + kWarpgroup > 1024)
    return false;
  int loops = 0;
  kernel.walk([&](PipelinedOp) { ++loops; });
  // The program specializes its warpgroups itself (T.ws).
  if (kernel.walk([](WarpGroupsOp) { return WalkResult::interrupt(); }).wasInterrupted())
    return false;
  // Gemms under the copies' `if` too, each waited for there (depth 0: the
  // stage is released after the iteration).
  SmallVector<GemmOp> gemms;
  loop.getBody().walk([&](GemmOp g) { gemms.push_back(g); });
  if (loops != 1 || gemms.empty() || llvm::any_of(gemms, [&](GemmOp g) {
        return !g.getMmaAttr() || g.getMmaAttr().getKind() != MmaKind::Wgmma ||
               (g->getParentOp() != loop.getOperation() && g.getMmaAttr().getDepth() != 0);
      }))
    return false;
  // Conditional copies: all on one condition, which the producer and the
  // consumers both evaluate, each iteration where it holds taking the next
  // stage; no wgmma group left pending across iterations.
  Value cond = producers.front().cond;
  if (llvm::any_of(producers, [&](const Producer &p) { return p.cond != cond; }) ||
      (cond && pendingWgmma(loop) > 0))
    return false;
  for (Producer p : producers) {
    std::optional<TmaCopy> t = tmaCopy(p.copy, p.buffer);
    if (!t)
      return false;
    tma.push_back(*t);
  }
  // What the copies read from before the loop: pure ops only, and local
  // values the kernel's prelude computes (the producer recomputes nothing;
  // those ops stay where both sides see them). Not in a persistent kernel,
  // whose per-tile values are recomputed per tile.
  Block &body = kernel.getBody().front();
  DenseSet<Operation *> prelude;
  if (!makesPersistent(loop, producers, blockDependent(body)))
    prelude = kernelPrelude(body);
  SmallVector<Value> needed;
  for (Producer p : producers) {
    for (Operation *op : p.slice)
      llvm::append_range(needed, op->getOperands());
    llvm::append_range(needed, p.copy->getOperands());
  }
  llvm::append_range(needed, loop->getOperands());
  while (!needed.empty()) {
    Operation *def = needed.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &body || isa<AllocSharedOp>(def))
      continue;
    if (prelude.contains(def))
      continue; // (its captured values are the prelude's, or from outside)
    if (isPreludeLocalLoad(def, prelude, body)) {
      llvm::append_range(needed, def->getOperands());
      continue;
    }
    if ((!isPure(def) && !isReadOnlyGlobalLoad(def)) || def->getNumRegions())
      return false;
    llvm::append_range(needed, def->getOperands());
  }
  return true;
}

/// Rewrites `loop`'s kernel into a producer warpgroup (the threads from
/// `threads` on, one of them issuing each iteration's TMA loads once the
/// consumers released the stage) and the program's own threads as
/// consumers (waiting for each stage's loads, releasing it once the gemms
/// reading it completed), synchronised through a `tile.pipeline` of S
/// stages (tile-insert-mbarriers makes its mbarriers):
///
///   producer, global iteration k, stage s = k % S:
///     tile.producer_acquire k; tile.tma_load per copy -> stage s
///     (copies under the program's `if`: only the iterations whose condition
///     holds, k counting those; the consumers wait for and release a stage
///     in those iterations only)
///   consumer, iteration k:
///     tile.consumer_wait k; the body on stage s
///     tile.consumer_release k - D (D: the wgmma groups left pending;
///       none before the kernel's iteration D)
void warpSpecialize(PipelinedOp loop, MutableArrayRef<Producer> producers,
                    ArrayRef<TmaCopy> tma, bool streamKEnabled) {
  auto kernel = cast<KernelOp>(loop->getParentOp());
  MLIRContext *ctx = loop.getContext();
  Location loc = loop.getLoc();
  int64_t stages = loop.getNumStages(), threads = kernel.getThreads();
  int64_t pending = pendingWgmma(loop);
  Block &body = kernel.getBody().front();
  Type i64 = IntegerType::get(ctx, 64);
  auto idx = [&](OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };

  DenseSet<Operation *> fromBlock = blockDependent(body);
  // Copies under the program's `if` (all under one: canWarpSpecialize).
  bool conditional = bool(producers.front().cond);
  SetVector<Operation *> condSlice;
  if (conditional)
    collectSlice(producers.front().cond, loop.getBody().front(), condSlice);
  bool persistent = makesPersistent(loop, producers, fromBlock);
  // Copies the same in every block of the cluster are multicast: the
  // pipeline then releases each stage at every block of the mask.
  SmallVector<int64_t> masks = multicastMasks(kernel, loop, producers);
  SmallVector<AllocFragmentOp> accumulators;
  if (persistent && streamKEnabled && streamKMayPay(kernel, loop)) {
    SmallVector<Operation *> copies;
    for (Producer &p : producers)
      copies.push_back(p.copy);
    accumulators = streamKAccumulators(loop, copies);
  }
  bool streamK = !accumulators.empty();
  // Counts known only at run time: the kernel carries the plain persistent
  // loop too and takes it when the launch's sizes do not share a wave (the
  // stream-K loop measured 5-17% slower where it shared nothing).
  bool bothLoops = streamK && !streamKPaysAtCompileTime(kernel, loop).has_value();
  // The reduce-scatter fix-up only where known counts use it
  // (streamKScattersAtCompileTime).
  bool mayScatter = streamK && streamKScattersAtCompileTime(kernel, loop).value_or(false);
  StreamKScratch scratch;
  if (streamK)
    scratch = addStreamKScratch(kernel->getParentOfType<func::FuncOp>(), accumulators);

  // Which ops stay where both warp roles see them: allocations and pure ops
  // of values computed before the kernel's side effects (and, in a
  // persistent kernel, not from the block indices: those are recomputed
  // per tile).
  // A kernel's prelude of per-thread values (not persistent: see
  // canWarpSpecialize) stays too, and the loads of the locals it computes.
  DenseSet<Operation *> moved;
  SmallVector<Operation *> order;
  DenseSet<Operation *> prelude;
  if (!persistent)
    prelude = kernelPrelude(body);
  for (Operation &op : body) {
    bool stays = isa<AllocSharedOp, AllocFragmentOp, AllocLocalOp>(op) || prelude.contains(&op) ||
                 ((isPure(&op) || isReadOnlyGlobalLoad(&op) ||
                   isPreludeLocalLoad(&op, prelude, body)) &&
                  !op.getNumRegions() && !(persistent && fromBlock.contains(&op)) &&
                  llvm::none_of(op.getOperands(), [&](Value v) {
                    return v.getDefiningOp() && moved.contains(v.getDefiningOp());
                  }));
    if (!stays)
      moved.insert(&op);
    order.push_back(&op);
  }

  DenseMap<Operation *, AllocSharedOp> staged = stageBuffers(producers, stages);
  for (auto [p, t] : llvm::zip(producers, tma)) {
    AllocSharedOp all = staged[p.buffer];
    SharedLayoutAttr layout = sharedLayout(all);
    if (t.columnBlock)
      layout = layout.withColumnBlock(t.columnBlock);
    all.setLayoutAttr(layout.withSwizzle(tmaSwizzleForRows(ctx, t.swizzleBytes)));
  }

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(&body);
  Value pipe = PipelineOp::create(b, loc, PipelineType::get(ctx), stages, threads);
  if (int64_t mask = *llvm::max_element(masks)) // all of the cluster's, where any
    pipe.getDefiningOp()->setAttr(kClusterMaskAttr, b.getI64IntegerAttr(mask));
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value isProducer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                                           idx(b, threads));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);

  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(), step = loop.getStep();
  Value oldIv = loop.getBody().getArgument(0);
  // The loop's iterations per tile, for the global iteration number.
  Value trips = arith::CeilDivSIOp::create(b, loc, arith::SubIOp::create(b, loc, ub, lb), step);
  roles->moveAfter(trips.getDefiningOp());

  // Runs `perTile` once per tile of this block: with the block indices for
  // a persistent kernel (tiles blockIdx.x, + gridDim.x, ... of the grid,
  // rasterized as T.use_swizzle asked; with stream-K, the block's pieces
  // of tiles), else once with the block's own; it gets the mapping of the
  // block indices and the tile's work: its loop's bounds and first global
  // iteration number.
  struct TileWork {
    Value firstK, from, to;
    Value tiles, piece; // stream-K: the tile count and the piece's number
  };
  auto mapTile = [&](OpBuilder &tb, IRMapping &mapping, Value t) {
    ValueRange grid = kernel.getGrid();
    SmallVector<Value> ids{t};
    if (grid.size() == 2) {
      ids = {arith::RemSIOp::create(tb, loc, t, grid[0]),
             arith::DivSIOp::create(tb, loc, t, grid[0])};
      if (auto raster = kernel->getAttrOfType<DictionaryAttr>(kRasterizationAttr))
        rasterize(tb, loc, raster, grid[0], grid[1], ids);
    }
    for (auto [arg, id] : llvm::zip(kernel.getBlockIndices(), ids))
      mapping.map(arg, id);
  };
  auto forEachTile = [&](OpBuilder &ob,
                         function_ref<void(OpBuilder &, IRMapping &, const TileWork &)> perTile) {
    IRMapping mapping;
    if (!persistent) {
      perTile(ob, mapping, TileWork{idx(ob, 0), lb, ub});
      return;
    }
    auto tileCount = [&](OpBuilder &tb) {
      ValueRange grid = kernel.getGrid();
      Value tiles = grid[0];
      for (Value size : grid.drop_front())
        tiles = arith::MulIOp::create(tb, loc, tiles, size);
      return tiles;
    };
    // The plain persistent loop: tiles blockIdx.x, + gridDim.x, ...
    auto plainLoop = [&](OpBuilder &pb) {
      IRMapping plainMapping;
      Value cta = gpu::BlockIdOp::create(pb, loc, gpu::Dimension::x);
      Value ctas = gpu::GridDimOp::create(pb, loc, gpu::Dimension::x);
      auto tileLoop = scf::ForOp::create(pb, loc, cta, tileCount(pb), ctas);
      tileLoop->setAttr(kTileLoopAttr, UnitAttr::get(ctx));
      OpBuilder tb = OpBuilder::atBlockTerminator(tileLoop.getBody());
      Value t = tileLoop.getInductionVar();
      Value j = arith::DivSIOp::create(tb, loc, arith::SubIOp::create(tb, loc, t, cta), ctas);
      mapTile(tb, plainMapping, t);
      perTile(tb, plainMapping, TileWork{arith::MulIOp::create(tb, loc, j, trips), lb, ub});
    };
    if (streamK) {
      // The schedule is built again in each piece (its values are not kept
      // live across the piece loop; the consumers build it a third time
      // after the main loop).
      Value tiles = tileCount(ob);
      StreamKSchedule blockSchedule(ob, loc, tiles, trips);
      OpBuilder sb = ob; // where the piece loop goes
      if (bothLoops) {   // the launch's sizes choose: both roles take the same loop
        auto choice = scf::IfOp::create(ob, loc, blockSchedule.sharing(ob, loc),
                                        /*withElseRegion=*/true);
        OpBuilder plain = OpBuilder::atBlockTerminator(choice.elseBlock());
        plainLoop(plain);
        sb = OpBuilder::atBlockTerminator(choice.thenBlock());
      }
      auto pieceLoop =
          scf::ForOp::create(sb, loc, idx(sb, 0), blockSchedule.pieces(), idx(sb, 1));
      pieceLoop->setAttr(kTileLoopAttr, UnitAttr::get(ctx));
      OpBuilder tb = OpBuilder::atBlockTerminator(pieceLoop.getBody());
      StreamKSchedule schedule(tb, loc, tiles, trips, /*afresh=*/true);
      Value u = pieceLoop.getInductionVar();
      StreamKPiece piece = schedule.piece(tb, loc, u);
      mapTile(tb, mapping, piece.tile);
      auto bound = [&](Value i) {
        return arith::AddIOp::create(tb, loc, lb, arith::MulIOp::create(tb, loc, i, step));
      };
      perTile(tb, mapping,
              TileWork{piece.firstK, bound(piece.begin), bound(piece.end), tiles, u});
      return;
    }
    plainLoop(ob);
  };
  // Global iteration k of the loop at `iv` (from `first` at `from`) and its stage.
  auto position = [&](OpBuilder &ob, Value iv, Value first, Value from) {
    Value k = arith::AddIOp::create(
        ob, loc, first,
        arith::DivSIOp::create(ob, loc, arith::SubIOp::create(ob, loc, iv, from), step));
    Value s = arith::RemSIOp::create(ob, loc, k, idx(ob, stages));
    return std::pair<Value, Value>{k, s};
  };
  // The loop over a tile's iterations; `body` builds iteration iv's ops with
  // its global iteration k and stage s. With the copies under the program's
  // `if`, only the iterations whose condition holds use a stage: both roles
  // count them alike (a loop-carried count, from the tile's first iteration),
  // `condition` computing the iteration's condition first, which `body`
  // gets as `taken` (null otherwise).
  auto iterations = [&](OpBuilder &tb, const TileWork &work,
                        function_ref<Value(OpBuilder &, Value)> condition,
                        function_ref<void(OpBuilder &, Value, Value, Value, Value)> body) {
    if (!conditional) {
      auto forOp = scf::ForOp::create(tb, loc, work.from, work.to, step);
      OpBuilder fb = OpBuilder::atBlockTerminator(forOp.getBody());
      Value iv = forOp.getInductionVar();
      auto [k, s] = position(fb, iv, work.firstK, work.from);
      body(fb, iv, k, s, Value());
      return forOp;
    }
    // (Built in place: a body builder runs before the loop op exists, where
    // the ops built look for their kernel.)
    auto forOp = scf::ForOp::create(tb, loc, work.from, work.to, step, ValueRange{work.firstK});
    Block *block = forOp.getBody();
    OpBuilder fb = OpBuilder::atBlockEnd(block);
    Value iv = forOp.getInductionVar(), k = forOp.getRegionIterArg(0);
    Value taken = condition(fb, iv);
    body(fb, iv, k, arith::RemSIOp::create(fb, loc, k, idx(fb, stages)), taken);
    OpBuilder yb = OpBuilder::atBlockEnd(block);
    Value next = arith::AddIOp::create(
        yb, loc, k, arith::SelectOp::create(yb, loc, taken, idx(yb, 1), idx(yb, 0)));
    scf::YieldOp::create(yb, loc, next);
    return forOp;
  };

  // Registers move from the producer to the consumers (setmaxnreg) in blocks
  // of three warpgroups or more. A block of two starts with the 255 registers
  // a thread may use at most: ptxas knows no count at the entry to move from
  // and drops setmaxnreg (C7508), and each warpgroup has what it could get.
  // T.disable_warp_group_reg_alloc() (kNoRegisterMovesAttr) keeps the
  // launch's share in every warpgroup.
  bool movesRegisters =
      threads + kWarpgroup >= 3 * kWarpgroup && !kernel->hasAttr(kNoRegisterMovesAttr);

  // The producer warpgroup.
  {
    OpBuilder pb = OpBuilder::atBlockTerminator(roles.thenBlock());
    if (movesRegisters)
      NVVM::SetMaxRegisterOp::create(pb, loc, kProducerRegisters,
                                     NVVM::SetMaxRegisterAction::decrease);
    Value leader = arith::CmpIOp::create(pb, loc, arith::CmpIPredicate::eq, tid,
                                         idx(pb, threads));
    auto issue = scf::IfOp::create(pb, loc, leader, /*withElseRegion=*/false);
    OpBuilder lb0 = OpBuilder::atBlockTerminator(issue.thenBlock());
    SmallVector<Value> maps;
    for (size_t n = 0; n < producers.size(); ++n)
      maps.push_back(TensorMapOp::create(lb0, loc, LLVM::LLVMPointerType::get(ctx),
                                         producers[n].copy.getSrc(), tma[n].box,
                                         tma[n].swizzleBytes));
    forEachTile(lb0, [&](OpBuilder &tb, IRMapping &mapping, const TileWork &work) {
      if (persistent) // the tile's values the copies read
        for (Operation *op : order)
          if (fromBlock.contains(op) && moved.contains(op) &&
              (isPure(op) || isReadOnlyGlobalLoad(op)) && !op->getNumRegions())
            tb.clone(*op, mapping);
      auto cloneSlice = [&](OpBuilder &fb, const Producer &p) {
        for (Operation *op : p.slice)
          if (!mapping.contains(op->getResult(0)))
            fb.clone(*op, mapping);
      };
      // Copies under the program's `if` (canWarpSpecialize: all under one):
      // their values first, the condition among them; iterations where it is
      // false acquire no stage.
      auto condition = [&](OpBuilder &fb, Value iv) {
        mapping.map(oldIv, iv);
        for (const Producer &p : producers)
          cloneSlice(fb, p);
        return mapping.lookup(producers.front().cond);
      };
      iterations(tb, work, condition, [&](OpBuilder &fb, Value iv, Value k, Value s, Value taken) {
        mapping.map(oldIv, iv);
        if (taken) {
          auto loads = scf::IfOp::create(fb, loc, taken, /*withElseRegion=*/false);
          fb.setInsertionPoint(loads.thenBlock()->getTerminator());
        }
        ProducerAcquireOp::create(fb, loc, pipe, k);
        for (size_t n = 0; n < producers.size(); ++n) {
          Producer p = producers[n];
          cloneSlice(fb, p);
          SmallVector<Value> coords;
          for (Value o : p.copy.getSrcOffsets())
            coords.push_back(mapping.lookupOrDefault(o));
          Value view = StageOp::create(fb, loc, p.buffer.getType(), staged[p.buffer], s);
          auto load = TmaLoadOp::create(fb, loc, maps[n], coords, view, pipe, k);
          if (masks[n])
            load->setAttr(kClusterMaskAttr, fb.getI64IntegerAttr(masks[n]));
        }
      });
    });
  }

  // The consumers: the program, its loop waiting for and releasing stages.
  {
    OpBuilder cb = OpBuilder::atBlockTerminator(roles.elseBlock());
    // setmaxnreg.inc takes only what the block's other warps released: each
    // thread starts with the launch's share of the register file (the most
    // ptxas gives a block of threads + 128, in steps of 8), and the
    // consumers share what the producer gives up. Asking for more waits
    // forever (four consumer warpgroups: 96 at launch, 104 each, not 112).
    int64_t atLaunch = std::min<int64_t>(255, 65536 / (threads + kWarpgroup)) / 8 * 8;
    int64_t regs = std::min<int64_t>(
        kConsumerRegisterCap,
        (atLaunch + kWarpgroup * (atLaunch - kProducerRegisters) / threads) / 8 * 8);
    if (movesRegisters)
      NVVM::SetMaxRegisterOp::create(cb, loc, regs, NVVM::SetMaxRegisterAction::increase);
    forEachTile(cb, [&](OpBuilder &tb, IRMapping &mapping, const TileWork &work) {
      SmallVector<Operation *> epilogue; // stream-K: after the loop, once per tile
      bool afterLoop = false;
      for (Operation *op : order) {
        if (!moved.contains(op))
          continue;
        if (afterLoop && work.piece) {
          epilogue.push_back(op);
          continue;
        }
        if (op != loop.getOperation()) {
          tb.clone(*op, mapping);
          continue;
        }
        afterLoop = true;
        // The condition of the copies' `if` (a conditional loop): the same
        // values the producer computes.
        auto condition = [&](OpBuilder &fb, Value iv) {
          IRMapping values = mapping;
          values.map(oldIv, iv);
          for (Operation *op : condSlice)
            fb.clone(*op, values);
          return values.lookup(producers.front().cond);
        };
        // `build` at `fb`, under `taken` where the loop is conditional.
        auto onlyIf = [&](OpBuilder &fb, Value taken, function_ref<void(OpBuilder &)> build) {
          if (!taken)
            return build(fb);
          auto guard = scf::IfOp::create(fb, loc, taken, /*withElseRegion=*/false);
          OpBuilder gb = OpBuilder::atBlockTerminator(guard.thenBlock());
          build(gb);
        };
        auto consume = [&](OpBuilder &fb, Value iv, Value k, Value s, Value taken) {
          onlyIf(fb, taken, [&](OpBuilder &wb) { ConsumerWaitOp::create(wb, loc, pipe, k); });
          IRMapping inner = mapping;
          inner.map(oldIv, iv);
          for (Producer p : producers)
            inner.map(p.buffer.getResult(),
                      StageOp::create(fb, loc, p.buffer.getType(), staged[p.buffer], s));
          cloneBody(fb, loop, producers, inner);
          // Release the stage the gemms stopped reading: this iteration's, or
          // with D groups pending the one D iterations back (none before the
          // kernel's iteration D; across tiles the count goes on). A
          // conditional loop has none pending (canWarpSpecialize).
          if (pending > 0) {
            Value back = arith::SubIOp::create(fb, loc, k, idx(fb, pending));
            Value seen =
                arith::CmpIOp::create(fb, loc, arith::CmpIPredicate::sge, back, idx(fb, 0));
            auto release = scf::IfOp::create(fb, loc, seen, /*withElseRegion=*/false);
            OpBuilder rb = OpBuilder::atBlockTerminator(release.thenBlock());
            ConsumerReleaseOp::create(rb, loc, pipe, back);
          } else {
            onlyIf(fb, taken,
                   [&](OpBuilder &rb) { ConsumerReleaseOp::create(rb, loc, pipe, k); });
          }
        };
        auto forOp = iterations(tb, work, condition, consume);
        tb.setInsertionPointAfter(forOp);
        if (pending > 0)
          NVVM::WgmmaWaitGroupSyncOp::create(tb, loc, 0);
      }
      if (work.piece) {
        StreamKSchedule schedule(tb, loc, work.tiles, trips, /*afresh=*/true);
        finishStreamKPiece(tb, loc, schedule, work.piece, accumulators, scratch, mayScatter,
                           [&](OpBuilder &eb) {
                             for (Operation *op : epilogue)
                               eb.clone(*op, mapping);
                           });
      }
    });
  }
  if (persistent)
    kernel->setAttr(kPersistentAttr, UnitAttr::get(ctx));
  if (streamK)
    kernel->setAttr(kStreamKAttr, UnitAttr::get(ctx));
  kernel->setAttr(kProducerThreadsAttr, IntegerAttr::get(i64, kWarpgroup));
  for (Operation *op : llvm::reverse(order))
    if (moved.contains(op))
      op->erase();
  for (Producer p : producers)
    p.buffer.erase();
}

struct TilePipelineLoops : mlir::tile::impl::TilePipelineLoopsBase<TilePipelineLoops> {
  using Base::Base;
  void runOnOperation() final {
    if (failed(pipelineLoops(getOperation(), streamK)))
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

/// Whether `op` loads an element of a global tensor that nothing in its
/// kernel writes (a paged cache's block table): reading it ahead of the
/// iteration that asked, or in a producer warpgroup, reads the same value.
bool mlir::tile::isReadOnlyGlobalLoad(Operation *op) {
  auto load = dyn_cast<memref::LoadOp>(op);
  if (!load || getPlace(load.getMemRefType()) != Place::Global)
    return false;
  Value tensor = load.getMemRef();
  auto kernel = op->getParentOfType<KernelOp>();
  return kernel && llvm::all_of(tensor.getUsers(), [&](Operation *user) {
    if (!kernel->isAncestor(user))
      return true;
    if (isa<memref::LoadOp>(user))
      return true;
    auto copy = dyn_cast<CopyOp>(user);
    return copy && copy.getSrc() == tensor && copy.getDst() != tensor;
  });
}

AllocSharedOp mlir::tile::allocateStages(AllocSharedOp buffer, int64_t stages) {
  OpBuilder ab(buffer);
  MemRefType type = buffer.getType();
  SmallVector<int64_t> shape{stages};
  llvm::append_range(shape, type.getShape());
  auto all = AllocSharedOp::create(
      ab, buffer.getLoc(),
      MemRefType::get(shape, type.getElementType(), MemRefLayoutAttrInterface(),
                      type.getMemorySpace()),
      sharedLayout(buffer).withStages(stages), IntegerAttr());
  // The program's marks on the buffer (T.annotate_layout's row-major pin,
  // its name) hold for its stages.
  all->setDiscardableAttrs(buffer->getDiscardableAttrDictionary());
  return all;
}

SmallVector<Value> mlir::tile::pipelinedBuffers(PipelinedOp loop) {
  SmallVector<Value> buffers;
  if (loop.getNumStages() < 2)
    return buffers;
  for (Producer &p : findProducers(loop))
    buffers.push_back(p.buffer.getResult());
  return buffers;
}

void mlir::tile::splitBuffersPerLoop(ModuleOp module) {
  SmallVector<AllocSharedOp> allocs;
  module.walk([&](AllocSharedOp alloc) { allocs.push_back(alloc); });
  for (AllocSharedOp alloc : allocs) {
    if (isViewed(alloc))
      continue;
    // The uses by the pipelined loop (of 2 or more stages) holding them.
    llvm::MapVector<Operation *, SmallVector<OpOperand *>> byLoop;
    bool ok = true;
    for (OpOperand &use : alloc->getUses()) {
      auto loop = use.getOwner()->getParentOfType<PipelinedOp>();
      if (!loop || loop.getNumStages() < 2) {
        ok = false;
        break;
      }
      byLoop[loop].push_back(&use);
    }
    if (!ok || byLoop.size() < 2)
      continue;
    // Each loop's first use overwrites the whole buffer from global memory,
    // so no value flows from one loop to another.
    for (auto &[op, uses] : byLoop) {
      Block &body = cast<PipelinedOp>(op).getBody().front();
      Operation *first = nullptr;
      for (OpOperand *use : uses) {
        Operation *top = body.findAncestorOpInBlock(*use->getOwner());
        if (!first || top->isBeforeInBlock(first))
          first = top;
      }
      auto copy = dyn_cast<CopyOp>(first);
      ArrayRef<int64_t> shape = alloc.getType().getShape();
      ok &= copy && copy.getDst() == alloc.getResult() && !copy.getAsync() &&
            getPlace(copy.getSrc().getType()) == Place::Global &&
            copy.getDstSizes() == shape &&
            llvm::all_of(copy.getDstOffsets(), [](Value v) { return isConstantIntValue(v, 0); });
    }
    if (!ok)
      continue;
    for (auto &[op, uses] : llvm::drop_begin(byLoop)) {
      OpBuilder b(alloc);
      Value own = b.clone(*alloc)->getResult(0);
      for (OpOperand *use : uses)
        use->set(own);
    }
  }
}

LogicalResult mlir::tile::pipelineLoops(ModuleOp module, bool streamK) {
  splitBuffersPerLoop(module);
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
    SmallVector<TmaCopy> tma;
    if (canWarpSpecialize(loop, producers, tma))
      warpSpecialize(loop, producers, tma, streamK);
    else
      pipeline(loop, producers);
  }
  return success();
}
