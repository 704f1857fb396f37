//===- ConvertTileToGPU.cpp - Tile ops -> per-thread code -----------------===//

#include "dialects/tile/LayoutMath.h"
#include "passes/Conversion/TileToGPU/LowerCopy.h"
#include "passes/Conversion/TileToGPU/LowerGemm.h"
#include "passes/Conversion/TileToGPU/LowerReduce.h"
#include "passes/Target/Mma.h"
#include "passes/Passes.h"
#include "passes/Conversion/TileToGPU/TileAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOGPU
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "convert-tile-to-gpu"

namespace {

/// The named barrier the consumer warps of a warp-specialized kernel meet at
/// (0 is the whole block's).
constexpr int32_t kConsumerBarrier = 1;

/// Lowers the tile ops of one outlined kernel.
class KernelLowering {
public:
  explicit KernelLowering(gpu::GPUFuncOp func) : func(func) {}
  LogicalResult run();

private:
  LogicalResult lowerAllocs();
  LogicalResult lowerSharedPtrs();
  void lowerPipelined(PipelinedOp loop);
  void lowerFill(FillOp fill);
  LogicalResult lowerParallel(ParallelOp loop);
  LogicalResult rewriteAccesses(Operation *root, int64_t reg,
                                const DenseMap<Operation *, int64_t> &rowRegs);
  void swizzleSharedAccesses();
  void planPrefetch(GemmOp gemm);
  void reloadThreadIndexPerTile();

  gpu::GPUFuncOp func;
  int64_t threads = 0;
  Value tid;
  Value smem; ///< the block's dynamic shared memory, as bytes
  Fragments fragments;
  SharedBuffers shared;
  SmallVector<StageOp> stages;             ///< erased once nothing uses them
  SmallVector<AllocSharedOp> stagedAllocs; ///< likewise
  DenseMap<Operation *, GemmPrefetch> prefetches; ///< by gemm
  bool usedWgmma = false;
  DenseSet<Operation *> wgmmaGemms; ///< gemms lowered to wgmma
};

LogicalResult KernelLowering::run() {
  threads = func.getKnownBlockSize()->front();
  if (auto producers = func->getAttrOfType<IntegerAttr>(kProducerThreadsAttr))
    threads -= producers.getInt(); // tile ops run on the consumers
  OpBuilder b(func.getBody());
  tid = gpu::ThreadIdOp::create(b, func.getLoc(), gpu::Dimension::x);

  SmallVector<PipelinedOp> loops;
  func.walk([&](PipelinedOp loop) { loops.push_back(loop); });
  for (PipelinedOp loop : loops)
    lowerPipelined(loop);
  SmallVector<GemmOp> gemms;
  func.walk([&](GemmOp gemm) { gemms.push_back(gemm); });
  for (GemmOp gemm : gemms) {
    if (!gemm.getMmaAttr())
      return gemm.emitOpError("has no #tile.mma: run tile-select-mma first");
    if (gemm.getMmaAttr().getKind() == MmaKind::Wgmma)
      wgmmaGemms.insert(gemm);
    else
      planPrefetch(gemm); // wgmma reads shared memory itself
  }
  if (failed(lowerAllocs()) || failed(lowerSharedPtrs()))
    return failure();

  SmallVector<Operation *> ops;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<CopyOp, FillOp, ParallelOp, GemmOp, ReduceOp, WaitWgmmaOp>(op)) {
      ops.push_back(op);
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  for (Operation *op : ops) {
    LogicalResult lowered = success();
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      auto it = fragments.find(gemm.getC());
      if (it == fragments.end())
        return gemm.emitOpError("C must be a fragment of this kernel");
      auto a = fragments.find(gemm.getA());
      Fragment aRegs = a == fragments.end() ? Fragment{} : a->second;
      if (wgmmaGemms.contains(gemm)) {
        if (failed(lowerGemmWgmma(gemm, shared, tid, threads, it->second.regs,
                                  it->second.layout, aRegs.regs, aRegs.layout)))
          return failure();
        usedWgmma = true;
        continue;
      }
      auto plan = prefetches.find(gemm);
      if (failed(lowerGemm(gemm, shared, tid, threads, it->second.regs,
                           it->second.layout, aRegs.regs, aRegs.layout,
                           plan == prefetches.end() ? nullptr : &plan->second)))
        return failure();
      continue; // lowerGemm erased it
    }
    if (auto wait = dyn_cast<WaitWgmmaOp>(op)) {
      if (wgmmaGemms.empty()) { // mma.sync gemms complete in program order
        wait.erase();
        continue;
      }
      SmallVector<Value> regs;
      for (Value f : wait.getFragments()) {
        auto it = fragments.find(f);
        if (it == fragments.end())
          return wait.emitOpError("waits for fragments of this kernel only");
        regs.push_back(it->second.regs);
      }
      lowerWaitWgmma(wait, regs);
      continue;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      auto src = fragments.find(reduce.getSrc());
      auto dst = fragments.find(reduce.getDst());
      if (src == fragments.end() || dst == fragments.end())
        return reduce.emitOpError("reduces fragments of this kernel only");
      if (failed(lowerReduce(reduce, tid, smem, src->second.regs, src->second.layout,
                             dst->second.regs, dst->second.layout)))
        return failure();
      continue; // lowerReduce erased it
    }
    if (auto copy = dyn_cast<CopyOp>(op))
      lowered = lowerCopy(copy, tid, threads, smem, fragments, shared);
    else if (auto fill = dyn_cast<FillOp>(op))
      lowerFill(fill);
    else
      lowered = lowerParallel(cast<ParallelOp>(op));
    if (failed(lowered))
      return failure();
    op->erase();
  }
  swizzleSharedAccesses();
  if (usedWgmma) // threads' shared writes, visible to the tensor cores' reads
    func.walk([&](gpu::BarrierOp barrier) {
      OpBuilder fb(barrier);
      NVVM::FenceProxyOp::create(
          fb, barrier.getLoc(),
          NVVM::ProxyKindAttr::get(func.getContext(), NVVM::ProxyKind::async_shared),
          NVVM::SharedSpaceAttr::get(func.getContext(), NVVM::SharedSpace::shared_cta));
    });
  if (func->hasAttr(kProducerThreadsAttr)) {
    // The tile program runs on the consumer warps only: its barriers are a
    // named barrier of those threads (the producer warps never reach them).
    func.walk([&](gpu::BarrierOp barrier) {
      OpBuilder fb(barrier);
      Location loc = barrier.getLoc();
      Type i32 = fb.getI32Type();
      NVVM::BarrierOp::create(fb, loc, Type(),
                              arith::ConstantIntOp::create(fb, loc, i32, kConsumerBarrier),
                              arith::ConstantIntOp::create(fb, loc, i32, threads),
                              NVVM::BarrierReductionAttr(), Value());
      barrier.erase();
    });
  }
  for (StageOp stage : stages) {
    if (!stage.getResult().use_empty())
      return stage.getResult().getUsers().begin()->emitOpError(
          "reads a pipelined shared buffer in a way tlc cannot lower yet");
    stage.erase();
  }
  for (AllocSharedOp alloc : stagedAllocs)
    alloc.erase();
  reloadThreadIndexPerTile();

