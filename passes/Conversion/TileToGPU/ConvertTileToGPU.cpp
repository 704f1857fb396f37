//===- ConvertTileToGPU.cpp - Tile ops -> per-thread code -----------------===//
//
// The pass: for each outlined kernel, the values every pattern shares
// (thread index, dynamic shared memory), a check that each fragment is used
// only by ops the patterns lower, serial loops whose index picks fragment
// registers unrolled (so the registers stay registers), then a dialect
// conversion with the
// patterns of TileToGPU.h. The kernel's tile ops (illegal) become per-thread
// gpu/nvgpu/nvvm code; memref.load/store stay legal unless they index a
// buffer whose type converts (a local array, a laid-out shared buffer).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir {
// From mlir/Dialect/SCF/Utils/Utils.h (MLIRSCFUtils), declared here: that
// header's function mlir::tile would clash with this project's namespace.
LogicalResult loopUnrollFull(scf::ForOp forOp);
} // namespace mlir
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"

#include <map>

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOGPU
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "convert-tile-to-gpu"

namespace {

/// In each loop over a persistent kernel's tiles (kTileLoopAttr), the thread
/// index is read anew by an opaque `mov` at the top of the body: what the
/// body computes from it is then computed per tile where it is used, not
/// hoisted before the loop by LLVM and kept live across it.
void reloadThreadIndexPerTile(gpu::GPUFuncOp func) {
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
    Value local = arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                               readRegisterAfresh(b, loc, "%tid.x"));
    for (gpu::ThreadIdOp id : ids)
      id.getResult().replaceUsesWithIf(local, [&](OpOperand &use) {
        return loop->isProperAncestor(use.getOwner());
      });
  }
}

/// Errors, at the op, for what the patterns cannot lower: a gemm without a
/// #tile.mma, a fragment without a layout or used other than by tile ops and
/// the element accesses of parallel loops, a pipelined buffer's stage used
/// other than by tile ops and element accesses.
LogicalResult checkLowerable(gpu::GPUFuncOp func) {
  WalkResult result = func.walk([&](Operation *op) {
    if (auto gemm = dyn_cast<GemmOp>(op); gemm && !gemm.getMmaAttr()) {
      gemm.emitOpError("has no #tile.mma: run tile-select-mma first");
      return WalkResult::interrupt();
    }
    auto alloc = dyn_cast<AllocFragmentOp>(op);
    auto stage = dyn_cast<StageOp>(op);
    auto view = dyn_cast<ViewOp>(op);
    if (view && getPlace(view.getType()) != Place::Fragment)
      view = ViewOp();
    if (!alloc && !stage && !view)
      return WalkResult::advance();
    if (alloc && !alloc.getLayout()) {
      alloc.emitOpError("has no layout; run tile-infer-layout first");
      return WalkResult::interrupt();
    }
    Value fragment = alloc ? alloc.getResult() : view ? view.getResult() : Value();
    for (Operation *user : op->getUsers()) {
      bool access = isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp>(user);
      if (stage ? access || isa<TileDialect>(user->getDialect())
                : isa<CopyOp, FillOp, GemmOp, ReduceOp, WaitWgmmaOp, StorePartialsOp,
                      AddPartialsOp, ViewOp>(user) ||
                      (access && user->getParentOfType<ParallelOp>()) ||
                      (isa<memref::LoadOp, memref::StoreOp>(user) &&
                       holdsWholeTile(*fragmentLayout(fragment),
                                      cast<MemRefType>(fragment.getType()).getShape())))
        continue;
      if (stage)
        user->emitOpError("reads a pipelined shared buffer in a way tlc cannot lower yet");
      else
        user->emitOpError("uses a fragment in a way tlc cannot lower yet (fragments are read "
                          "and written by tile.copy, tile.fill and tile.parallel; elements "
                          "outside them only where every thread holds the whole fragment)");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Each tile.ws body becomes an scf.if on the thread index; inside, the
/// body's tile ops see their warpgroups as the block: the thread index counted
/// from the first of them (`info.groups`).
LogicalResult lowerWarpGroups(gpu::GPUFuncOp func, KernelInfo &info) {
  SmallVector<WarpGroupsOp> bodies;
  func.walk([&](WarpGroupsOp ws) { bodies.push_back(ws); });
  // Each body's threads meet at a named barrier of their own: 1 + the first
  // warpgroup's index when every body is whole warpgroups; with bodies of
  // warps, one barrier per distinct set of threads (1 to 8, in their order).
  std::map<std::pair<int64_t, int64_t>, int32_t> ids;
  bool warps = llvm::any_of(bodies, [](WarpGroupsOp ws) { return bool(ws.getWarps()); });
  for (WarpGroupsOp ws : bodies)
    ids.try_emplace({ws.getFirstWarp(), ws.getWarpCount()}, 0);
  int32_t next = kConsumerBarrier;
  for (auto &[range, id] : ids) {
    id = warps ? next++ : kConsumerBarrier + int32_t(range.first / 4);
    if (id > kLastBodyBarrier) {
      WarpGroupsOp ws = *llvm::find_if(bodies, [&](WarpGroupsOp w) {
        return std::make_pair(w.getFirstWarp(), w.getWarpCount()) == range;
      });
      return ws.emitOpError("needs a named barrier of its own, and the kernel's bodies on ")
             << ids.size() << " different sets of warps would need more than the "
             << kLastBodyBarrier << " the compiler keeps for them";
    }
  }
  for (WarpGroupsOp ws : bodies) {
    OpBuilder b(ws);
    Location loc = ws.getLoc();
    int64_t first = ws.getFirstThread(), count = ws.getThreadCount();
    auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
    Value from = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, info.tid, idx(first));
    Value below =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, info.tid, idx(first + count));
    auto branch = scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, from, below),
                                    /*withElseRegion=*/false);
    Block *then = branch.thenBlock();
    b.setInsertionPointToStart(then);
    Value tid = first ? arith::SubIOp::create(b, loc, info.tid, idx(first)).getResult() : info.tid;
    Block &body = ws.getBody().front();
    then->getOperations().splice(then->getTerminator()->getIterator(), body.getOperations());
    int32_t barrier = ids.at({ws.getFirstWarp(), ws.getWarpCount()});
    info.groups[branch] = ThreadsAt{tid, count, barrier};
    ws.erase();
  }
  return success();
}

