//===- SelectMma.cpp - Choose each gemm's tensor-core instruction ---------===//
//
// The one place that decides whether a gemm runs on wgmma or mma.sync and how
// its output is split over warps; the decision is written on the gemm as a
// #tile.mma attribute that layout inference and the lowering read.
//
//===----------------------------------------------------------------------===//

#include "passes/Mma.h"
#include "passes/Passes.h"
#include "passes/TileAccess.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESELECTMMA
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-select-mma"

namespace {

/// Pipelines of at least this many stages let a wgmma gemm run on while the
/// next iteration waits for its copies (one group pending), when nothing
/// else in the loop touches its accumulator.
constexpr int64_t kOverlapMinStages = 4;

/// The most wgmma groups `gemm` may leave pending, and why not more (in
/// `why`): it must sit directly in a pipelined loop that multi-buffers its
/// shared operands (A may come from registers), and the loop needs a stage
/// for each pending group besides the one being read and the one being
/// loaded. Nothing else of the loop may touch its accumulator (or A in
/// registers) while its groups can be pending: no op after it in the body,
/// and before it only ops that follow a gemm waiting for every group (the
/// next iteration's Q K^T, whose wait covers the P V left pending, before
/// the softmax rescales the output and recomputes P).
int64_t maxDepth(GemmOp gemm, std::string &why) {
  auto loop = dyn_cast<PipelinedOp>(gemm->getParentOp());
  if (!loop) {
    why = "it is not directly in a T.Pipelined loop";
    return 0;
  }
  SmallVector<Value> buffers = pipelinedBuffers(loop);
  auto pipelined = [&](Value v) {
    if (auto stage = v.getDefiningOp<StageOp>())
      v = stage.getSource();
    return llvm::is_contained(buffers, v);
  };
  bool aRegisters = getPlace(gemm.getA().getType()) == Place::Fragment;
  if ((!aRegisters && !pipelined(gemm.getA())) || !pipelined(gemm.getB())) {
    why = "its loop does not copy its shared operands ahead";
    return 0;
  }
  SmallVector<Value> held{gemm.getC()};
  if (aRegisters)
    held.push_back(gemm.getA());
  auto touches = [&](Operation *op) {
    WalkResult r = op->walk([&](Operation *inner) {
      return llvm::any_of(inner->getOperands(),
                          [&](Value v) { return llvm::is_contained(held, v); })
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    return r.wasInterrupted();
  };
  bool waited = false, after = false;
  for (Operation &op : loop.getBody().front()) {
    if (&op == gemm.getOperation()) {
      after = true;
      continue;
    }
    if (!after) {
      if (auto other = dyn_cast<GemmOp>(&op)) {
        MmaAttr mma = other.getMmaAttr();
        if (mma && mma.getKind() == MmaKind::Wgmma && mma.getDepth() == 0)
          waited = true;
      }
    }
    if (touches(&op) && (after || !waited)) {
      why = "its loop uses the accumulator elsewhere";
      return 0;
    }
  }
  int64_t depth = loop.getNumStages() - 2;
  if (depth <= 0)
    why = "its loop has fewer than 3 stages";
  return std::max<int64_t>(depth, 0);
}

/// Chooses the instruction of one gemm and records it.
LogicalResult selectGemm(GemmOp gemm, TargetAttr target) {
  int64_t threads = gemm->getParentOfType<KernelOp>().getThreads();
  std::optional<int64_t> wait = gemm.getWgWait();
  if (gemm.getMmaAttr()) {
    if (wait && *wait != gemm.getMmaAttr().getDepth())
      return gemm.emitOpError("wg_wait = ")
             << *wait << " disagrees with the chosen mma depth "
             << gemm.getMmaAttr().getDepth();
    return success(); // chosen already (written by hand in a test)
  }
  MLIRContext *ctx = gemm.getContext();
  OperandPlace a = getPlace(gemm.getA().getType()) == Place::Fragment
                       ? OperandPlace::Registers
                       : OperandPlace::Shared;
  FailureOr<WarpPartition> part = failure();
  if (target.has(TargetFeature::Wgmma))
    part = wgmmaPartition(gemm, threads);
  if (succeeded(part)) {
    std::string why;
    int64_t most = maxDepth(gemm, why);
    int64_t depth = 0;
    if (wait) {
      if (*wait > most)
        return gemm.emitOpError("wg_wait = ")
               << *wait << " cannot be honoured: at most " << most
               << " wgmma groups can stay pending here (" << why << ")";
      depth = *wait;
    } else if (most >= 1 &&
               cast<PipelinedOp>(gemm->getParentOp()).getNumStages() >= kOverlapMinStages) {
      depth = 1;
    }
    auto blocks = [&](Value buffer, int64_t columns) {
      AllocSharedOp alloc = sharedAllocation(buffer);
      alloc.setLayoutAttr(sharedLayout(alloc).withColumnBlock(columns));
    };
    // wgmma reads an N-major B as 64-column blocks of 128-byte rows, and
    // K-major operands whose K spans several 128-byte atoms one atom per block.
    if (!gemm.getTransposeB())
      blocks(gemm.getB(), kWgmmaColumnBlock);
    if (int64_t k = wgmmaKBlock(gemm.getA().getType()); k && a == OperandPlace::Shared)
      blocks(gemm.getA(), k);
    if (int64_t k = wgmmaKBlock(gemm.getB().getType()); k && gemm.getTransposeB())
      blocks(gemm.getB(), k);
    gemm.setMmaAttr(MmaAttr::get(ctx, MmaKind::Wgmma, kWgmmaM, part->tileN,
                                 wgmmaK(gemm.getA().getType().getElementType()),
                                 part->warpsM, part->warpsN, a, depth));
    return success();
  }
  if (wait && *wait != 0)
    return gemm.emitOpError("wg_wait = ")
           << *wait << " needs a gemm that runs on wgmma (sm_90a); this one runs "
                       "on mma.sync, which has no pending groups";
  std::string why;
  part = partitionGemm(gemm, threads, why);
  if (failed(part))
    return gemm.emitOpError(why);
  gemm.setMmaAttr(MmaAttr::get(ctx, MmaKind::MmaSync, kMmaM, kMmaN, kMmaK, part->warpsM,
                               part->warpsN, a, 0));
  return success();
}

struct TileSelectMma : mlir::tile::impl::TileSelectMmaBase<TileSelectMma> {
  void runOnOperation() final {
    if (failed(selectMma(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::selectMma(ModuleOp module) {
  WalkResult result = module.walk([&](GemmOp gemm) {
    // Each gemm's own target: nested modules may name different ones.
    FailureOr<TargetAttr> target = TargetAttr::require(gemm, DEBUG_TYPE);
    if (failed(target))
      return WalkResult::interrupt();
    return failed(selectGemm(gemm, *target)) ? WalkResult::interrupt()
                                             : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