  for (auto &[value, fragment] : fragments) {
    if (!value.use_empty())
      return value.getUsers().begin()->emitOpError(
          "uses a fragment in a way tlc cannot lower yet (fragments are read "
          "and written by tile.copy, tile.fill and tile.parallel)");
    value.getDefiningOp()->erase();
  }
  return success();
}

/// In each loop over a persistent kernel's tiles (kTileLoopAttr), the thread
/// index is read anew by an opaque `mov` at the top of the body: what the
/// body computes from it is then computed per tile where it is used, not
/// hoisted before the loop by LLVM and kept live across it.
void KernelLowering::reloadThreadIndexPerTile() {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) {
    if (loop->hasAttr(kTileLoopAttr))
      loops.push_back(loop);
  });
  SmallVector<gpu::ThreadIdOp> ids;
  func.walk([&](gpu::ThreadIdOp id) {
    if (id.getDimension() == gpu::Dimension::x)
      ids.push_back(id);
  });
  for (scf::ForOp loop : loops) {
    OpBuilder b(loop.getBody(), loop.getBody()->begin());
    Location loc = loop.getLoc();
    auto read = LLVM::InlineAsmOp::create(
        b, loc, b.getI32Type(), ValueRange{}, "mov.u32 $0, %tid.x;", "=r",
        /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT), ArrayAttr());
    Value local = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), read.getResult(0));
    for (gpu::ThreadIdOp id : ids)
      id.getResult().replaceUsesWithIf(local, [&](OpOperand &use) {
        return loop->isProperAncestor(use.getOwner());
      });
  }
}