/// Trip counts and body sizes up to which a serial loop whose index picks
/// fragment registers is unrolled.
constexpr int64_t kUnrollTrips = 64, kUnrollOps = 4096;

/// Whether `v` is computed from `iv` by ops inside `loop`.
bool derivedFrom(Value v, Value iv, Operation *loop) {
  if (v == iv)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || !loop->isAncestor(def))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value o) { return derivedFrom(o, iv, loop); });
}

/// Unrolls each serial loop (`T.serial`, innermost first) of a constant
/// trip count whose index picks a fragment's register, in a T.Parallel
/// (lse[k, j], x[i, kk * 4 + j]) or outside one (acc[k]): the registers of
/// a fragment indexed at run time would be an array in local memory, each
/// unrolled iteration's are constants. Loops of more than kUnrollTrips
/// iterations or kUnrollOps ops unrolled, and the pipeliner's loops, stay.
void unrollFragmentIndexLoops(gpu::GPUFuncOp func) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) { loops.push_back(loop); }); // innermost first
  for (scf::ForOp loop : loops) {
    std::optional<APInt> count = loop.getStaticTripCount();
    std::optional<int64_t> trips;
    if (count)
      trips = count->getSExtValue();
    if (!trips || *trips < 2 || *trips > kUnrollTrips || !loop->getDiscardableAttrs().empty())
      continue;
    Value iv = loop.getInductionVar();
    int64_t ops = 0;
    bool picks = false;
    loop.getBody()->walk([&](Operation *op) {
      ++ops;
      Value memref;
      ValueRange indices;
      if (auto load = dyn_cast<memref::LoadOp>(op))
        memref = load.getMemRef(), indices = load.getIndices();
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        memref = store.getMemRef(), indices = store.getIndices();
      if (memref && getPlace(cast<MemRefType>(memref.getType())) == Place::Fragment)
        picks |= llvm::any_of(indices, [&](Value i) { return derivedFrom(i, iv, loop); });
    });
    if (picks && ops * *trips <= kUnrollOps)
      (void)loopUnrollFull(loop);
  }
}

