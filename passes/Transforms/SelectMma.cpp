//===- SelectMma.cpp - Choose each gemm's tensor-core instruction ---------===//
//
// The one place that decides whether a gemm runs on wgmma or mma.sync and how
// its output is split over warps; the decision is written on the gemm as a
// #tile.mma attribute that layout inference and the lowering read.
//
//===----------------------------------------------------------------------===//

#include "passes/Target/Mma.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <limits>

namespace mlir::tile {
#define GEN_PASS_DEF_TILESELECTMMA
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-select-mma"

/// Set by T.wgmma_gemm: the gemm runs on wgmma or is an error (never the
/// mma.sync fallback T.gemm takes).
constexpr llvm::StringLiteral kRequireWgmmaAttr = "tile.require_wgmma";

namespace {

/// Pipelines of at least this many stages let a wgmma gemm run on while the
/// next iteration waits for its copies (one group pending), when nothing
/// else in the loop touches its accumulator.
constexpr int64_t kOverlapMinStages = 4;

/// Whether `a` and `b` compute the same value: the same Value, or the same
/// result of equivalent pure ops (OperationEquivalence: name, attributes,
/// types) of operands that do, so that two spellings of a stage index
/// (`A_s[k % 2, :, :]` at each use) are one.
bool sameExpression(Value a, Value b, int depth = 8) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || depth == 0 || x->getNumRegions() || !isPure(x) ||
      cast<OpResult>(a).getResultNumber() != cast<OpResult>(b).getResultNumber())
    return false;
  return OperationEquivalence::isEquivalentTo(
      x, y,
      [&](Value p, Value q) { return success(sameExpression(p, q, depth - 1)); },
      /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// The stages of the allocation `v` is one stage of, when the loop's body
/// picks it by its own iteration: `tile.stage %buf[i mod S]` for i the
/// loop's induction variable or its iteration number ((iv - lb) / step), as
/// the K-major copy of an fp8 operand (the frontend's) or a hand-pipelined
/// program (`A_s[k % 2, :, :]`) write it, each access to the allocation in
/// the loop through that same index (the same expression, however often
/// spelled); 0 otherwise. Consecutive iterations
/// then use different stages, and a gemm left pending in one reads a stage
/// the next does not write.
int64_t iterationStages(PipelinedOp loop, Value v) {
  auto stage = v.getDefiningOp<StageOp>();
  if (!stage)
    return 0;
  auto alloc = stage.getSource().getDefiningOp<AllocSharedOp>();
  int64_t stages = alloc ? sharedLayout(alloc).getStages() : 0;
  Operation *rem = stage.getIndex().getDefiningOp();
  if (!stages || !rem || !isa<arith::RemUIOp, arith::RemSIOp>(rem) ||
      getConstantIntValue(rem->getOperand(1)) != stages)
    return 0;
  // (iv - lb) / step or iv / step, consecutive in consecutive iterations;
  // without the division only for a step of 1 (canonicalization folds it).
  Value i = rem->getOperand(0), iv = loop.getBody().front().getArgument(0);
  if (auto div = i.getDefiningOp<arith::DivUIOp>()) {
    if (div.getRhs() != loop.getStep())
      return 0;
    i = div.getLhs();
  } else if (getConstantIntValue(loop.getStep()) != int64_t(1)) {
    return 0;
  }
  if (auto sub = i.getDefiningOp<arith::SubIOp>()) {
    if (sub.getRhs() != loop.getLowerBound())
      return 0;
    i = sub.getLhs();
  }
  if (i != iv)
    return 0;
  // Every access in the loop is to this iteration's stage (no write of
  // another stage that a pending group of an earlier iteration may read).
  for (Operation *user : alloc->getUsers()) {
    if (!loop->isAncestor(user))
      continue;
    auto other = dyn_cast<StageOp>(user);
    if (!other || !sameExpression(other.getIndex(), stage.getIndex()))
      return 0;
  }
  return stages;
}

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
  // At most S - 1 groups pending over an operand of S per-iteration stages.
  int64_t ownLimit = std::numeric_limits<int64_t>::max();
  auto pipelined = [&](Value v) {
    if (int64_t s = iterationStages(loop, v)) {
      ownLimit = std::min(ownLimit, s - 1);
      return true;
    }
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
      if (auto w = dyn_cast<WaitWgmmaOp>(&op); w && w.getPending() == 0)
        waited = true;
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
  if (ownLimit < depth) {
    depth = ownLimit;
    why = "an operand has " + std::to_string(ownLimit + 1) + " per-iteration stages";
  }
  return std::max<int64_t>(depth, 0);
}

/// Whether an operand of `gemm` is a copy tile.transpose fills in the loop
/// (an fp8 operand made K-major): the wgmma should then run on while the
/// next iteration transposes, whatever the pipeline's depth.
bool readsTransposedCopy(GemmOp gemm) {
  auto transposed = [](Value v) {
    return llvm::any_of(v.getUsers(), [](Operation *u) { return isa<TransposeOp>(u); });
  };
  return llvm::any_of(ValueRange{gemm.getA(), gemm.getB()}, [&](Value v) {
    if (transposed(v))
      return true;
    // A stage of a buffer named again by the same index (`bt[k % 2]` spelled twice).
    auto stage = v.getDefiningOp<StageOp>();
    return stage && llvm::any_of(stage.getSource().getUsers(), [&](Operation *u) {
             auto other = dyn_cast<StageOp>(u);
             return other && sameExpression(other.getIndex(), stage.getIndex()) &&
                    transposed(other.getResult());
           });
  });
}

/// Chooses the instruction of one gemm and records it.
LogicalResult selectGemm(GemmOp gemm, TargetAttr target) {
  FailureOr<ThreadGroup> group = threadGroupOf(gemm); // a T.ws body's, else the block's
  if (failed(group))
    return failure();
  int64_t threads = group->count;
  std::optional<int64_t> wait = gemm.getWgWait();
  if (gemm.getMmaAttr()) {
    if (wait && *wait != gemm.getMmaAttr().getDepth())
      return gemm.emitOpError("wg_wait = ")
             << *wait << " disagrees with the chosen mma depth "
             << gemm.getMmaAttr().getDepth();
    return success(); // chosen already (written by hand in a test)
  }
  for (Value operand : {gemm.getA(), gemm.getB()})
    if (AllocSharedOp alloc = sharedAllocation(operand);
        alloc && alloc->hasAttr("tile.row_major"))
      return gemm.emitOpError("reads ")
             << bufferName(alloc.getResult())
             << ", whose layout the program pinned row-major (a row-major T.annotate_layout, "
                "such as make_mma_swizzle_layout with is_smooth=True); a gemm operand is laid "
                "out by the compiler: leave it unannotated or give it make_swizzled_layout";
  MLIRContext *ctx = gemm.getContext();
  OperandPlace a = getPlace(gemm.getA().getType()) == Place::Fragment
                       ? OperandPlace::Registers
                       : OperandPlace::Shared;
  FailureOr<WarpPartition> part = failure();
  // wgmma runs on whole warpgroups (a body of warps starting elsewhere has none).
  if (target.has(TargetFeature::Wgmma) && group->first % 128 == 0)
    part = wgmmaPartition(gemm, threads);
  if (succeeded(part)) {
    std::string why;
    int64_t most = maxDepth(gemm, why);
    int64_t depth = 0;
    if (wait && *wait == -1) {
      depth = -1; // issued, left running: a tile.wait_wgmma completes it
    } else if (wait) {
      if (*wait > most)
        return gemm.emitOpError("wg_wait = ")
               << *wait << " cannot be honoured: at most " << most
               << " wgmma groups can stay pending here (" << why << ")";
      depth = *wait;
    } else if (most >= 1 &&
               (cast<PipelinedOp>(gemm->getParentOp()).getNumStages() >= kOverlapMinStages ||
                readsTransposedCopy(gemm))) {
      depth = 1;
    }
    auto blocks = [&](Value buffer, int64_t columns) {
      AllocSharedOp alloc = sharedAllocation(buffer);
      alloc.setLayoutAttr(sharedLayout(alloc).withColumnBlock(columns));
    };
    // wgmma reads an N-major B (an M-major A) as 64-column blocks of 128-byte
    // rows, and K-major operands whose K spans several 128-byte atoms one atom
    // per block.
    if (!gemm.getTransposeB())
      blocks(gemm.getB(), kWgmmaColumnBlock);
    if (gemm.getTransposeA()) // M-major A: as an N-major B
      blocks(gemm.getA(), kWgmmaColumnBlock);
    else if (int64_t k = wgmmaKBlock(gemm.getA().getType()); k && a == OperandPlace::Shared)
      blocks(gemm.getA(), k);
    if (int64_t k = wgmmaKBlock(gemm.getB().getType()); k && gemm.getTransposeB())
      blocks(gemm.getB(), k);
    gemm.setMmaAttr(MmaAttr::get(ctx, MmaKind::Wgmma, kWgmmaM, part->tileN,
                                 wgmmaK(gemm.getA().getType().getElementType()),
                                 part->warpsM, part->warpsN, a, depth));
    return success();
  }
  if (gemm->hasAttr(kRequireWgmmaAttr)) // T.wgmma_gemm: never mma.sync
    return gemm.emitOpError("is T.wgmma_gemm, which runs on wgmma only, but ")
           << (target.has(TargetFeature::Wgmma)
                   ? "wgmma cannot take these operands (shapes, storage orders or warps; "
                     "T.gemm falls back to mma.sync for them)"
                   : "the target has no wgmma (sm_90a has it; T.gemm runs on mma.sync "
                     "elsewhere)");
  if (wait && *wait > 0)
    return gemm.emitOpError("wg_wait = ")
           << *wait << " needs a gemm that runs on wgmma (sm_90a); this one runs "
                       "on mma.sync, which has no pending groups";
  std::string why;
  part = partitionGemm(gemm, threads, why);
  if (failed(part))
    return gemm.emitOpError(why);
  gemm.setMmaAttr(MmaAttr::get(ctx, MmaKind::MmaSync, kMmaM, kMmaN,
                               mmaSyncK(gemm.getA().getType().getElementType()), part->warpsM,
                               part->warpsN, a, 0));
  return success();
}

/// Whether `op` (or an op nested in it) writes `v`.
bool writes(Operation *op, Value v) {
  WalkResult r = op->walk([&](Operation *inner) {
    Value dst;
    if (auto copy = dyn_cast<CopyOp>(inner))
      dst = copy.getDst();
    else if (auto fill = dyn_cast<FillOp>(inner))
      dst = fill.getDst();
    else if (auto reduce = dyn_cast<ReduceOp>(inner))
      dst = reduce.getDst();
    else if (auto gemm = dyn_cast<GemmOp>(inner))
      dst = gemm.getC();
    else if (auto store = dyn_cast<memref::StoreOp>(inner))
      dst = store.getMemRef();
    else if (auto rmw = dyn_cast<memref::AtomicRMWOp>(inner))
      dst = rmw.getMemref();
    return dst == v ? WalkResult::interrupt() : WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// The first op in `op` (itself or nested) using `v`, if any.
Operation *firstUse(Operation *op, Value v) {
  Operation *found = nullptr;
  op->walk<WalkOrder::PreOrder>([&](Operation *inner) {
    if (llvm::is_contained(inner->getOperands(), v)) {
      found = inner;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// Whether the program issued `gemm` with wg_wait = -1 (no wait).
bool deferred(GemmOp gemm) {
  std::optional<int64_t> wait = gemm.getWgWait();
  return wait && *wait == -1;
}

/// The error for a gemm of depth -1 that no wait completes.
LogicalResult neverWaited(GemmOp gemm) {
  return gemm.emitError("this gemm (wg_wait = -1) is never waited for: add "
                        "T.wait_wgmma(0) after it, before the end of its block");
}

/// A gemm still running at some point of a walk; `carried`: issued in the
/// previous iteration of the loop whose body is walked (left running over
/// the back edge).
struct Pending {
  GemmOp gemm;
  bool carried = false;
};

/// The loop whose body a walk of linkWaits is in (second pass: with the
/// gemms the previous iteration left running).
struct LoopWalk {
  Operation *loop = nullptr;
  Value iv, lowerBound;
  bool second = false;
  SmallVector<Value> staged; // the buffers a pipelined loop stages (pipelinedBuffers)
};

/// Whether `cond` holds in every iteration of `walk`'s loop but its first
/// (`iv > lb`, `iv != lb`, `iv >= lb + 1` for a constant lb, either operand
/// order): 1; in its first only (`iv == lb`, `iv <= lb`): -1; else 0.
int notFirstIteration(Value cond, const LoopWalk &walk) {
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp || !walk.iv)
    return 0;
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  arith::CmpIPredicate pred = cmp.getPredicate();
  using P = arith::CmpIPredicate;
  if (rhs == walk.iv) { // lb < iv: iv > lb
    std::swap(lhs, rhs);
    switch (pred) {
    case P::sgt: pred = P::slt; break;
    case P::slt: pred = P::sgt; break;
    case P::sge: pred = P::sle; break;
    case P::sle: pred = P::sge; break;
    case P::ugt: pred = P::ult; break;
    case P::ult: pred = P::ugt; break;
    case P::uge: pred = P::ule; break;
    case P::ule: pred = P::uge; break;
    default: break; // eq, ne
    }
  }
  if (lhs != walk.iv)
    return 0;
  std::optional<int64_t> lb = getConstantIntValue(walk.lowerBound);
  std::optional<int64_t> c = getConstantIntValue(rhs);
  bool isLb = rhs == walk.lowerBound || (lb && c && *lb == *c);
  bool isLbPlus1 = lb && c && *c == *lb + 1;
  if ((isLb && (pred == P::sgt || pred == P::ugt || pred == P::ne)) ||
      (isLbPlus1 && (pred == P::sge || pred == P::uge)))
    return 1;
  if ((isLb && (pred == P::eq || pred == P::sle || pred == P::ule)) ||
      (isLbPlus1 && (pred == P::slt || pred == P::ult)))
    return -1;
  return 0;
}

/// The most groups the gemms `carried` of `loop`'s body (staging `buffers`) may leave running
/// over its back edge: a pipelined loop needs a stage for each besides the
/// one being read and the one being loaded (an operand the program stages
/// itself, S stages indexed by the iteration: S - 1); unlimited otherwise
/// (writes of their operands in the next iteration are errors of the walk).
int64_t carriedLimit(Operation *loop, ArrayRef<Value> buffers, ArrayRef<GemmOp> carried) {
  auto pipelined = dyn_cast<PipelinedOp>(loop);
  if (!pipelined)
    return std::numeric_limits<int64_t>::max();
  int64_t limit = std::numeric_limits<int64_t>::max();
  for (GemmOp g : carried)
    for (Value v : {g.getA(), g.getB()}) {
      if (int64_t s = iterationStages(pipelined, v))
        limit = std::min(limit, s - 1);
      else if (llvm::is_contained(buffers, v))
        limit = std::min<int64_t>(limit, pipelined.getNumStages() - 2);
    }
  return limit;
}

/// Follows the wgmma groups of one block in program order: which gemms are
/// still running at each op (`pending`, in issue order, updated to those
/// running at the block's end). A gemm left running (depth -1, or a depth
/// the pipeliner allows) completes at the first wgmma wait that leaves fewer
/// groups pending than were issued after it. Until then nothing may touch
/// its accumulator, write its A fragment or its shared operands (the tensor
/// cores are still reading them), except a wgmma accumulating onto the same
/// accumulator (a chain). Each tile.wait_wgmma gets the accumulators it
/// completes as operands. A gemm of depth -1 is completed in its block, or,
/// in a loop's body (T.serial, T.Pipelined), by a wait of the next iteration
/// (and after the loop): the body is walked a second time with the gemms its
/// end leaves running, so that their accumulators and operands are checked
/// until that wait; a pipelined loop then keeps its stages that much longer
/// (`tile.carried_wgmma`, for tile-pipeline-loops). A wait under an `if` on
/// the iteration not being the first completes them on that path (the first
/// iteration has none).
LogicalResult linkWaits(Block &block, SmallVector<Pending> &pending, const LoopWalk &walk);

/// A loop op: its body walked once as is and, when that leaves gemms of
/// depth -1 running, again with them carried in; they stay pending after it.
LogicalResult linkLoopWaits(Operation *op, Block &body, Value iv, Value lowerBound,
                            SmallVector<Pending> &pending) {
  LoopWalk first{op, iv, lowerBound, false, {}};
  if (auto pipelined = dyn_cast<PipelinedOp>(op))
    first.staged = pipelinedBuffers(pipelined);
  SmallVector<Pending> left;
  if (failed(linkWaits(body, left, first)))
    return failure();
  SmallVector<GemmOp> carried;
  for (Pending &p : left)
    if (deferred(p.gemm))
      carried.push_back(p.gemm);
  if (carried.empty())
    return success();
  // A wait under an `if` on the iteration not being the first runs in every
  // iteration instead, before the `if` (in the first it completes early
  // gemms that iteration issued before it, all but its `pending` latest):
  // ptxas, which cannot tell the first iteration's path from the others,
  // would otherwise serialize the wgmmas whose accumulators are read after
  // it (C7514).
  bool hoisted = false;
  for (auto branch : llvm::make_early_inc_range(body.getOps<scf::IfOp>())) {
    int f = notFirstIteration(branch.getCondition(), first);
    Region &later = f > 0 ? branch.getThenRegion() : branch.getElseRegion();
    if (!f || later.empty())
      continue;
    for (auto wait : llvm::make_early_inc_range(later.front().getOps<WaitWgmmaOp>())) {
      wait->moveBefore(branch);
      hoisted = true;
    }
  }
  if (hoisted) {
    left.clear();
    carried.clear();
    if (failed(linkWaits(body, left, first)))
      return failure();
    for (Pending &p : left)
      if (deferred(p.gemm))
        carried.push_back(p.gemm);
  }
  SmallVector<Pending> again;
  for (Pending &p : left)
    again.push_back({p.gemm, true});
  LoopWalk second = first;
  second.second = true;
  if (failed(linkWaits(body, again, second)))
    return failure();
  for (Pending &p : again)
    if (p.carried && deferred(p.gemm))
      return p.gemm.emitError("this gemm (wg_wait = -1) is still running at the end of the "
                              "next iteration: a gemm may stay running into the next "
                              "iteration only, where a T.wait_wgmma must complete it");
  // mma.sync completes in program order: only wgmma groups stay running.
  int64_t groups = 0;
  for (Pending &p : left)
    if (MmaAttr mma = p.gemm.getMmaAttr(); mma && mma.getKind() == MmaKind::Wgmma)
      ++groups;
  int64_t limit = carriedLimit(op, first.staged, carried);
  if (groups > limit)
    return carried.front().emitError("this gemm (wg_wait = -1) stays running into the next "
                                     "iteration, with ")
           << groups << " wgmma group(s) in all, but its loop's stages allow " << limit
           << ": each group running over the back edge needs a stage of its operands "
              "besides the one read and the one loaded (raise num_stages)";
  if (auto pipelined = dyn_cast<PipelinedOp>(op); pipelined && groups)
    pipelined->setAttr(kCarriedWgmmaAttr,
                       IntegerAttr::get(IntegerType::get(op->getContext(), 64), groups));
  for (GemmOp g : carried)
    pending.push_back({g, false}); // the last iteration's, after the loop
  return success();
}

LogicalResult linkWaits(Block &block, SmallVector<Pending> &pending, const LoopWalk &walk) {
  // Writes of a buffer the loop stages go to another stage than the one a
  // gemm of the previous iteration still reads.
  auto restaged = [&](Value v) {
    auto pipelined = dyn_cast_or_null<PipelinedOp>(walk.loop);
    return pipelined &&
           (llvm::is_contained(walk.staged, v) || iterationStages(pipelined, v) >= 2);
  };
  auto check = [&](Operation *op, GemmOp chainedOnto) -> LogicalResult {
    for (Pending &p : pending) {
      GemmOp g = p.gemm;
      auto report = [&](Operation *at, StringRef what, Value v) {
        InFlightDiagnostic d = at->emitError()
                               << what << " " << bufferName(v)
                               << " while the wgmma of the gemm issued with wg_wait = -1 (or "
                                  "left pending) may still be running"
                               << (p.carried ? " (issued in the previous iteration)" : "")
                               << ": wait for it first (T.wait_wgmma)";
        d.attachNote(g.getLoc()) << "the gemm";
        return failure();
      };
      if (!(chainedOnto && chainedOnto.getC() == g.getC()))
        if (Operation *use = firstUse(op, g.getC()))
          return report(use, "touches the accumulator", g.getC());
      for (Value v : {g.getA(), g.getB()})
        if (writes(op, v) && !(p.carried && restaged(v)))
          return report(firstUse(op, v), "writes the operand", v);
    }
    return success();
  };
  for (Operation &op : block) {
    if (auto gemm = dyn_cast<GemmOp>(&op)) {
      MmaAttr mma = gemm.getMmaAttr();
      bool wgmma = mma && mma.getKind() == MmaKind::Wgmma;
      if (!wgmma && !deferred(gemm)) {
        if (failed(check(&op, nullptr)))
          return failure();
        continue;
      }
      if (failed(check(&op, gemm)))
        return failure();
      // A gemm with wg_wait = -1 is checked alike on mma.sync (which
      // completes it in program order), so a program that is wrong on sm_90a
      // is an error on every target.
      pending.push_back({gemm, false});
      if (wgmma && mma.getDepth() >= 0 && int64_t(pending.size()) > mma.getDepth())
        pending.erase(pending.begin(), pending.end() - mma.getDepth());
      continue;
    }
    if (auto wait = dyn_cast<WaitWgmmaOp>(&op)) {
      int64_t keep = std::min<int64_t>(wait.getPending(), pending.size());
      SmallVector<Value> done;
      if (walk.second) // the first pass's, and those of the carried gemms
        llvm::append_range(done, wait.getFragments());
      for (Pending p : ArrayRef(pending).drop_back(keep))
        if (p.gemm.getMmaAttr().getKind() == MmaKind::Wgmma && !llvm::is_contained(done, p.gemm.getC()))
          done.push_back(p.gemm.getC());
      wait.getFragmentsMutable().assign(done);
      pending.erase(pending.begin(), pending.end() - keep);
      continue;
    }
    if (auto loop = dyn_cast<PipelinedOp>(&op)) {
      if (failed(check(&op, nullptr)) ||
          failed(linkLoopWaits(&op, loop.getBody().front(), loop.getBody().front().getArgument(0),
                               loop.getLowerBound(), pending)))
        return failure();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(&op)) {
      if (failed(check(&op, nullptr)) ||
          failed(linkLoopWaits(&op, *loop.getBody(), loop.getInductionVar(),
                               loop.getLowerBound(), pending)))
        return failure();
      continue;
    }
    if (auto branch = dyn_cast<scf::IfOp>(&op)) {
      // Each branch walked with what is running: a wait in one completes
      // gemms on its path only. Gemms a branch issues are completed in it.
      int first = notFirstIteration(branch.getCondition(), walk);
      SmallVector<Pending> after;
      for (Region *r : {&branch.getThenRegion(), &branch.getElseRegion()}) {
        bool onlyFirst = (r == &branch.getThenRegion()) ? first < 0 : first > 0;
        SmallVector<Pending> path;
        for (Pending &p : pending)
          if (!(onlyFirst && p.carried)) // the first iteration has none
            path.push_back(p);
        if (!r->empty()) {
          if (failed(linkWaits(r->front(), path, walk)))
            return failure();
          for (Pending &p : path)
            if (deferred(p.gemm) && !llvm::any_of(ArrayRef(pending), [&](const Pending &q) {
                  return q.gemm == p.gemm && q.carried == p.carried;
                }))
              return neverWaited(p.gemm);
        }
        // Completion is in issue order: each path leaves a suffix of what
        // ran before; after the `if`, the longer one may still run.
        if (path.size() > after.size())
          after = path;
      }
      llvm::erase_if(after, [&](const Pending &p) {
        return !llvm::any_of(ArrayRef(pending), [&](const Pending &q) {
          return q.gemm == p.gemm && q.carried == p.carried;
        });
      });
      pending = after;
      continue;
    }
    if (failed(check(&op, nullptr)))
      return failure();
    for (Region &r : op.getRegions())
      for (Block &inner : r) {
        SmallVector<Pending> own;
        if (failed(linkWaits(inner, own, LoopWalk())))
          return failure();
        for (Pending &p : own)
          if (deferred(p.gemm))
            return neverWaited(p.gemm);
      }
  }
  return success();
}


/// A wgmma gemm followed right away (only pure ops between) by a wgmma gemm
/// of the same shape accumulating onto the same registers (MLA's latent,
/// then rope scores) waits for nothing (depth -1): the second one's wait
/// completes both, and the tensor cores run the two back to back instead of
/// draining between.
void chainGemms(ModuleOp module) {
  module.walk([](GemmOp gemm) {
    MmaAttr mma = gemm.getMmaAttr();
    Operation *after = nextEffectful(gemm);
    auto next = dyn_cast_or_null<GemmOp>(after);
    MmaAttr nextMma = next ? next.getMmaAttr() : MmaAttr();
    if (!mma || mma.getKind() != MmaKind::Wgmma || mma.getDepth() < 0 || !nextMma ||
        gemm.getWgWait() || next.getC() != gemm.getC() || next.getClearAccum() ||
        nextMma.getKind() != MmaKind::Wgmma || nextMma.getDepth() < 0 ||
        nextMma.getN() != mma.getN() || nextMma.getK() != mma.getK())
      return;
    gemm.setMmaAttr(MmaAttr::get(gemm.getContext(), mma.getKind(), mma.getM(), mma.getN(),
                                 mma.getK(), mma.getWarpsM(), mma.getWarpsN(), mma.getA(), -1));
  });
}

struct TileSelectMma : mlir::tile::impl::TileSelectMmaBase<TileSelectMma> {
  void runOnOperation() final {
    if (failed(selectMma(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::selectMma(ModuleOp module) {
  splitBuffersPerLoop(module); // the loops as tile-pipeline-loops will see them
  WalkResult result = module.walk([&](GemmOp gemm) {
    // Each gemm's own target: nested modules may name different ones.
    FailureOr<TargetAttr> target = TargetAttr::require(gemm, DEBUG_TYPE);
    if (failed(target))
      return WalkResult::interrupt();
    return failed(selectGemm(gemm, *target)) ? WalkResult::interrupt()
                                             : WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  chainGemms(module);
  result = module.walk([&](KernelOp kernel) {
    SmallVector<Pending> pending;
    if (failed(linkWaits(kernel.getBody().front(), pending, LoopWalk())))
      return WalkResult::interrupt();
    for (Pending &p : pending)
      if (deferred(p.gemm)) {
        (void)neverWaited(p.gemm);
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

Operation *mlir::tile::nextEffectful(Operation *op) {
  Operation *next = op->getNextNode();
  while (next && ((isPure(next) && next->getNumRegions() == 0) || isa<BarrierWaitOp>(next)))
    next = next->getNextNode();
  return next;
}