/// Whether `stage` is `((iv - lb) / step) % stages` of `loop`, the stage
/// index tile-pipeline-loops gives each iteration; returns the iteration
/// number `(iv - lb) / step` if so.
static Value iterationOfStage(scf::ForOp loop, Value stage, int64_t stages) {
  auto rem = stage.getDefiningOp<arith::RemSIOp>();
  if (!rem || getConstantIntValue(rem.getRhs()) != stages)
    return Value();
  auto div = rem.getLhs().getDefiningOp<arith::DivSIOp>();
  if (!div || div.getRhs() != loop.getStep())
    return Value();
  auto sub = div.getLhs().getDefiningOp<arith::SubIOp>();
  if (!sub || sub.getLhs() != loop.getInductionVar() || sub.getRhs() != loop.getLowerBound())
    return Value();
  return div.getResult();
}

/// Plans GemmPrefetch (see LowerGemm.h) for a gemm that is the last op of a
/// loop tile-pipeline-loops made, reading both operands from its stages, in
/// a body that otherwise only waits, meets, issues its async copies and
/// computes indices: nothing else there touches shared memory, so moving the
/// wait and barrier from the top of the body into the gemm's last K slice
/// keeps every stage's reads before the barrier that lets it be refilled.
void KernelLowering::planPrefetch(GemmOp gemm) {
  auto loop = dyn_cast<scf::ForOp>(gemm->getParentOp());
  auto stagesAttr = loop ? loop->getAttrOfType<IntegerAttr>("tile.num_stages") : nullptr;
  if (!stagesAttr || gemm->getNextNode() != loop.getBody()->getTerminator())
    return;
  int64_t stages = stagesAttr.getInt();
  auto stageA = gemm.getA().getDefiningOp<StageOp>();
  auto stageB = gemm.getB().getDefiningOp<StageOp>();
  if (!stageA || !stageB || stageA.getIndex() != stageB.getIndex())
    return;
  Value iteration = iterationOfStage(loop, stageA.getIndex(), stages);
  if (!iteration)
    return;
  NVVM::CpAsyncWaitGroupOp wait;
  gpu::BarrierOp barrier;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (&op == gemm.getOperation() || isPure(&op))
      continue;
    if (auto w = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op); w && !wait) {
      wait = w;
      continue;
    }
    if (auto bar = dyn_cast<gpu::BarrierOp>(op); bar && wait && !barrier) {
      barrier = bar;
      continue;
    }
    auto copy = dyn_cast<CopyOp>(op);
    bool async = (copy && copy.getAsync()) || isa<NVVM::CpAsyncCommitGroupOp>(op);
    if (!async || !barrier) // also: the copies come after the barrier
      return;
  }
  if (!barrier || wait.getN() != stages - 2)
    return;

  Location loc = gemm.getLoc();
  OpBuilder before(loop);
  Value c0 = arith::ConstantIndexOp::create(before, loc, 0);
  auto stageView = [&](OpBuilder &b, StageOp like, Value index) {
    return StageOp::create(b, loc, like.getType(), like.getSource(), index).getResult();
  };
  OpBuilder inside(gemm);
  Value next = arith::RemSIOp::create(
      inside, loc,
      arith::AddIOp::create(inside, loc, iteration,
                            arith::ConstantIndexOp::create(inside, loc, 1)),
      arith::ConstantIndexOp::create(inside, loc, stages));
  prefetches[gemm] = GemmPrefetch{loop,
                                  stageView(before, stageA, c0),
                                  stageView(before, stageB, c0),
                                  stageView(inside, stageA, next),
                                  stageView(inside, stageB, next),
                                  static_cast<int32_t>(wait.getN())};
  wait.erase();
  barrier.erase();
}

void KernelLowering::lowerPipelined(PipelinedOp loop) {
  OpBuilder b(loop);
  auto forOp = scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                                  loop.getUpperBound(), loop.getStep());
  forOp->setAttr("tile.num_stages", loop.getNumStagesAttr());
  Block &body = loop.getBody().front();
  body.getArgument(0).replaceAllUsesWith(forOp.getInductionVar());
  Block *forBody = forOp.getBody();
  forBody->getOperations().splice(forBody->getTerminator()->getIterator(),
                                  body.getOperations());
  loop.erase();
}

