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
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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

/// How a register of the loop reaches a fragment indexed by outer values
/// too (OuterIndexing): the split shape, its outer dimensions and their
/// values in this register's clone, and the fragment's registers.
struct OuterRegs {
  SmallVector<int64_t> shape;
  SmallVector<int64_t> dims;
  SmallVector<OpFoldResult> values;
  OuterLayout layout;
};

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
    // Accesses of the thread's own registers at any index (a reducer's
    // partials, reads of a fragment every thread holds whole).
    SmallVector<Operation *> privateAccesses;
    // Fragments indexed by outer values too (lse[k, j]): those dimensions
    // and the fragment's registers for them.
    DenseMap<Operation *, std::pair<OuterIndexing, OuterLayout>> outerAccesses;
    WalkResult mismatch = loop.getBody().walk([&](Operation *op) {
      auto [memref, indices] = accessed(op);
      std::optional<Fragment> fragment =
          memref ? fragmentOf(memref, Value()) : std::optional<Fragment>();
      if (!fragment)
        return WalkResult::advance();
      if (privateAccess(op) != PrivateAccess::Layout) {
        privateAccesses.push_back(op);
        return WalkResult::advance();
      }
      if (std::optional<OuterIndexing> indexing =
              outerIndexing(indices, body, loop.getShape())) {
        // lse[k, j] in a loop over j, a[k, i] in one over (i, j): register
        // (k's position) x the registers a position holds + the loop's
        // register's there.
        auto type = cast<MemRefType>(memref.getType());
        std::string why;
        FailureOr<OuterLayout> placed =
            outerLayout(*layout, loop.getShape(), type.getShape(), *indexing, why);
        if (failed(placed) || !equivalentLayouts(placed->layout, fragment->layout)) {
          op->emitOpError("reads or writes a fragment whose layout does not hold, with "
                          "each of the loop's elements, the whole range of its other "
                          "dimensions");
          return WalkResult::interrupt();
        }
        outerAccesses[op] = {*indexing, *placed};
        return WalkResult::advance();
      }
      if (indices.size() > body.getNumArguments()) {
        op->emitOpError("indexes a fragment of more dimensions than the loop by values "
                        "the loop changes other than its own indices");
        return WalkResult::interrupt();
      }
      if (indices.size() < body.getNumArguments()) {
        std::optional<SmallVector<int64_t>> dims = droppedDims(indices, body.getArguments());
        std::string why;
        FailureOr<SlicedLayout> sliced =
            dims ? sliceRows(*layout, loop.getShape(), *dims, why)
                 : FailureOr<SlicedLayout>(failure());
        if (failed(sliced) || !equivalentLayouts(sliced->layout, fragment->layout)) {
          op->emitOpError("reads or writes a row fragment that does not hold "
                          "the rows of the loop's elements");
          return WalkResult::interrupt();
        }
        rowAccesses[op] = sliced->sourceToResult;
        return WalkResult::advance();
      }
      // f[i, j], or the loop's indices in another order (f[j, i]): the loop
      // sees the fragment's layout with its dimensions permuted.
      std::optional<SmallVector<int64_t>> perm = indexPermutation(indices, body.getArguments());
      if (!perm || !equivalentLayouts(loopLayoutOf(fragment->layout, *perm), *layout)) {
        op->emitOpError("reads or writes a fragment whose layout differs from "
                        "the parallel loop's; layout conversion is not "
                        "supported yet");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (mismatch.wasInterrupted())
      return failure();
    // Vectors of runs where the loop reads and writes fragments in its own
    // layout (f[i, j]: register r of the loop is register r of the fragment)
    // and reads any other fragment at one register a run: a row vector's
    // (m[i]) or, of a fragment every thread holds whole, the element the run
    // shares (s[0], s[i]; not s[i, j]).
    Value last = body.getArguments().empty() ? Value() : body.getArguments().back();
    if (int64_t width = runWidth(loop, *layout);
        width > 1 && outerAccesses.empty() &&
        llvm::all_of(privateAccesses, [&](Operation *op) {
          auto load = dyn_cast<memref::LoadOp>(op);
          return load && privateAccess(op) == PrivateAccess::WholeTile &&
                 !llvm::is_contained(load.getIndices(), last);
        }) &&
        llvm::all_of(rowAccesses, [&](auto &access) {
          return sharedByRuns(access.second, width);
        }))
      return vectorized(loop, *layout, width, rowAccesses, privateAccesses, rewriter);

    // Atomic adds a run of registers at a time (atomicRunWidth): the lanes
    // of each body add, collected over the run's registers.
    SmallVector<Operation *> runAtomics;
    int64_t atomicWidth = padded(loop, *layout) ? 1 : atomicRunWidth(loop, *layout, runAtomics);
    SmallVector<Operation *> bodyOps = llvm::to_vector(llvm::make_pointer_range(body));
    DenseMap<Operation *, SmallVector<memref::AtomicRMWOp>> runLanes;
    // Each thread runs the iterations of the elements it holds, unrolled so
    // register indices are constants.
    for (int64_t r = 0; r < layout->getRegs(); ++r) {
      IRMapping mapping;
      SmallVector<Value> index =
          applyLayout(rewriter, loop.getLoc(), *layout, info.at(loop).tid, r);
      OpBuilder::InsertionGuard guard(rewriter);
      guardOverhang(rewriter, loop, *layout, r, index);
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
      DenseSet<Operation *> privateRegs;
      for (Operation *orig : privateAccesses)
        privateRegs.insert(mapping.lookup(orig));
      // The outer values as this register's clone computes them.
      DenseMap<Operation *, OuterRegs> outerRegs;
      for (auto &[orig, placed] : outerAccesses) {
        auto &[indexing, layout] = placed;
        OuterRegs &regs = outerRegs[mapping.lookup(orig)];
        auto type = cast<MemRefType>(accessed(orig).first.getType());
        regs.shape = indexing.splitShape(type.getShape());
        regs.dims = indexing.outer;
        for (OpFoldResult v : indexing.outerValues)
          regs.values.push_back(
              isa<Value>(v) ? OpFoldResult(mapping.lookupOrDefault(cast<Value>(v))) : v);
        regs.layout = layout;
      }
      DenseSet<Operation *> grouped; // lanes of a vector atomic lowered with lane 0
      for (auto [i, clone] : llvm::enumerate(clones)) {
        if (grouped.contains(clone))
          continue;
        if (clone->hasAttr(kVectorAtomicAttr)) {
          if (failed(lowerVectorGroup(rewriter, clones, i, grouped)))
            return failure();
          continue;
        }
        if (atomicWidth > 1 && llvm::is_contained(runAtomics, bodyOps[i])) {
          runLanes[bodyOps[i]].push_back(cast<memref::AtomicRMWOp>(clone));
          continue;
        }
        if (failed(rewriteAccesses(rewriter, clone, r, rowRegs, privateRegs, outerRegs)))
          return failure();
      }
      if (atomicWidth > 1 && r % atomicWidth == atomicWidth - 1)
        for (Operation *atomic : runAtomics) { // after the run's last register
          SmallVector<memref::AtomicRMWOp> lanes = std::move(runLanes[atomic]);
          runLanes[atomic].clear();
          lowerVectorAtomic(rewriter, atomic->getLoc(), lanes);
        }
    }
    rewriter.eraseOp(loop);
    return success();
  }

  /// Whether register `r` of some thread lies past the loop's extent (its
  /// first index past the first extent): a padded layout, which
  /// tile-infer-layout gives loops of no fragment whose extent the threads
  /// do not divide. (A replicated layout has more slots than iterations too,
  /// each inside.)
  static bool overhangs(ParallelOp loop, LayoutAttr layout, int64_t r) {
    int64_t numel = 1;
    for (int64_t d : loop.getShape())
      numel *= d;
    if (layout.getThreads() * layout.getRegs() == numel) // each slot an iteration
      return false;
    int64_t extent = loop.getShape().front();
    for (int64_t t = 0; t < layout.getThreads(); ++t)
      if (layout.apply(t, r).front() >= extent)
        return true;
    return false;
  }

  /// A padded layout (its last register overhangs: see overhangs).
  static bool padded(ParallelOp loop, LayoutAttr layout) {
    return overhangs(loop, layout, layout.getRegs() - 1);
  }

  /// Where register `r` overhangs, its iterations go inside an scf.if on the
  /// first index, where `b` is left.
  static void guardOverhang(OpBuilder &b, ParallelOp loop, LayoutAttr layout, int64_t r,
                            ArrayRef<Value> index) {
    if (!overhangs(loop, layout, r))
      return;
    int64_t extent = loop.getShape().front();
    Location loc = loop.getLoc();
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index.front(),
                                         arith::ConstantIndexOp::create(b, loc, extent));
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
  }

  /// The longest run of consecutive registers a thread holds along the
  /// loop's last dimension (consecutive elements from a multiple of the run)
  /// that the body can move as one vector (parallelVectorWidth: a layout
  /// placed by a fragment may hold shorter runs than that); else 1.
  static int64_t runWidth(ParallelOp loop, LayoutAttr layout) {
    int64_t width = std::min<int64_t>(parallelVectorWidth(loop), layout.getRegs());
    while (width >= 2 && !holdsRuns(layout, width))
      width /= 2;
    return std::max<int64_t>(width, 1);
  }

  /// Whether each run of `width` registers from register 0 reads one row
  /// register (`rowRegs`: the row register each loop register reads).
  static bool sharedByRuns(ArrayRef<int64_t> rowRegs, int64_t width) {
    for (size_t r = 0; r < rowRegs.size(); ++r)
      if (rowRegs[r] != rowRegs[r - r % width])
        return false;
    return true;
  }

  /// Whether every thread's registers, in runs of `width` from register 0,
  /// hold consecutive elements of the last dimension from a multiple of it.
  static bool holdsRuns(LayoutAttr layout, int64_t width) {
    if (layout.getRegs() % width)
      return false;
    LayoutEvaluator eval(layout);
    SmallVector<int64_t> first, at;
    for (int64_t t = 0; t < layout.getThreads(); ++t)
      for (int64_t r = 0; r < layout.getRegs(); r += width) {
        eval.apply(t, r, first);
        if (first.back() % width)
          return false;
        for (int64_t e = 1; e < width; ++e) {
          eval.apply(t, r + e, at);
          at.back() -= e;
          if (at != first)
            return false;
        }
      }
    return true;
  }

  /// Atomic adds of a loop over fragment registers that a target with vector
  /// reductions (sm_90) adds a run of registers at a time: `atomics` (the
  /// body's adds into global tensors, results unused, f32 / f16 / bf16) and
  /// the run's width, when each add's last index is the loop's last index
  /// plus a value that index does not change (a multiple of the width), its
  /// other indices do not change with it, the layout holds runs of that many
  /// consecutive elements (an mma accumulator's pairs), and nothing else in
  /// the body stores or reads those tensors; else 1. The runs' adds are one
  /// `red.global.add.vN` where a whole run lies inside the tensor and is
  /// aligned to its bytes (checked at run time), else each its own add.
  static int64_t atomicRunWidth(ParallelOp loop, LayoutAttr layout,
                                SmallVectorImpl<Operation *> &atomics) {
    Block &body = loop.getBody().front();
    if (body.getNumArguments() == 0)
      return 1;
    Value j = body.getArguments().back();
    int64_t width = 16;
    DenseSet<Value> tensors;
    for (Operation &op : body) {
      // No branch, and nothing else the deferred adds could be reordered
      // with (an atomic's memory-order fences).
      if (op.getNumRegions() || !isa<arith::ArithDialect, math::MathDialect,
                                     memref::MemRefDialect>(op.getDialect()))
        return 1;
      auto atomic = dyn_cast<memref::AtomicRMWOp>(op);
      if (!atomic)
        continue;
      std::optional<RunIndex> run = runIndex(atomic.getIndices(), j, body);
      if (!vectorReducibleAdd(atomic) || !run)
        return 1;
      Type elem = atomic.getValue().getType();
      auto type = atomic.getMemRefType();
      width = std::min(width, run->limit);
      width = std::min<int64_t>(width, 16 / (elem.getIntOrFloatBitWidth() / 8));
      width = stridedVectorLimit(type, width);
      tensors.insert(atomic.getMemref());
      atomics.push_back(atomic);
    }
    if (atomics.empty())
      return 1;
    for (Operation &op : body) {
      auto [memref, indices] = accessed(&op);
      if (isa<memref::StoreOp>(op) && getPlace(cast<MemRefType>(memref.getType())) != Place::Fragment)
        return 1;
      if (memref && tensors.contains(memref) && !isa<memref::AtomicRMWOp>(op))
        return 1;
    }
    width = std::min<int64_t>(width, layout.getRegs());
    while (width >= 2 && !holdsRuns(layout, width))
      width /= 2;
    return std::max<int64_t>(width, 1);
  }

  /// The body once per run of `width` registers: loads and stores of the
  /// run as one guarded vector access (as tile copies make them), a
  /// fragment's as the run's registers gathered into a vector, arithmetic
  /// on vectors, values the run shares (indices, constants) as scalars.
  LogicalResult vectorized(ParallelOp loop, LayoutAttr layout, int64_t width,
                           const DenseMap<Operation *, SmallVector<int64_t>> &rowAccesses,
                           ArrayRef<Operation *> wholeReads,
                           ConversionPatternRewriter &b) const {
    Block &body = loop.getBody().front();
    Location loc = loop.getLoc();
    auto sideOf = [&](Value memref) {
      TileSide side;
      side.buffer = b.getRemappedValue(memref);
      side.type = cast<MemRefType>(side.buffer.getType());
      side.place = Place::Global;
      return side;
    };
    for (int64_t r = 0; r < layout.getRegs(); r += width) {
      IRMapping mapping;
      SmallVector<Value> index = applyLayout(b, loc, layout, info.at(loop).tid, r);
      for (auto [iv, value] : llvm::zip(body.getArguments(), index))
        mapping.map(iv, value);
      OpBuilder::InsertionGuard guard(b);
      guardOverhang(b, loop, layout, r, index); // a run is wholly inside or past the end
      DenseSet<Value> runs;  // values that are vectors of the run
      DenseSet<Value> fromJ{mapping.lookup(body.getArguments().back())}; // run indices
      auto varies = [&](ValueRange indices) {
        return llvm::any_of(indices, [&](Value i) { return fromJ.contains(mapping.lookupOrDefault(i)); });
      };
      auto vectorOf = [&](Value v, Type elem) -> Value {
        Value mapped = mapping.lookupOrDefault(v);
        if (runs.contains(mapped))
          return mapped;
        return vector::BroadcastOp::create(b, loc, VectorType::get({width}, elem), mapped);
      };
      // The run's registers of a fragment.
      auto fragmentRegs = [&](Value memref) {
        std::optional<Fragment> fragment = fragmentOf(memref, b.getRemappedValue(memref));
        return fragment ? fragment->regs : Value();
      };
      auto firstReg = [&](Location at) {
        return ValueRange{arith::ConstantIndexOp::create(b, at, r).getResult()};
      };
      for (Operation &op : body) {
        // One register the whole run reads: a row vector's (sharedByRuns), or
        // that of a fragment every thread holds whole at the run's element.
        auto row = rowAccesses.find(&op);
        if (row != rowAccesses.end() || llvm::is_contained(wholeReads, &op)) {
          auto load = cast<memref::LoadOp>(op);
          Value reg;
          if (row != rowAccesses.end()) {
            reg = arith::ConstantIndexOp::create(b, op.getLoc(), row->second[r]);
          } else {
            SmallVector<Value> at;
            for (Value i : load.getIndices())
              at.push_back(mapping.lookupOrDefault(i));
            reg = ownRegister(b, op.getLoc(), load.getMemRef(), at);
          }
          mapping.map(load.getResult(),
                      memref::LoadOp::create(b, op.getLoc(), fragmentRegs(load.getMemRef()), reg)
                          .getResult());
          continue;
        }
        // A fragment in the loop's layout: the run's registers, consecutive.
        if (auto load = dyn_cast<memref::LoadOp>(op); load && fragmentRegs(load.getMemRef())) {
          Value vec = vector::LoadOp::create(b, op.getLoc(),
                                             VectorType::get({width}, load.getType()),
                                             fragmentRegs(load.getMemRef()), firstReg(op.getLoc()));
          mapping.map(load.getResult(), vec);
          runs.insert(vec);
          continue;
        }
        if (auto store = dyn_cast<memref::StoreOp>(op); store && fragmentRegs(store.getMemRef())) {
          vector::StoreOp::create(b, op.getLoc(),
                                  vectorOf(store.getValue(), store.getValue().getType()),
                                  fragmentRegs(store.getMemRef()), firstReg(op.getLoc()));
          continue;
        }
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          SmallVector<Value> at;
          for (Value i : load.getIndices())
            at.push_back(mapping.lookupOrDefault(i));
          bool shared = getPlace(load.getMemRefType()) == Place::Shared;
          Type elem = load.getType();
          if (!varies(load.getIndices())) { // one element for the whole run
            if (shared) {
              b.clone(op, mapping);
              continue;
            }
            Value tensor = b.getRemappedValue(load.getMemRef());
            auto guard = scf::IfOp::create(b, op.getLoc(), TypeRange{elem},
                                           insideBounds(b, op.getLoc(), tensor, at), true);
            OpBuilder::InsertionGuard g(b);
            b.setInsertionPointToEnd(guard.thenBlock());
            scf::YieldOp::create(b, op.getLoc(),
                                 memref::LoadOp::create(b, op.getLoc(), tensor, at).getResult());
            b.setInsertionPointToEnd(guard.elseBlock());
            scf::YieldOp::create(
                b, op.getLoc(),
                arith::ConstantOp::create(b, op.getLoc(), elem, b.getZeroAttr(elem)).getResult());
            mapping.map(load.getResult(), guard.getResult(0));
            continue;
          }
          // Shared buffers: one vector access, aligned to the run (the
          // buffer's layout is applied when it is lowered).
          auto vecType = VectorType::get({width}, elem);
          Value vec = shared ? vector::LoadOp::create(
                                   b, op.getLoc(), vecType, load.getMemRef(), at, false,
                                   llvm::Align(width * elem.getIntOrFloatBitWidth() / 8))
                                   .getResult()
                             : loadElements(b, op.getLoc(), sideOf(load.getMemRef()), at, width);
          mapping.map(load.getResult(), vec);
          runs.insert(vec);
          continue;
        }
        if (auto store = dyn_cast<memref::StoreOp>(op)) {
          SmallVector<Value> at;
          for (Value i : store.getIndices())
            at.push_back(mapping.lookupOrDefault(i));
          Type elem = store.getValue().getType();
          Value vec = vectorOf(store.getValue(), elem);
          if (getPlace(store.getMemRefType()) == Place::Shared)
            vector::StoreOp::create(b, op.getLoc(), vec, store.getMemRef(), at, false,
                                    llvm::Align(width * elem.getIntOrFloatBitWidth() / 8));
          else
            storeElements(b, op.getLoc(), sideOf(store.getMemRef()), at, vec, width);
          continue;
        }
        if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
          // A float add into a global tensor (parallelVectorWidth took it):
          // the run's adds as one vector reduction where it can be.
          SmallVector<Value> at;
          for (Value i : atomic.getIndices())
            at.push_back(mapping.lookupOrDefault(i));
          Type elem = atomic.getValue().getType();
          Value vec = vectorOf(atomic.getValue(), elem);
          SmallVector<memref::AtomicRMWOp> lanes;
          for (int64_t e = 0; e < width; ++e) {
            SmallVector<Value> where = at;
            if (e)
              where.back() = arith::AddIOp::create(
                  b, op.getLoc(), at.back(), arith::ConstantIndexOp::create(b, op.getLoc(), e));
            Value v = vector::ExtractOp::create(b, op.getLoc(), vec, e);
            lanes.push_back(memref::AtomicRMWOp::create(b, op.getLoc(), atomic.getKind(), v,
                                                        atomic.getMemref(), where));
          }
          lowerVectorAtomic(b, op.getLoc(), lanes);
          continue;
        }
        bool onRuns = llvm::any_of(op.getOperands(), [&](Value v) {
          return runs.contains(mapping.lookupOrDefault(v));
        });
        if (!onRuns) {
          Operation *copy = b.clone(op, mapping);
          if (varies(op.getOperands()))
            for (Value r : copy->getResults())
              fromJ.insert(r);
          continue;
        }
        // Elementwise: the same op on vectors of the run.
        OperationState state(op.getLoc(), op.getName());
        for (Value v : op.getOperands())
          state.addOperands(vectorOf(v, v.getType()));
        for (Type t : op.getResultTypes())
          state.addTypes(VectorType::get({width}, t));
        state.addAttributes(op.getAttrs());
        Operation *vop = b.create(state);
        for (auto [old, res] : llvm::zip(op.getResults(), vop->getResults())) {
          mapping.map(old, res);
          runs.insert(res);
        }
      }
    }
    b.eraseOp(loop);
    return success();
  }

  /// Lowers the T.atomic_addx2 / x4 whose lane 0 is `ops[i]` (its lanes: the
  /// memref.atomic_rmw ops that follow it in `ops`, in lane order, added to
  /// `grouped`) before lane 0.
  LogicalResult lowerVectorGroup(ConversionPatternRewriter &b, ArrayRef<Operation *> ops,
                                 size_t i, DenseSet<Operation *> &grouped) const {
    auto width = ops[i]->getAttrOfType<IntegerAttr>(kVectorAtomicAttr);
    SmallVector<memref::AtomicRMWOp> lanes;
    for (int64_t k = 0; k < width.getInt(); ++k) {
      auto lane = i + k < ops.size() ? dyn_cast<memref::AtomicRMWOp>(ops[i + k])
                                     : memref::AtomicRMWOp();
      auto at = lane ? lane->getAttrOfType<IntegerAttr>(kVectorLaneAttr) : IntegerAttr();
      if (!at || at.getInt() != k)
        return ops[i]->emitOpError("has lane ")
               << k << " of its T.atomic_addx" << width.getInt() << " missing or apart";
      lanes.push_back(lane);
      grouped.insert(lane);
    }
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPoint(ops[i]);
    lowerVectorAtomic(b, ops[i]->getLoc(), lanes);
    return success();
  }

  /// T.atomic_addx2 / x4 into a global tensor: `lanes` (memref.atomic_rmw
  /// adds of consecutive elements of the last dimension, in order). Where
  /// the whole group lies inside the tensor, its first element is aligned
  /// to the group's bytes and the target has vector reductions (sm_90:
  /// `red.global.add.v2/v4`, PTX 8.1), one reduction; elsewhere, and for a
  /// group straddling the tensor's end or unaligned, each element's own
  /// atomic add where it lies inside.
  void lowerVectorAtomic(ConversionPatternRewriter &b, Location loc,
                         SmallVectorImpl<memref::AtomicRMWOp> &lanes) const {
    Value buffer = b.getRemappedValue(lanes.front().getMemref());
    SmallVector<Value> inside;
    for (memref::AtomicRMWOp lane : lanes)
      inside.push_back(insideBounds(b, loc, buffer, lane.getIndices()));
    // Each element's own add where it lies inside: guards where the lanes
    // are, or at the end of `block`.
    auto guardEach = [&](Block *block) {
      for (auto [lane, in] : llvm::zip(lanes, inside)) {
        OpBuilder at(lane);
        if (block)
          at.setInsertionPoint(block->getTerminator());
        auto guard = scf::IfOp::create(at, loc, in, /*withElseRegion=*/false);
        b.moveOpBefore(lane, guard.thenBlock()->getTerminator());
      }
    };
    Type elem = lanes.front().getValue().getType();
    TargetAttr target = TargetAttr::lookup(lanes.front());
    // Lanes of a tensor stored with another last stride than 1 are not adjacent.
    int64_t n = lanes.size();
    if (!target || !target.has(TargetFeature::VectorReduce) ||
        !(elem.isF32() || elem.isF16() || elem.isBF16()) ||
        stridedVectorLimit(cast<MemRefType>(buffer.getType()), n) < n) {
      guardEach(nullptr);
      return;
    }
    // The first element's address: the descriptor's aligned pointer plus its
    // offset and the indices along the strides, in bytes. A vector reduction
    // needs it aligned to the vector's bytes (a row length the width does not
    // divide leaves some rows' groups unaligned: those add element by element).
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
    Value linear = meta.getOffset();
    for (auto [index, stride] : llvm::zip(lanes.front().getIndices(), meta.getStrides()))
      linear = arith::AddIOp::create(b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
    int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
    Value bytes = arith::MulIOp::create(b, loc, linear,
                                        arith::ConstantIndexOp::create(b, loc, elemBytes));
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    Value address = arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                                 arith::AddIOp::create(b, loc, base, bytes));
    int64_t vectorBytes = elemBytes * (int64_t)lanes.size();
    Value misalignment = arith::AndIOp::create(
        b, loc, address, arith::ConstantIntOp::create(b, loc, b.getI64Type(), vectorBytes - 1));
    Value all = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, misalignment,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
    for (Value in : inside)
      all = arith::AndIOp::create(b, loc, all, in);
    auto whole = scf::IfOp::create(b, loc, all, /*withElseRegion=*/true);
    {
      OpBuilder tb = OpBuilder::atBlockBegin(whole.thenBlock());
      SmallVector<Value> operands{address};
      std::string constraints = "l", list;
      for (auto [k, lane] : llvm::enumerate(lanes)) {
        Value v = lane.getValue();
        if (!elem.isF32()) // 16-bit registers hold f16 and bf16 bits alike
          v = arith::BitcastOp::create(tb, loc, tb.getI16Type(), v);
        operands.push_back(v);
        constraints += elem.isF32() ? ",f" : ",h";
        list += (k ? ", $" : "$") + std::to_string(k + 1);
      }
      std::string type = elem.isF32() ? "f32" : elem.isF16() ? "f16" : "bf16";
      std::string ptx = "{\n.reg .u64 ga;\ncvta.to.global.u64 ga, $0;\nred.global.add" +
                        std::string(elem.isF32() ? "" : ".noftz") + ".v" +
                        std::to_string(lanes.size()) + "." + type + " [ga], {" + list +
                        "};\n}";
      LLVM::InlineAsmOp::create(tb, loc, TypeRange{}, operands, ptx, constraints,
                                /*has_side_effects=*/true, /*is_align_stack=*/false,
                                LLVM::TailCallKind::None,
                                LLVM::AsmDialectAttr::get(b.getContext(),
                                                          LLVM::AsmDialect::AD_ATT),
                                ArrayAttr());
    }
    guardEach(whole.elseBlock());
  }

  /// Redirects fragment accesses to register `reg` and guards global ones.
  LogicalResult rewriteAccesses(ConversionPatternRewriter &b, Operation *root, int64_t reg,
                                const DenseMap<Operation *, int64_t> &rowRegs,
                                const DenseSet<Operation *> &privateRegs,
                                const DenseMap<Operation *, OuterRegs> &outerRegs) const {
    SmallVector<Operation *> accesses;
    root->walk([&](Operation *op) {
      if (isa<memref::LoadOp, memref::StoreOp, memref::AtomicRMWOp>(op))
        accesses.push_back(op);
    });
    DenseSet<Operation *> grouped; // lanes of a vector atomic lowered with lane 0
    for (auto [i, op] : llvm::enumerate(accesses)) {
      if (grouped.contains(op))
        continue;
      OpBuilder::InsertionGuard insertion(b);
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (op->hasAttr(kVectorAtomicAttr)) {
        if (failed(lowerVectorGroup(b, accesses, i, grouped)))
          return failure();
        continue;
      }
      if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op)) {
        // A reducer's update (T.alloc_reducer): the running thread's own
        // partial, read, combined and written back in its register.
        auto partials = atomic.getMemref().getDefiningOp<AllocFragmentOp>();
        if (partials && partials->hasAttr(kReducerAttr)) {
          Value regs = b.getRemappedValue(atomic.getMemref());
          Value r = ownRegister(b, loc, partials.getResult(), atomic.getIndices());
          Value old = memref::LoadOp::create(b, loc, regs, ValueRange{r});
          Value updated = arith::getReductionOp(atomic.getKind(), b, loc, old, atomic.getValue());
          memref::StoreOp::create(b, loc, updated, regs, ValueRange{r});
          b.eraseOp(atomic);
          continue;
        }
        // T.atomic_add into a global tensor or a shared buffer: outside it,
        // nothing is added.
        Place place = getPlace(atomic.getMemRefType());
        if (place != Place::Global && place != Place::Shared)
          return atomic.emitOpError("works atomically on global tensors, shared buffers and "
                                    "reducer partials only");
        Value inside = insideBounds(b, loc, b.getRemappedValue(atomic.getMemref()),
                                    atomic.getIndices());
        if (atomic.getResult().use_empty()) {
          auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
          b.moveOpBefore(op, guard.thenBlock()->getTerminator());
          continue;
        }
        // return_prev: the value found, or 0 where nothing was added.
        Type type = atomic.getResult().getType();
        auto guard = scf::IfOp::create(b, loc, TypeRange{type}, inside, /*withElseRegion=*/true);
        OpBuilder tb = OpBuilder::atBlockEnd(guard.thenBlock());
        auto yield = scf::YieldOp::create(tb, loc, atomic.getResult());
        b.moveOpBefore(op, yield);
        OpBuilder eb = OpBuilder::atBlockEnd(guard.elseBlock());
        scf::YieldOp::create(eb, loc, arith::ConstantOp::create(eb, loc, b.getZeroAttr(type)).getResult());
        atomic.getResult().replaceAllUsesExcept(guard.getResult(0), yield);
        continue;
      }
      auto load = dyn_cast<memref::LoadOp>(op);
      auto store = dyn_cast<memref::StoreOp>(op);
      auto [memref, indices] = accessed(op);
      if (std::optional<Fragment> fragment = fragmentOf(memref, b.getRemappedValue(memref))) {
        // The thread's own registers by position (a reducer's partials, a
        // whole-tile read), a row vector's register for this row, or the
        // loop's register.
        auto row = rowRegs.find(op);
        auto outer = outerRegs.find(op);
        Value r = privateRegs.contains(op)
                      ? ownRegister(b, loc, memref, indices)
                      : arith::ConstantIndexOp::create(b, loc, row == rowRegs.end() ? reg
                                                                              : row->second)
                            .getResult();
        if (outer != outerRegs.end()) {
          // (the outer indices' row-major position) x the registers a
          // position holds + this register's there
          const OuterRegs &o = outer->second;
          IndexBuilder ib{b, loc};
          Value at = ib.c(0);
          for (auto [d, v] : llvm::zip(o.dims, o.values)) {
            Value value = isa<Value>(v) ? cast<Value>(v)
                                        : ib.c(cast<IntegerAttr>(cast<Attribute>(v)).getInt());
            at = ib.add(ib.mul(at, o.shape[d]), value);
          }
          r = ib.add(ib.mul(at, o.layout.inner), o.layout.sourceToResult[reg]);
        }
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