LogicalResult convertKernel(gpu::GPUFuncOp func) {
  MLIRContext *ctx = func.getContext();
  if (failed(checkLowerable(func)))
    return failure();
  unrollFragmentIndexLoops(func);
  KernelInfo info;
  info.threads = func.getKnownBlockSize()->front();
  bool warpSpecialized = false;
  if (auto producers = func->getAttrOfType<IntegerAttr>(kProducerThreadsAttr)) {
    info.threads -= producers.getInt(); // tile ops run on the consumers
    warpSpecialized = true;
  }
  Location loc = func.getLoc();
  OpBuilder b(func.getBody());
  info.tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (warpSpecialized)
    info.barrier = kConsumerBarrier;
  func.walk([&](GemmOp gemm) {
    info.usesWgmma |= gemm.getMmaAttr().getKind() == MmaKind::Wgmma;
  });
  bool shared = false;
  func.walk([&](Operation *op) {
    shared |= isa<AllocSharedOp>(op) || op->hasAttr("tile.scratch_offset") ||
              op->hasAttr("tile.staging_offset");
  });
  if (shared) {
    auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    info.smem = gpu::DynamicSharedMemoryOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                MemRefLayoutAttrInterface(), wg));
  }
  info.entry = &*b.getInsertionPoint();
  if (failed(lowerWarpGroups(func, info)))
    return failure();

  TileTypeConverter converter;
  ConversionTarget target(*ctx);
  target.addIllegalDialect<TileDialect>();
  target.addDynamicallyLegalOp<memref::LoadOp>(
      [&](memref::LoadOp op) { return converter.isLegal(op.getMemRef()); });
  target.addDynamicallyLegalOp<memref::StoreOp>(
      [&](memref::StoreOp op) { return converter.isLegal(op.getMemRef()); });
  target.addDynamicallyLegalOp<vector::LoadOp>(
      [&](vector::LoadOp op) { return converter.isLegal(op.getBase()); });
  target.addDynamicallyLegalOp<vector::StoreOp>(
      [&](vector::StoreOp op) { return converter.isLegal(op.getBase()); });
  target.addDynamicallyLegalOp<gpu::BarrierOp>(
      [&](gpu::BarrierOp op) { return info.at(op).barrier == 0; });
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  RewritePatternSet patterns(ctx);
  populateAllocToGPUPatterns(converter, info, patterns);
  populateCopyToGPUPatterns(converter, info, patterns);
  populateFillToGPUPatterns(converter, info, patterns);
  populatePartialsToGPUPatterns(converter, info, patterns);
  populateParallelToGPUPatterns(converter, info, patterns);
  populateReduceToGPUPatterns(converter, info, patterns);
  populateMmaSyncToGPUPatterns(converter, info, patterns);
  populateWgmmaToGPUPatterns(converter, info, patterns);
  populateBarrierToGPUPatterns(converter, info, patterns);

  // A pattern that fails says why at its op; the driver's own "failed to
  // legalize" after it says nothing more.
  bool reported = false;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    if (reported && StringRef(diag.str()).starts_with("failed to legalize"))
      return success();
    reported = true;
    return failure(); // on to the next handler
  });
  if (failed(applyPartialConversion(func, target, std::move(patterns))))
    return failure();

  reloadThreadIndexPerTile(func);
  return success();
}

struct ConvertTileToGPU : mlir::tile::impl::ConvertTileToGPUBase<ConvertTileToGPU> {
  using Base::Base;
  void runOnOperation() final {
    if (failed(convertTileToGPU(getOperation())))
      signalPassFailure();
  }
};

} // namespace

Value mlir::tile::readRegisterAfresh(OpBuilder &b, Location loc, StringRef reg) {
  auto mov = LLVM::InlineAsmOp::create(
      b, loc, b.getI32Type(), ValueRange{}, ("mov.u32 $0, " + reg + ";").str(), "=r",
      /*has_side_effects=*/true, /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT), ArrayAttr());
  return mov.getResult(0);
}

LogicalResult mlir::tile::convertTileToGPU(ModuleOp module) {
  SmallVector<gpu::GPUFuncOp> kernels;
  module.walk([&](gpu::GPUFuncOp func) {
    if (func.isKernel() && func.getKnownBlockSize())
      kernels.push_back(func);
  });
  for (gpu::GPUFuncOp func : kernels)
    if (failed(convertKernel(func)))
      return failure();
  return success();
}