/// tile.shared_ptr: the byte address of the element in the shared window,
/// through the buffer's flat view where it is swizzled or staged.
LogicalResult KernelLowering::lowerSharedPtrs() {
  SmallVector<SharedPtrOp> ptrs;
  func.walk([&](SharedPtrOp op) { ptrs.push_back(op); });
  for (SharedPtrOp op : ptrs) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto [memref, indices] =
        sharedAddress(b, loc, &shared, op.getBuffer(), SmallVector<Value>(op.getIndices()));
    auto type = cast<MemRefType>(memref.getType());
    Value linear = arith::ConstantIndexOp::create(b, loc, 0);
    int64_t stride = 1;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (ShapedType::isDynamic(type.getDimSize(d)) && d > 0)
        return op.emitOpError("addresses a buffer of dynamic shape");
      Value term = arith::MulIOp::create(b, loc, indices[d],
                                         arith::ConstantIndexOp::create(b, loc, stride));
      linear = arith::AddIOp::create(b, loc, linear, term);
      stride *= d > 0 ? type.getDimSize(d) : 1;
    }
    int64_t bytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    Value at = arith::AddIOp::create(
        b, loc, base,
        arith::MulIOp::create(b, loc, linear, arith::ConstantIndexOp::create(b, loc, bytes)));
    Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), at);
    Value ptr = LLVM::IntToPtrOp::create(b, loc, op.getType(), i64);
    op.getResult().replaceAllUsesWith(ptr);
    op.erase();
  }
  return success();
}

LogicalResult KernelLowering::lowerAllocs() {
  OpBuilder b(func.getBody());
  b.setInsertionPointAfter(tid.getDefiningOp());
  Location loc = func.getLoc();
  SmallVector<Operation *> allocs;
  func.walk([&](Operation *op) {
    if (isa<AllocSharedOp, AllocFragmentOp, AllocLocalOp>(op))
      allocs.push_back(op);
  });
  bool scratch = false;
  func.walk([&](ReduceOp r) { scratch |= r->hasAttr("tile.scratch_offset"); });
  func.walk([&](CopyOp c) { scratch |= c->hasAttr("tile.staging_offset"); });
  if (scratch || llvm::any_of(allocs, [](Operation *op) { return isa<AllocSharedOp>(op); })) {
    auto wg = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    smem = gpu::DynamicSharedMemoryOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                MemRefLayoutAttrInterface(), wg));
  }
  for (Operation *op : allocs) {
    if (auto alloc = dyn_cast<AllocFragmentOp>(op)) {
      std::optional<LayoutAttr> layout = alloc.getLayout();
      if (!layout)
        return alloc.emitOpError("has no layout; run tile-infer-layout first");
      MemRefType type = alloc.getType();
      auto regsType = MemRefType::get({layout->getRegs()}, type.getElementType());
      Value regs = memref::AllocaOp::create(b, alloc.getLoc(), regsType);
      fragments[alloc.getResult()] = {regs, *layout};
      continue;
    }
    if (auto alloc = dyn_cast<AllocLocalOp>(op)) {
      MemRefType type = alloc.getType();
      auto plain = MemRefType::get(type.getShape(), type.getElementType());
      Value local = memref::AllocaOp::create(b, alloc.getLoc(), plain);
      alloc.getResult().replaceAllUsesWith(local);
      alloc.erase();
      continue;
    }
    auto alloc = cast<AllocSharedOp>(op);
    std::optional<int64_t> offset = alloc.getOffset();
    if (!offset)
      return alloc.emitOpError("has no offset; run "
                               "tile-allocate-shared-memory first");
    OpBuilder ab(alloc);
    MemRefType type = alloc.getType();
    Value byteOffset = arith::ConstantIndexOp::create(ab, alloc.getLoc(), *offset);
    SharedLayoutAttr layout = sharedLayout(alloc);
    bool staged = layout.getStages() > 0;
    SharedLayoutAttr stageLayout = layout.withStages(0);
    Value flat;
    if (!layout.isPlain()) {
      auto flatType = MemRefType::get({type.getNumElements()}, type.getElementType(),
                                      MemRefLayoutAttrInterface(), type.getMemorySpace());
      flat = memref::ViewOp::create(ab, alloc.getLoc(), flatType, smem, byteOffset,
                                    ValueRange{});
    }
    if (staged) {
      // Each stage is addressed through the flat view from its first element;
      // the stage ops stay as the keys of their buffers until the end.
      int64_t perStage = type.getNumElements() / type.getDimSize(0);
      for (Operation *user : alloc->getUsers()) {
        auto stage = dyn_cast<StageOp>(user);
        if (!stage)
          return user->emitOpError("uses a multi-buffered shared allocation "
                                   "other than through tile.stage");
        OpBuilder sb(stage);
        Value base = arith::MulIOp::create(
            sb, stage.getLoc(), stage.getIndex(),
            arith::ConstantIndexOp::create(sb, stage.getLoc(), perStage));
        shared[stage.getResult()] = SharedView{flat, stageLayout, base};
        stages.push_back(stage);
      }
      stagedAllocs.push_back(alloc);
      continue;
    }
    Value view = memref::ViewOp::create(ab, alloc.getLoc(), type, smem, byteOffset,
                                        ValueRange{});
    if (flat)
      shared[view] = SharedView{flat, stageLayout, Value()};
    alloc.getResult().replaceAllUsesWith(view);
    alloc.erase();
  }
  return success();
}

/// Shared memory written inside a loop may still be read by the previous
/// iteration: a barrier before the write; and one after every write so the
/// other threads read it only once it is complete.
void KernelLowering::lowerFill(FillOp fill) {
  OpBuilder b(fill);
  Location loc = fill.getLoc();
  Value value = fill.getValue();
  auto fragIt = fragments.find(fill.getDst());
  if (fragIt != fragments.end()) {
    for (int64_t r = 0; r < fragIt->second.layout.getRegs(); ++r)
      memref::StoreOp::create(b, loc, value, fragIt->second.regs,
                              ValueRange{arith::ConstantIndexOp::create(b, loc, r)});
    return;
  }
  // Shared buffers are filled by all threads together, local ones by each.
  MemRefType type = fill.getDst().getType();
  Value by = getPlace(type) == Place::Shared ? tid : Value();
  forEachVector(b, loc, by, threads, type.getShape(), /*width=*/1,
                [&](OpBuilder &ob, Location l, ValueRange at) {
                  memref::StoreOp::create(ob, l, value, fill.getDst(), at);
                });
}

/// Redirects fragment accesses to register `reg` and guards global ones.
LogicalResult
KernelLowering::rewriteAccesses(Operation *root, int64_t reg,
                                const DenseMap<Operation *, int64_t> &rowRegs) {
  SmallVector<Operation *> accesses;
  root->walk([&](Operation *op) {
    if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp>(op))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
      // T.atomic_add into a global tensor: outside it, nothing is added.
      if (getPlace(atomic.getMemRefType()) != Place::Global)
        return atomic.emitOpError("adds atomically into global tensors only");
      if (!atomic.getResult().use_empty())
        return atomic.emitOpError("returns the previous value, which tlc does not support");
      Value inside = insideBounds(b, loc, atomic.getMemref(), atomic.getIndices());
      auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      op->moveBefore(guard.thenBlock()->getTerminator());
      continue;
    }
    auto load = dyn_cast<memref::LoadOp>(op);
    auto store = dyn_cast<memref::StoreOp>(op);
    Value memref = load ? load.getMemRef() : store.getMemRef();
    ValueRange indices = load ? load.getIndices() : store.getIndices();
    auto fragIt = fragments.find(memref);
    if (fragIt != fragments.end()) {
      auto row = rowRegs.find(op); // a row vector: the register of this row
      Value r = arith::ConstantIndexOp::create(b, loc, row == rowRegs.end() ? reg : row->second);
      op->setOperand(load ? 0 : 1, fragIt->second.regs);
      op->setOperands(load ? 1 : 2, indices.size(), ValueRange{r});
      continue;
    }
    if (getPlace(cast<MemRefType>(memref.getType())) != Place::Global)
      continue;
    Value inside = insideBounds(b, loc, memref, indices);
    if (store) {
      auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      op->moveBefore(guard.thenBlock()->getTerminator());
      continue;
    }
    Type elem = load.getType();
    auto guard = scf::IfOp::create(b, loc, TypeRange{elem}, inside,
                                   /*withElseRegion=*/true);
    load->replaceAllUsesWith(guard.getResults());
    OpBuilder tb = OpBuilder::atBlockEnd(guard.thenBlock());
    load->moveBefore(guard.thenBlock(), guard.thenBlock()->end());
    scf::YieldOp::create(tb, loc, load.getResult());
    OpBuilder eb = OpBuilder::atBlockEnd(guard.elseBlock());
    scf::YieldOp::create(eb, loc,
                         arith::ConstantOp::create(eb, loc, elem, eb.getZeroAttr(elem))
                             .getResult());
  }
  return success();
}

LogicalResult KernelLowering::lowerParallel(ParallelOp loop) {
  std::optional<LayoutAttr> layout = loop.getLayout();
  if (!layout)
    return loop.emitOpError("has no layout; run tile-infer-layout first");
  Block &body = loop.getBody().front();
  // Row vectors (m[i] in a loop over (i, j)) hold the loop's layout sliced
  // along the missing dimension: register r of the loop reads the row
  // register sourceToResult[r].
  DenseMap<Operation *, SmallVector<int64_t>> rowAccesses;
  WalkResult mismatch = loop.getBody().walk([&](Operation *op) {
    Value memref;
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      memref = load.getMemRef(), indices = load.getIndices();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      memref = store.getMemRef(), indices = store.getIndices();
    auto it = fragments.find(memref);
    if (!memref || it == fragments.end())
      return WalkResult::advance();
    if (indices.size() < body.getNumArguments()) {
      std::optional<int64_t> dim = droppedDim(indices, body.getArguments());
      std::string why;
      FailureOr<SlicedLayout> sliced =
          dim ? sliceLayout(*layout, loop.getShape(), *dim, why)
              : FailureOr<SlicedLayout>(failure());
      if (failed(sliced) || !equivalentLayouts(sliced->layout, it->second.layout)) {
        op->emitOpError("reads or writes a row fragment that does not hold "
                        "the rows of the loop's elements");
        return WalkResult::interrupt();
      }
      rowAccesses[op] = sliced->sourceToResult;
      return WalkResult::advance();
    }
    if (!equivalentLayouts(it->second.layout, *layout)) {
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
  OpBuilder b(loop);
  for (int64_t r = 0; r < layout->getRegs(); ++r) {
    IRMapping mapping;
    SmallVector<Value> index = applyLayout(b, loop.getLoc(), *layout, tid, r);
    for (auto [iv, value] : llvm::zip(body.getArguments(), index))
      mapping.map(iv, value);
    // Clone the whole body first: rewriting an access replaces its uses,
    // which must all exist by then.
    SmallVector<Operation *> clones;
    for (Operation &op : body)
      clones.push_back(b.clone(op, mapping));
    DenseMap<Operation *, int64_t> rowRegs;
    for (auto &[orig, regs] : rowAccesses)
      rowRegs[mapping.lookup(orig)] = regs[r];
    for (Operation *clone : clones)
      if (failed(rewriteAccesses(clone, r, rowRegs)))
        return failure();
  }
  return success();
}

/// Element accesses (fills, parallel bodies) to swizzled shared buffers go
/// through the buffer's flat view at the swizzled position.
void KernelLowering::swizzleSharedAccesses() {
  if (shared.empty())
    return;
  SmallVector<Operation *> accesses;
  func.walk([&](Operation *op) {
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      memref = store.getMemRef();
    if (memref && shared.count(memref))
      accesses.push_back(op);
  });
  for (Operation *op : accesses) {
    OpBuilder b(op);
    auto load = dyn_cast<memref::LoadOp>(op);
    auto store = dyn_cast<memref::StoreOp>(op);
    Value memref = load ? load.getMemRef() : store.getMemRef();
    ValueRange indices = load ? load.getIndices() : store.getIndices();
    auto [flat, at] = sharedAddress(b, op->getLoc(), &shared, memref,
                                    SmallVector<Value>(indices));
    op->setOperand(load ? 0 : 1, flat);
    op->setOperands(load ? 1 : 2, indices.size(), at);
  }
}

struct ConvertTileToGPU : mlir::tile::impl::ConvertTileToGPUBase<ConvertTileToGPU> {
  using Base::Base;
  void runOnOperation() final {
    if (failed(convertTileToGPU(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::convertTileToGPU(ModuleOp module) {
  SmallVector<gpu::GPUFuncOp> kernels;
  module.walk([&](gpu::GPUFuncOp func) {
    if (func.isKernel() && func.getKnownBlockSize())
      kernels.push_back(func);
  });
  for (gpu::GPUFuncOp func : kernels)
    if (failed(KernelLowering(func).run()))
      return failure();
  return success();
}
