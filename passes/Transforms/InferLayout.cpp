//===- InferLayout.cpp - Assign a layout to every fragment ----------------===//
//
// Tensor-core layouts (from tile.gemm) and reductions seed the propagation,
// which runs through parallel loops to the fragments they combine with them;
// other fragments get blocked layouts sized for 16-byte accesses; parallel
// loops take the layout of the first placed fragment they index and convert
// (through copies of their own) the fragments placed otherwise. Accesses
// that reach the running thread's own registers wherever the loop puts an
// iteration (a reducer's partials, reads of a fragment every thread holds
// whole) neither place a loop nor are converted.
//
//===----------------------------------------------------------------------===//

#include "dialects/tile/Layout.h"
#include "passes/Target/Mma.h"
#include "passes/Passes.h"
#include "passes/Conversion/TileToGPU/TileAccess.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/MapVector.h"

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

/// A tile.copy of the whole of `from` to `to` (buffers of one shape).
void copyWhole(OpBuilder &b, Location loc, Value from, Value to) {
  ArrayRef<int64_t> shape = cast<MemRefType>(from.getType()).getShape();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> zeros(shape.size(), c0);
  CopyOp::create(b, loc, from, zeros, shape, to, zeros, shape, /*pred=*/Value());
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

/// A fragment as a loop or a reduction names it: its allocation, or a view
/// of it (tile.view), whose layout is the allocation's seen through the
/// reshape; placing either places the allocation.
struct Frag {
  Value value;
  MemRefType getType() const { return cast<MemRefType>(value.getType()); }
  std::optional<LayoutAttr> getLayout() const { return fragmentLayout(value); }
  LayoutAttr getLayoutAttr() const { return *getLayout(); }
  void setLayoutAttr(LayoutAttr layout) const { setFragmentLayout(value, layout); }
  Location getLoc() const { return value.getLoc(); }
  Operation *getOperation() const { return value.getDefiningOp(); }
  bool operator==(const Frag &o) const { return value == o.value; }
};

/// The fragment a memref.load/store in a parallel body indexes, if any.
std::optional<std::pair<Frag, Operation *>> getFragmentAccess(Operation *op) {
  Value memref;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    memref = load.getMemRef();
  else if (auto store = dyn_cast<memref::StoreOp>(op))
    memref = store.getMemRef();
  else
    return std::nullopt;
  if (!fragmentRoot(memref))
    return std::nullopt;
  // A reducer's partials and reads of a fragment every thread holds whole
  // reach the thread's own registers, wherever the loop puts its iterations.
  if (privateAccess(op) != PrivateAccess::Layout)
    return std::nullopt;
  return std::make_pair(Frag{memref}, op);
}

ValueRange accessIndices(Operation *use) {
  return isa<memref::LoadOp>(use) ? cast<memref::LoadOp>(use).getIndices()
                                  : cast<memref::StoreOp>(use).getIndices();
}

/// The layout of a placed fragment that a copy (or cast) to or from `alloc`
/// has on its other side: such a copy keeps elements in place, so `alloc`
/// takes it.
std::optional<LayoutAttr> copyPeerLayout(AllocFragmentOp alloc) {
  for (Operation *user : alloc->getUsers())
    if (auto copy = dyn_cast<CopyOp>(user)) {
      Value other = copy.getSrc() == alloc.getResult() ? copy.getDst() : copy.getSrc();
      if (auto peer = other.getDefiningOp<AllocFragmentOp>())
        if (std::optional<LayoutAttr> layout = peer.getLayout())
          return layout;
    }
  return std::nullopt;
}

LogicalResult inferFragment(AllocFragmentOp alloc) {
  if (alloc.getLayout())
    return success();
  if (std::optional<LayoutAttr> layout = copyPeerLayout(alloc)) {
    alloc.setLayoutAttr(*layout);
    return success();
  }
  FailureOr<ThreadGroup> group = bufferThreadGroup(alloc);
  if (failed(group))
    return failure();
  std::string why;
  FailureOr<LayoutAttr> layout =
      LayoutAttr::getBlocked(alloc.getContext(), alloc.getType().getShape(),
                             group->count, preferredVector(alloc), why);
  if (failed(layout))
    return alloc.emitOpError("has no layout for ")
           << group->count << " threads: " << why;
  alloc.setLayoutAttr(*layout);
  return success();
}

/// Whether a fragment (or a view of it) is read or written in a parallel loop
/// of higher rank.
bool isRowVector(Value fragment) {
  return llvm::any_of(fragment.getUsers(), [&](Operation *user) {
    if (auto view = dyn_cast<ViewOp>(user))
      return isRowVector(view.getResult());
    auto loop = user->getParentOfType<ParallelOp>();
    return loop && isa<memref::LoadOp, memref::StoreOp>(user) &&
           (int64_t)loop.getShape().size() > cast<MemRefType>(fragment.getType()).getRank();
  });
}

/// Whether a parallel loop places the fragment (or a view of it) by how it
/// indexes it: a row vector of the loop (isRowVector), or a fragment indexed
/// by values the loop does not change (outerIndexing: lse[k, j] in a loop
/// over j, a[k, i] in one over (i, j) whose body loops over k). Such a
/// fragment gets its layout from that loop rather than a blocked default
/// the loop would convert through shared memory.
bool placedByLoop(Value fragment) {
  if (isRowVector(fragment))
    return true;
  return llvm::any_of(fragment.getUsers(), [&](Operation *user) {
    if (auto view = dyn_cast<ViewOp>(user))
      return placedByLoop(view.getResult());
    auto loop = user->getParentOfType<ParallelOp>();
    return loop && isa<memref::LoadOp, memref::StoreOp>(user) &&
           outerIndexing(accessIndices(user), loop.getBody().front(), loop.getShape())
               .has_value();
  });
}

/// Whether an op inside `region` may write the fragment `fragment` (or the
/// allocation it views): any use there but an element read, a copy from it
/// or a gemm reading it as A or B.
bool writtenIn(Value fragment, Operation *region) {
  AllocFragmentOp root = fragmentRoot(fragment);
  SmallVector<Value> names{root.getResult()};
  for (size_t i = 0; i < names.size(); ++i)
    for (Operation *user : names[i].getUsers())
      if (auto view = dyn_cast<ViewOp>(user))
        names.push_back(view.getResult());
  for (Value name : names)
    for (OpOperand &use : name.getUses()) {
      Operation *user = use.getOwner();
      if (!region->isAncestor(user) || isa<ViewOp, memref::LoadOp>(user))
        continue;
      if (auto copy = dyn_cast<CopyOp>(user); copy && copy.getSrc() == name)
        continue;
      if (auto gemm = dyn_cast<GemmOp>(user); gemm && gemm.getC() != name)
        continue;
      return true;
    }
  return false;
}

/// Gives `loop` its own copy of the fragment `alloc`, in `layout`, for the
/// accesses `uses`: the loop reads it converted from `alloc` before the loop
/// and its writes reach `alloc` converted after it (both are fragment copies
/// between layouts, which go through shared memory). A loop that writes
/// every element unconditionally and reads none needs no copy in.
void convertAround(ParallelOp loop, Frag alloc, LayoutAttr layout,
                   ArrayRef<Operation *> uses) {
  OpBuilder b(alloc.getOperation());
  b.setInsertionPointAfter(alloc.getOperation());
  auto own = AllocFragmentOp::create(b, alloc.getLoc(), alloc.getType(), layout);
  bool reads = llvm::any_of(uses, [](Operation *u) { return isa<memref::LoadOp>(u); });
  bool writes = llvm::any_of(uses, [](Operation *u) { return isa<memref::StoreOp>(u); });
  bool partial = llvm::any_of(uses, [&](Operation *u) {
    return isa<memref::StoreOp>(u) && u->getBlock() != &loop.getBody().front();
  });
  if (reads || partial) {
    // Before the loop, or, for a loop that only reads it, before the serial
    // loops around it in which nothing writes the fragment (x[i, kk * 4 + j]
    // in a loop inside one over kk: one conversion, not one per chunk).
    Operation *before = loop;
    if (!writes)
      while (auto outer = dyn_cast<scf::ForOp>(before->getParentOp())) {
        if (outer->isAncestor(alloc.getOperation()) || writtenIn(alloc.value, outer))
          break;
        before = outer;
      }
    b.setInsertionPoint(before);
    copyWhole(b, loop.getLoc(), alloc.value, own);
  }
  if (writes) {
    b.setInsertionPointAfter(loop);
    copyWhole(b, loop.getLoc(), own, alloc.value);
  }
  for (Operation *use : uses)
    use->replaceUsesOfWith(alloc.value, own);
}

/// Row vectors read or written in a loop over a tile (m[i] in a loop over
/// (i, j)) must hold, in each thread, the rows of the elements the thread
/// iterates: the loop's layout sliced along the missing dimension. One placed
/// otherwise (a reduction of another tile, a loop of another shape) gets a
/// converted copy for the loop (convertAround).
LogicalResult inferRowVectors(ParallelOp loop) {
  Block &body = loop.getBody().front();
  llvm::MapVector<Operation *, std::pair<LayoutAttr, SmallVector<Operation *>>> misplaced;
  WalkResult result = loop.getBody().walk([&](Operation *op) {
    auto access = getFragmentAccess(op);
    if (!access)
      return WalkResult::advance();
    auto [alloc, use] = *access;
    if (alloc.getType().getRank() >= (int64_t)loop.getShape().size() ||
        outerIndexing(accessIndices(use), body, loop.getShape()))
      return WalkResult::advance();
    ValueRange indices = accessIndices(use);
    std::optional<SmallVector<int64_t>> dims = droppedDims(indices, body.getArguments());
    if (!dims) {
      use->emitOpError("indexes a lower-rank fragment with other than the "
                       "loop's indices, in order, some left out");
      return WalkResult::interrupt();
    }
    std::string why;
    FailureOr<SlicedLayout> sliced = sliceRows(*loop.getLayout(), loop.getShape(), *dims, why);
    if (failed(sliced)) {
      use->emitOpError(why);
      return WalkResult::interrupt();
    }
    if (!alloc.getLayout()) {
      alloc.setLayoutAttr(sliced->layout);
    } else if (!equivalentLayouts(alloc.getLayoutAttr(), sliced->layout)) {
      auto &[layout, uses] = misplaced[alloc.getOperation()];
      if (layout && !equivalentLayouts(layout, sliced->layout)) {
        InFlightDiagnostic diag = use->emitOpError(
            "reads or writes a row fragment along two different dimensions of "
            "one loop; split the loop");
        diag.attachNote(alloc.getLoc()) << "the fragment is allocated here";
        return WalkResult::interrupt();
      }
      layout = sliced->layout;
      uses.push_back(use);
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  for (auto &[alloc, placed] : misplaced)
    convertAround(loop, Frag{alloc->getResult(0)}, placed.first, placed.second);
  return success();
}

/// A reduction's destination holds the source's layout sliced along the
/// reduced dimension.
LogicalResult inferReduce(ReduceOp reduce) {
  Frag src{reduce.getSrc()}, dst{reduce.getDst()};
  if (!fragmentRoot(src.value) || !fragmentRoot(dst.value))
    return reduce.emitOpError("reduces fragments of this kernel only (shared "
                              "sources and destinations are not lowered yet)");
  AllocFragmentOp root = fragmentRoot(src.value);
  bool chosenHere = !root.getLayout() && !copyPeerLayout(root);
  if (failed(inferFragment(root)))
    return failure();
  std::string why;
  ArrayRef<int64_t> shape = src.getType().getShape();
  FailureOr<SlicedLayout> sliced =
      sliceLayout(src.getLayoutAttr(), shape, reduce.getDim(), why);
  if (failed(sliced) && chosenHere && src.value == root.getResult() &&
      reduce.getDim() == (int64_t)shape.size() - 1) {
    // The blocked layout spreads a row over threads no shuffle pattern
    // combines (rows of 160 in 16-byte pieces): give each row a power-of-two
    // group of threads instead.
    std::string unused;
    FailureOr<LayoutAttr> grouped = rowGroupedLayout(
        root.getContext(), shape, root.getLayoutAttr().getThreads(), preferredVector(root),
        unused);
    if (succeeded(grouped)) {
      FailureOr<SlicedLayout> regrouped = sliceLayout(*grouped, shape, reduce.getDim(), unused);
      if (succeeded(regrouped)) {
        root.setLayoutAttr(*grouped);
        sliced = regrouped;
      }
    }
  }
  if (failed(sliced))
    return reduce.emitOpError(why);
  if (!dst.getLayout()) {
    dst.setLayoutAttr(sliced->layout);
    return success();
  }
  if (equivalentLayouts(dst.getLayoutAttr(), sliced->layout)) {
    dst.setLayoutAttr(sliced->layout); // an annotation's elements, written as the slice
    return success();
  }
  // The destination is placed otherwise (another reduction of a tile of
  // another layout into it, a loop's): reduce into a copy in the slice's
  // layout, converted from it first when the reduction accumulates, and
  // convert the result back.
  OpBuilder b(reduce);
  Location loc = reduce.getLoc();
  auto own = AllocFragmentOp::create(b, loc, dst.getType(), sliced->layout);
  if (AllocFragmentOp root = fragmentRoot(dst.value))
    own->moveAfter(root); // allocations sit together, before their uses
  if (!reduce.getClear())
    copyWhole(b, loc, dst.value, own);
  b.setInsertionPointAfter(reduce);
  copyWhole(b, loc, own, dst.value);
  reduce.getDstMutable().assign(own);
  return success();
}

/// Whether `v` depends on `iv` (through the ops of `body`).
bool dependsOn(Value v, Value iv, Block &body) {
  if (v == iv)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &body)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value o) { return dependsOn(o, iv, body); });
}

/// The memref and indices `op` (a load, a store or a vectorReducibleAdd)
/// accesses; the value it writes, if any.
std::tuple<Value, ValueRange, Value> runAccess(Operation &op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return {load.getMemRef(), load.getIndices(), Value()};
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return {store.getMemRef(), store.getIndices(), store.getValue()};
  if (vectorReducibleAdd(&op)) {
    auto atomic = cast<memref::AtomicRMWOp>(op);
    return {atomic.getMemref(), atomic.getIndices(), atomic.getValue()};
  }
  return {Value(), ValueRange(), Value()};
}

} // namespace

bool mlir::tile::vectorReducibleAdd(Operation *op) {
  auto atomic = dyn_cast<memref::AtomicRMWOp>(op);
  if (!atomic || atomic.getKind() != arith::AtomicRMWKind::addf ||
      !atomic.getResult().use_empty() || atomic->hasAttr(kVectorAtomicAttr) ||
      getPlace(atomic.getMemRefType()) != Place::Global)
    return false;
  Type elem = atomic.getValue().getType();
  TargetAttr target = TargetAttr::lookup(op);
  return target && target.has(TargetFeature::VectorReduce) &&
         (elem.isF32() || elem.isF16() || elem.isBF16());
}

std::optional<RunIndex> mlir::tile::runIndex(ValueRange indices, Value j, Block &body) {
  if (indices.empty())
    return std::nullopt;
  for (Value index : indices.drop_back())
    if (dependsOn(index, j, body))
      return std::nullopt;
  Value last = indices.back();
  if (last == j)
    return RunIndex{std::numeric_limits<int64_t>::max(), nullptr};
  auto add = last.getDefiningOp<arith::AddIOp>();
  if (!add || add->getBlock() != &body)
    return std::nullopt;
  Value other = add.getLhs() == j ? add.getRhs() : add.getRhs() == j ? add.getLhs() : Value();
  if (!other || dependsOn(other, j, body))
    return std::nullopt;
  return RunIndex{knownDivisor(other), add};
}

int64_t mlir::tile::parallelVectorWidth(ParallelOp loop) {
  Block &body = loop.getBody().front();
  if (body.getNumArguments() == 0)
    return 1;
  Value j = body.getArguments().back();
  int64_t width = 16, accesses = 0;
  DenseSet<Operation *> lastIndices; // the `x + j` of an access's last index
  for (Operation &op : body) {
    if (op.getNumRegions())
      return 1;
    if (auto [memref, indices, written] = runAccess(op); memref) {
      auto load = dyn_cast<memref::LoadOp>(op);
      auto type = cast<MemRefType>(memref.getType());
      Place place = getPlace(type);
      // A fragment indexed by the loop's own indices in order: a run of the
      // loop's registers is a run of its registers, whatever their width
      // (vectors of registers: pairs of 16-bit values are one f16x2 or bf16x2
      // instruction, and of float32 values one fp8 conversion); a row vector
      // read without the last index (scale[i] in a loop over (i, j)), or a
      // fragment every thread holds read at an element the run shares (s[0]):
      // one register for the whole run.
      if (place == Place::Fragment && !isa<memref::AtomicRMWOp>(op)) {
        if (llvm::equal(indices, body.getArguments())) {
          ++accesses;
          continue;
        }
        if (load && llvm::none_of(indices, [&](Value i) { return dependsOn(i, j, body); }))
          continue;
      }
      if ((place != Place::Global && place != Place::Shared) || indices.empty() ||
          type.getElementTypeBitWidth() < 8 || type.getElementTypeBitWidth() % 8)
        return 1;
      // A load that every element of a run shares (a row's scale): one
      // element, read once per run.
      if (load && llvm::none_of(indices, [&](Value i) { return dependsOn(i, j, body); }))
        continue;
      std::optional<RunIndex> run = runIndex(indices, j, body);
      if (!run)
        return 1;
      width = std::min(width, run->limit);
      if (run->add)
        lastIndices.insert(run->add);
      width = std::min(width, int64_t(16) / (type.getElementTypeBitWidth() / 8));
      width = stridedVectorLimit(type, width);
      if (!type.isDynamicDim(type.getRank() - 1))
        width = std::min<int64_t>(width, type.getShape().back() & -type.getShape().back());
      ++accesses;
      continue;
    }
    if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
        (!isa<arith::ConstantOp>(op) && !op.hasTrait<OpTrait::Elementwise>()))
      return 1;
    if (llvm::any_of(op.getResultTypes(), [](Type t) { return !t.isIntOrIndexOrFloat(); }))
      return 1;
  }
  // The last index feeds only the accesses' last indices.
  auto onlyLastIndex = [](Operation *user, Value v) {
    auto [memref, indices, written] = runAccess(*user);
    return memref && indices.back() == v && written != v && llvm::count(indices, v) == 1;
  };
  for (Operation *user : j.getUsers())
    if (!lastIndices.contains(user) && !onlyLastIndex(user, j))
      return 1;
  for (Operation *add : lastIndices)
    for (Operation *user : add->getResult(0).getUsers())
      if (!onlyLastIndex(user, add->getResult(0)))
        return 1;
  if (!accesses)
    return 1;
  int64_t last = loop.getShape().back();
  while (width > 1 && last % width)
    width /= 2;
  return std::max<int64_t>(width, 1);
}

namespace {

/// Whether `loop`'s body reads or writes any fragment.
bool accessesFragment(ParallelOp loop) {
  return loop.getBody()
      .walk([](Operation *op) {
        return getFragmentAccess(op) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The blocked layout of a loop whose iterations the threads do not divide
/// (`T.Parallel(129)` on 128 threads), padded: each thread takes runs of
/// `vector` consecutive elements (the largest power of two at most `vector`
/// dividing the last extent) at a stride of threads x runs, so the last
/// register holds elements past the extent for some threads, whose first
/// index is then past the first extent; the loop's lowering runs those
/// iterations under a guard. Only for loops that touch no fragment (a
/// fragment's layout holds each element exactly once).
LayoutAttr paddedBlockedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape, int64_t threads,
                               int64_t vector) {
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  int64_t inner = shape.back();
  int64_t v = std::max<int64_t>(1, std::min(vector, inner));
  while (v > 1 && inner % v != 0)
    v /= 2;
  int64_t regs = llvm::divideCeil(numel, threads * v) * v;
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr flat = r.floorDiv(v) * (threads * v) + t * v + r % v;
  SmallVector<AffineExpr> results;
  int64_t stride = numel;
  for (auto [k, d] : llvm::enumerate(shape)) {
    stride /= d;
    AffineExpr idx = flat.floorDiv(stride);
    if (k != 0)
      idx = idx % d;
    results.push_back(idx);
  }
  return LayoutAttr::get(ctx, threads, regs, AffineMap::get(2, 0, results, ctx));
}

LogicalResult inferParallel(ParallelOp loop) {
  if (loop.getLayout())
    return success();
  Block &body = loop.getBody().front();
  // The layout of the loop's first placed fragment, seen from the loop.
  std::optional<LayoutAttr> first;
  // Full-rank fragments with no layout yet, with how they are indexed.
  SmallVector<std::pair<Frag, SmallVector<int64_t>>> unplaced;
  // Fragments placed unlike the loop's first one, with their accesses and
  // how they are indexed.
  llvm::MapVector<Operation *, std::pair<SmallVector<int64_t>, SmallVector<Operation *>>>
      misplaced;
  // Fragments indexed in some dimensions by values the loop does not change
  // (lse[k, j] in a loop over j; a[k, i] in a loop over (i, j) whose body
  // loops over k): each thread holds the whole range of those for its
  // elements (outerLayout).
  struct Outer {
    Frag frag;
    OuterIndexing indexing;
    Operation *use;
  };
  SmallVector<Outer, 4> outer;
  WalkResult result = loop.getBody().walk([&](Operation *op) {
    auto access = getFragmentAccess(op);
    if (!access)
      return WalkResult::advance();
    auto [alloc, use] = *access;
    if (std::optional<OuterIndexing> indexing =
            outerIndexing(accessIndices(use), body, loop.getShape())) {
      outer.push_back({alloc, *indexing, use}); // lse[k, j]: placed below
      return WalkResult::advance();
    }
    if (alloc.getType().getRank() < (int64_t)loop.getShape().size())
      return WalkResult::advance(); // a row vector (m[i]): checked below
    std::optional<SmallVector<int64_t>> perm =
        indexPermutation(accessIndices(use), body.getArguments());
    bool shaped = perm && llvm::all_of(llvm::enumerate(*perm), [&](auto kd) {
      return alloc.getType().getDimSize(kd.index()) == loop.getShape()[kd.value()];
    });
    if (!shaped) {
      use->emitOpError("indexes a fragment of shape ")
          << alloc.getType() << " with other than the loop's own indices; a "
          << "parallel loop over a fragment must index it by its indices (i, j, ...), "
          << "in any order, each dimension as long as the loop's";
      return WalkResult::interrupt();
    }
    if (!alloc.getLayout()) {
      unplaced.push_back({alloc, *perm}); // takes the loop's layout below
      return WalkResult::advance();
    }
    LayoutAttr seen = loopLayoutOf(alloc.getLayoutAttr(), *perm);
    if (!first) {
      first = seen;
      return WalkResult::advance();
    }
    if (!equivalentLayouts(*first, seen)) {
      auto &[how, uses] = misplaced[alloc.getOperation()];
      if (!uses.empty() && how != *perm) {
        use->emitOpError("indexes a fragment in two orders in one loop (f[i, j] and "
                         "f[j, i]); split the loop");
        return WalkResult::interrupt();
      }
      how = *perm;
      uses.push_back(use);
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  for (auto &[alloc, placed] : misplaced)
    convertAround(loop, Frag{alloc->getResult(0)}, permuteLayout(*first, placed.first),
                  placed.second);
  auto finish = [&](LayoutAttr layout) -> LogicalResult {
    loop.setLayoutAttr(layout);
    for (auto &[alloc, perm] : unplaced)
      if (!alloc.getLayout())
        alloc.setLayoutAttr(permuteLayout(layout, perm));
    llvm::MapVector<Operation *, std::pair<LayoutAttr, SmallVector<Operation *>>> converted;
    for (Outer &o : outer) {
      std::string why;
      FailureOr<OuterLayout> want =
          outerLayout(layout, loop.getShape(), o.frag.getType().getShape(), o.indexing, why);
      if (failed(want))
        return o.use->emitOpError(why);
      if (!o.frag.getLayout()) {
        o.frag.setLayoutAttr(want->layout);
      } else if (!equivalentLayouts(o.frag.getLayoutAttr(), want->layout)) {
        auto &[layout, uses] = converted[o.frag.getOperation()];
        if (layout && !equivalentLayouts(layout, want->layout)) {
          InFlightDiagnostic diag = o.use->emitOpError(
              "reads or writes a fragment indexed two ways in one loop; split the loop");
          diag.attachNote(o.frag.getLoc()) << "the fragment is allocated here";
          return diag;
        }
        layout = want->layout;
        uses.push_back(o.use);
      }
    }
    for (auto &[op, placed] : converted)
      convertAround(loop, Frag{op->getResult(0)}, placed.first, placed.second);
    return inferRowVectors(loop);
  };
  if (first)
    return finish(*first);
  FailureOr<ThreadGroup> group = threadGroupOf(loop);
  if (failed(group))
    return failure();
  // No fragment of the loop's shape, but one indexed in some dimensions by
  // values the loop does not change already has a layout (a gemm's
  // accumulator read half by half, acc[i + s * 16, j]): the loop takes that
  // layout with those dimensions sliced out, where each element then has
  // one thread, so each thread reads registers it holds (their order
  // changed at most) instead of a conversion through shared memory.
  int64_t elements = 1;
  for (int64_t e : loop.getShape())
    elements *= e;
  for (Outer &o : outer) {
    std::optional<LayoutAttr> placed = o.frag.getLayout();
    if (!placed || !o.indexing.dropped.empty())
      continue;
    ArrayRef<int64_t> shape = o.frag.getType().getShape();
    SmallVector<int64_t> split = o.indexing.splitShape(shape);
    SmallVector<int64_t> rest;
    for (auto [d, size] : llvm::enumerate(split))
      if (!llvm::is_contained(o.indexing.outer, (int64_t)d))
        rest.push_back(size);
    if (ArrayRef<int64_t>(rest) != loop.getShape())
      continue;
    std::string why;
    FailureOr<SlicedLayout> sliced =
        sliceRows(reshapeLayout(*placed, shape, split), split, o.indexing.outer, why);
    if (failed(sliced) || sliced->layout.getThreads() != group->count ||
        sliced->layout.getThreads() * sliced->layout.getRegs() != elements)
      continue;
    return finish(sliced->layout);
  }
  // No fragment: spread the iterations so consecutive threads take
  // consecutive elements (coalesced when the body reads global memory), in
  // runs of a 16-byte vector each where the body allows it.
  std::string why;
  FailureOr<LayoutAttr> layout = LayoutAttr::getBlocked(
      loop.getContext(), loop.getShape(), group->count, parallelVectorWidth(loop), why);
  if (failed(layout) && !accessesFragment(loop))
    layout = paddedBlockedLayout(loop.getContext(), loop.getShape(), group->count,
                                 parallelVectorWidth(loop));
  if (failed(layout))
    return loop.emitOpError("cannot spread its iterations over ")
           << group->count << " threads: " << why;
  return finish(*layout);
}

/// Whether `loop` indexes a fragment of its own rank that has a layout.
bool indexesPlacedFragment(ParallelOp loop) {
  WalkResult found = loop.getBody().walk([&](Operation *op) {
    auto access = getFragmentAccess(op);
    if (access && access->first.getLayout() &&
        access->first.getType().getRank() == (int64_t)loop.getShape().size())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// A fragment with no layout yet that a parallel loop indexes beside a
/// placed fragment of the loop's shape takes that layout (repeated until
/// nothing changes), so that, e.g., an f32 sum of a gemm's accumulator
/// (acc[i, j] += part[i, j]) holds its elements where the accumulator does
/// instead of getting a blocked layout and a conversion through shared
/// memory in every iteration.
LogicalResult propagateThroughLoops(ModuleOp module) {
  for (bool changed = true; changed;) {
    changed = false;
    module.walk([&](ParallelOp loop) {
      std::optional<LayoutAttr> placed; // as the loop sees it
      SmallVector<std::pair<Frag, SmallVector<int64_t>>> unplaced;
      loop.getBody().walk([&](Operation *op) {
        auto access = getFragmentAccess(op);
        if (!access)
          return;
        Frag alloc = access->first;
        std::optional<SmallVector<int64_t>> perm =
            indexPermutation(accessIndices(op), loop.getBody().front().getArguments());
        if (!perm || llvm::any_of(llvm::enumerate(*perm), [&](auto kd) {
              return alloc.getType().getDimSize(kd.index()) != loop.getShape()[kd.value()];
            }))
          return;
        if (std::optional<LayoutAttr> layout = alloc.getLayout()) {
          if (!placed)
            placed = loopLayoutOf(*layout, *perm);
        } else if (!isRowVector(fragmentRoot(alloc.value).getResult()) &&
                   llvm::none_of(unplaced, [&](auto &u) { return u.first == alloc; })) {
          unplaced.push_back({alloc, *perm});
        }
      });
      if (!placed)
        return;
      for (auto &[alloc, perm] : unplaced) {
        alloc.setLayoutAttr(permuteLayout(*placed, perm));
        changed = true;
      }
    });
  }
  return success();
}

/// A fragment whose elements are read or written outside T.Parallel
/// (`rms[0] = 0`, `rms[0] += x[k]` in a serial loop, as TileLang programs
/// keep a scalar): every thread runs that code on its own copy, so every
/// thread holds the whole fragment (register r: the element at row-major
/// position r), the layout a finalized reducer has. One placed otherwise
/// before (a gemm's accumulator, a reduction's row vector spread over the
/// threads) is an error at the access.
LogicalResult placeWholeFragments(ModuleOp module) {
  WalkResult result = module.walk([&](Operation *op) {
    if (!isa<memref::LoadOp, memref::StoreOp>(op) || op->getParentOfType<ParallelOp>())
      return WalkResult::advance();
    Value memref = isa<memref::LoadOp>(op) ? cast<memref::LoadOp>(op).getMemRef()
                                           : cast<memref::StoreOp>(op).getMemRef();
    AllocFragmentOp alloc = fragmentRoot(memref);
    if (!alloc || alloc->hasAttr(kReducerAttr))
      return WalkResult::advance(); // a reducer's reads: checked by its lowering
    ArrayRef<int64_t> shape = alloc.getType().getShape();
    if (std::optional<LayoutAttr> layout = alloc.getLayout()) {
      if (holdsWholeTile(*layout, shape))
        return WalkResult::advance();
      InFlightDiagnostic diag = op->emitOpError(
          "reads or writes an element of a fragment outside T.Parallel, where every thread "
          "runs it on its own copy, but the fragment is spread over the threads (it is a "
          "gemm's accumulator, a reduction's result or laid out by an annotation); use it "
          "inside `for ... in T.Parallel(...)`, or T.copy it to a shared buffer and read "
          "that");
      diag.attachNote(alloc.getLoc()) << "the fragment is allocated here";
      return WalkResult::interrupt();
    }
    FailureOr<ThreadGroup> group = bufferThreadGroup(alloc);
    if (failed(group))
      return WalkResult::interrupt();
    MLIRContext *ctx = alloc.getContext();
    AffineExpr r = getAffineDimExpr(1, ctx);
    SmallVector<AffineExpr> results;
    int64_t numel = 1;
    for (int64_t d : shape)
      numel *= d;
    int64_t stride = numel;
    for (int64_t d : shape) {
      stride /= d;
      results.push_back(r.floorDiv(stride) % d);
    }
    alloc.setLayoutAttr(LayoutAttr::get(ctx, group->count, numel,
                                        AffineMap::get(2, 0, results, ctx)));
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Gives a gemm's accumulator the tensor-core layout of its #tile.mma.
LogicalResult inferGemm(GemmOp gemm) {
  auto alloc = gemm.getC().getDefiningOp<AllocFragmentOp>();
  if (!alloc)
    return gemm.emitOpError("C must come from tile.alloc_fragment in this kernel");
  FailureOr<ThreadGroup> group = threadGroupOf(gemm);
  FailureOr<WarpPartition> part = selectedPartition(gemm);
  if (failed(group) || failed(part))
    return failure();
  LayoutAttr layout = getAccumulatorLayout(gemm.getContext(), *part, group->count);
  // An annotation holding the same elements is written as the tensor-core
  // layout: the same code as an unannotated C.
  if (!alloc.getLayout() || equivalentLayouts(alloc.getLayoutAttr(), layout)) {
    alloc.setLayoutAttr(layout);
  } else {
    InFlightDiagnostic diag = gemm.emitOpError(
        "needs C in the tensor-core accumulator layout, but C already has "
        "another layout (from another gemm or an annotation)");
    diag.attachNote(alloc.getLoc()) << "C is allocated here";
    return diag;
  }
  // A in registers: the mma A-operand layout of this partition.
  auto a = gemm.getA().getDefiningOp<AllocFragmentOp>();
  if (!a)
    return success();
  if (gemm.getTransposeA())
    return gemm.emitOpError("A in registers must not be transposed (it is "
                            "held M x K)");
  LayoutAttr aLayout =
      getOperandALayout(gemm.getContext(), *part, a.getType().getDimSize(1), group->count,
                        a.getType().getElementTypeBitWidth());
  if (!a.getLayout() || equivalentLayouts(a.getLayoutAttr(), aLayout)) {
    a.setLayoutAttr(aLayout);
    return success();
  }
  InFlightDiagnostic diag = gemm.emitOpError(
      "needs A in the tensor-core operand layout, but A already has another "
      "layout");
  diag.attachNote(a.getLoc()) << "A is allocated here";
  return diag;
}

struct TileInferLayout : mlir::tile::impl::TileInferLayoutBase<TileInferLayout> {
  using Base::Base;
  void runOnOperation() final {
    if (failed(inferLayouts(getOperation())))
      signalPassFailure();
  }
};

} // namespace

/// Registers (32-bit) a thread needs to hold its share of `type`'s elements.
static int64_t registersFor(int64_t elements, Type elem) {
  return llvm::divideCeil(elements * elem.getIntOrFloatBitWidth(), 32);
}

/// Rejects, with the numbers, a fragment or local buffer that alone needs
/// more registers per thread than the target gives (such a kernel would
/// spill all of it, and compiling it takes minutes), or more registers over
/// the block's threads than a block has (it could not launch). Both are lower
/// bounds: other values share the registers too.
static LogicalResult checkRegisters(ModuleOp module) {
  TargetAttr target = TargetAttr::lookup(module);
  int64_t limit = target ? target.getRegistersPerThread() : 255;
  int64_t blockLimit = target ? target.getRegistersPerBlock() : 65536;
  WalkResult result = module.walk([&](Operation *op) {
    int64_t regs = 0;
    std::string what;
    if (auto frag = dyn_cast<AllocFragmentOp>(op); frag && frag.getLayout()) {
      regs = registersFor(frag.getLayoutAttr().getRegs(), frag.getType().getElementType());
      what = "fragment";
    } else if (auto local = dyn_cast<AllocLocalOp>(op)) {
      regs = registersFor(local.getType().getNumElements(), local.getType().getElementType());
      what = "local buffer";
    }
    if (regs == 0)
      return WalkResult::advance();
    int64_t threads = op->getParentOfType<KernelOp>().getThreads();
    if (regs > limit) {
      op->emitOpError("this ") << what << " needs " << regs
                               << " registers per thread, more than the " << limit
                               << " a thread has; use smaller tiles or more threads";
      return WalkResult::interrupt();
    }
    if (regs * threads > blockLimit) {
      op->emitOpError("this ") << what << " needs " << regs << " registers per thread x "
                               << threads << " threads = " << regs * threads
                               << ", more than the " << blockLimit
                               << " registers of a block; use smaller tiles or fewer threads";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// A reduction of a shared buffer, or into one, reduces a fragment copy of it:
/// the source copied into a fragment before, the destination reduced into a
/// fragment (loaded first when the reduction accumulates) and stored back
/// after. The copies are ordinary ones (barriers from tile-insert-barriers).
void stageSharedReductions(ModuleOp module) {
  module.walk([](ReduceOp reduce) {
    auto kernel = reduce->getParentOfType<KernelOp>();
    if (!kernel)
      return;
    Location loc = reduce.getLoc();
    auto fragmentOf = [&](Value shared) {
      auto type = cast<MemRefType>(shared.getType());
      OpBuilder ab(&kernel.getBody().front(), kernel.getBody().front().begin());
      auto fragType = MemRefType::get(
          type.getShape(), type.getElementType(), MemRefLayoutAttrInterface(),
          MemorySpaceAttr::get(reduce.getContext(), MemorySpace::Fragment));
      return AllocFragmentOp::create(ab, loc, fragType, LayoutAttr()).getResult();
    };
    auto copy = [&](OpBuilder &b, Value from, Value to) { copyWhole(b, loc, from, to); };
    OpBuilder b(reduce);
    if (getPlace(reduce.getSrc().getType()) == Place::Shared) {
      Value frag = fragmentOf(reduce.getSrc());
      copy(b, reduce.getSrc(), frag);
      reduce.getSrcMutable().assign(frag);
    }
    if (getPlace(reduce.getDst().getType()) == Place::Shared) {
      Value shared = reduce.getDst();
      Value frag = fragmentOf(shared);
      if (!reduce.getClear())
        copy(b, shared, frag);
      reduce.getDstMutable().assign(frag);
      OpBuilder after(reduce->getContext());
      after.setInsertionPointAfter(reduce);
      copy(after, frag, shared);
    }
  });
}

namespace {

/// `op` as `j / c` (floordivsi, divsi, divui) or `j % c` (remsi, remui) of
/// the loop index `j` by a constant c > 1: (c, whether a quotient).
std::optional<std::pair<int64_t, bool>> packedPart(Operation *op, Value j) {
  bool quotient = isa<arith::FloorDivSIOp, arith::DivSIOp, arith::DivUIOp>(op);
  if ((!quotient && !isa<arith::RemSIOp, arith::RemUIOp>(op)) || op->getOperand(0) != j)
    return std::nullopt;
  std::optional<int64_t> c = getConstantIntValue(op->getOperand(1));
  if (!c || *c < 2)
    return std::nullopt;
  return std::make_pair(*c, quotient);
}

/// Whether `v` is computed from `j` inside `body`.
bool derivesFrom(Value v, Value j, Block &body) {
  if (v == j)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || !body.getParentOp()->isAncestor(def))
    return false;
  return llvm::any_of(def->getOperands(), [&](Value o) { return derivesFrom(o, j, body); });
}

/// Splits dimension `d` of `loop` (index j, extent n) into (j / c, j % c) of
/// extents (n / c, c) when a fragment is indexed by `j / c` (a packed
/// operand: two 4-bit values a byte read as x[i, j // 2] beside y[i, j]),
/// every fragment access that depends on j indexing it by j itself or by
/// `j / c`, and n a multiple of c. The quotient becomes the new outer index
/// (x[i, jj]: a row vector of the split loop, its inner index left out), a
/// fragment indexed by j a view with that dimension split (y_view[i, jj, e]),
/// `j % c` the inner index and j itself jj * c + e. Returns whether it split.
bool splitPackedDim(ParallelOp loop, int64_t d) {
  Block &body = loop.getBody().front();
  Value j = body.getArgument(d);
  int64_t n = loop.getShape()[d];
  std::optional<int64_t> c;
  bool packed = false;
  SmallVector<Operation *> parts;
  for (Operation *user : j.getUsers()) {
    std::optional<std::pair<int64_t, bool>> part = packedPart(user, j);
    if (!part)
      continue;
    if (c && *c != part->first)
      return false;
    c = part->first;
    parts.push_back(user);
    if (part->second)
      packed |= llvm::any_of(user->getResult(0).getUsers(), [&](Operation *u) {
        return getFragmentAccess(u).has_value();
      });
  }
  if (!packed || n % *c)
    return false;
  // Every fragment access that depends on j: j itself, or a quotient.
  SmallVector<Operation *> direct;
  bool fits = true;
  body.walk([&](Operation *op) {
    if (isa<memref::AtomicRMWOp>(op) && fragmentRoot(op->getOperand(1)))
      fits = false;
    if (!getFragmentAccess(op))
      return;
    bool usesJ = false;
    for (Value index : accessIndices(op)) {
      if (index == j) {
        usesJ = true;
        continue;
      }
      Operation *def = index.getDefiningOp();
      if (def && llvm::is_contained(parts, def) && packedPart(def, j)->second)
        continue;
      if (derivesFrom(index, j, body))
        fits = false;
    }
    if (usesJ) {
      if (llvm::count(accessIndices(op), j) != 1)
        fits = false;
      direct.push_back(op);
    }
  });
  for (Operation *op : direct) { // each dimension j indexes splits evenly
    Value memref = op->getOperand(isa<memref::LoadOp>(op) ? 0 : 1);
    int64_t p = llvm::find(accessIndices(op), j) - accessIndices(op).begin();
    fits &= cast<MemRefType>(memref.getType()).getDimSize(p) % *c == 0;
  }
  if (!fits)
    return false;

  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<int64_t> shape(loop.getShape());
  shape[d] = n / *c;
  shape.insert(shape.begin() + d + 1, *c);
  // Views of the fragments indexed by j, before the loop.
  DenseMap<Value, Value> views;
  for (Operation *op : direct) {
    Value memref = isa<memref::LoadOp>(op) ? cast<memref::LoadOp>(op).getMemRef()
                                           : cast<memref::StoreOp>(op).getMemRef();
    if (views.count(memref))
      continue;
    auto type = cast<MemRefType>(memref.getType());
    int64_t p = llvm::find(accessIndices(op), j) - accessIndices(op).begin();
    SmallVector<int64_t> viewShape(type.getShape());
    viewShape[p] = type.getDimSize(p) / *c;
    viewShape.insert(viewShape.begin() + p + 1, *c);
    views[memref] = ViewOp::create(b, loc, MemRefType::get(viewShape, type.getElementType(),
                                                           MemRefLayoutAttrInterface(),
                                                           type.getMemorySpace()),
                                   memref);
  }
  auto split = ParallelOp::create(b, loc, b.getDenseI64ArrayAttr(shape), LayoutAttr());
  for (NamedAttribute attr : loop->getDiscardableAttrs())
    split->setAttr(attr.getName(), attr.getValue());
  Block *block = new Block();
  split.getBody().push_back(block);
  for (size_t k = 0; k < shape.size(); ++k)
    block->addArgument(b.getIndexType(), loc);
  Value outer = block->getArgument(d), inner = block->getArgument(d + 1);
  // The body moves over; j's parts become the new indices.
  b.setInsertionPointToStart(block);
  Value whole = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, outer, arith::ConstantIndexOp::create(b, loc, *c)),
      inner);
  for (Operation *part : parts) {
    part->getResult(0).replaceAllUsesWith(packedPart(part, j)->second ? outer : inner);
    part->erase();
  }
  for (Operation *op : direct) {
    OpBuilder ob(op);
    SmallVector<Value> indices;
    for (Value index : accessIndices(op)) {
      if (index == j) {
        indices.push_back(outer);
        indices.push_back(inner);
      } else {
        indices.push_back(index);
      }
    }
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      load.getResult().replaceAllUsesWith(
          memref::LoadOp::create(ob, op->getLoc(), views[load.getMemRef()], indices));
    } else {
      auto store = cast<memref::StoreOp>(op);
      memref::StoreOp::create(ob, op->getLoc(), store.getValue(), views[store.getMemRef()],
                              indices);
    }
    op->erase();
  }
  j.replaceAllUsesWith(whole);
  for (auto [k, arg] : llvm::enumerate(body.getArguments()))
    if ((int64_t)k != d)
      arg.replaceAllUsesWith(block->getArgument((int64_t)k < d ? k : k + 1));
  block->getOperations().splice(block->end(), body.getOperations());
  loop.erase();
  return true;
}

/// `index` as `a * c + b` (in any operand order) of two of `body`'s loop
/// indices with c the extent of b: (a, b), else nothing.
std::optional<std::pair<BlockArgument, BlockArgument>>
linearPair(Value index, Block &body, ArrayRef<int64_t> shape) {
  auto add = index.getDefiningOp<arith::AddIOp>();
  if (!add)
    return std::nullopt;
  auto arg = [&](Value v) -> BlockArgument {
    auto a = dyn_cast<BlockArgument>(v);
    return a && a.getOwner() == &body ? a : BlockArgument();
  };
  for (auto [prod, rest] : {std::pair{add.getLhs(), add.getRhs()},
                            std::pair{add.getRhs(), add.getLhs()}}) {
    auto mul = prod.getDefiningOp<arith::MulIOp>();
    BlockArgument b = arg(rest);
    if (!mul || !b)
      continue;
    for (auto [x, y] : {std::pair{mul.getLhs(), mul.getRhs()},
                        std::pair{mul.getRhs(), mul.getLhs()}}) {
      BlockArgument a = arg(x);
      std::optional<int64_t> c = getConstantIntValue(y);
      if (a && a != b && c && *c == shape[b.getArgNumber()])
        return std::make_pair(a, b);
    }
  }
  return std::nullopt;
}

/// Fragment accesses of `loop` at a row-major linear index of two of its
/// indices, f[i * n + j] (n the extent of j) where f's dimension holds
/// exactly those elements, read a view of f with that dimension split in two
/// (TileLang's composable indices, `B_local[i * block_N + j]`): the view is
/// indexed by the loop's own indices, which layout inference places.
void splitLinearIndices(ParallelOp loop) {
  Block &body = loop.getBody().front();
  ArrayRef<int64_t> shape = loop.getShape();
  SmallVector<Operation *> accesses;
  body.walk([&](Operation *op) {
    if (getFragmentAccess(op))
      accesses.push_back(op);
  });
  DenseMap<std::pair<Value, int64_t>, Value> views;
  for (Operation *op : accesses) {
    SmallVector<Value> indices(accessIndices(op));
    Value memref = op->getOperand(isa<memref::LoadOp>(op) ? 0 : 1);
    auto type = cast<MemRefType>(memref.getType());
    for (auto [k, index] : llvm::enumerate(indices)) {
      std::optional<std::pair<BlockArgument, BlockArgument>> pair =
          linearPair(index, body, shape);
      if (!pair)
        continue;
      int64_t m = shape[pair->first.getArgNumber()], n = shape[pair->second.getArgNumber()];
      if (type.getDimSize(k) != m * n)
        continue;
      Value &view = views[{memref, (int64_t)k}];
      if (!view) {
        OpBuilder b(loop);
        SmallVector<int64_t> viewShape(type.getShape());
        viewShape[k] = m;
        viewShape.insert(viewShape.begin() + k + 1, n);
        view = ViewOp::create(b, loop.getLoc(),
                              MemRefType::get(viewShape, type.getElementType(),
                                              MemRefLayoutAttrInterface(),
                                              type.getMemorySpace()),
                              memref);
      }
      SmallVector<Value> split(indices.begin(), indices.begin() + k);
      split.push_back(pair->first);
      split.push_back(pair->second);
      split.append(indices.begin() + k + 1, indices.end());
      OpBuilder ob(op);
      if (auto load = dyn_cast<memref::LoadOp>(op))
        load.getResult().replaceAllUsesWith(
            memref::LoadOp::create(ob, op->getLoc(), view, split));
      else
        memref::StoreOp::create(ob, op->getLoc(), cast<memref::StoreOp>(op).getValue(), view,
                                split);
      op->erase();
      break; // one dimension an access
    }
  }
}

/// splitLinearIndices and splitPackedDim on every parallel loop of `module`.
void splitPackedDims(ModuleOp module) {
  SmallVector<ParallelOp> loops;
  module.walk([&](ParallelOp loop) { loops.push_back(loop); });
  for (ParallelOp loop : loops) {
    if (loop.getLayout())
      continue;
    splitLinearIndices(loop);
    for (int64_t d = 0; d < (int64_t)loop.getShape().size(); ++d)
      if (splitPackedDim(loop, d))
        break; // the loop is replaced (one split per loop)
  }
}

} // namespace

LogicalResult mlir::tile::inferLayouts(ModuleOp module) {
  splitPackedDims(module);
  stageSharedReductions(module);
  // Tensor-core layouts first: they are fixed by the hardware, the rest adapt.
  WalkResult gemms = module.walk([&](GemmOp gemm) {
    return failed(inferGemm(gemm)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
  });
  if (gemms.wasInterrupted())
    return failure();
  WalkResult reduces = module.walk([](ReduceOp reduce) {
    return failed(inferReduce(reduce)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (reduces.wasInterrupted())
    return failure();
  if (failed(placeWholeFragments(module)))
    return failure();
  if (failed(propagateThroughLoops(module)))
    return failure();
  // Row vectors of loops take the loop's layout sliced, fragments indexed by
  // values a loop does not change the loop's layout extended; the rest get a
  // blocked layout before the loops read them.
  auto defaults = [](bool skipLoopPlaced) {
    return [skipLoopPlaced](AllocFragmentOp alloc) {
      if (skipLoopPlaced && placedByLoop(alloc.getResult()))
        return WalkResult::advance();
      return failed(inferFragment(alloc)) ? WalkResult::interrupt()
                                          : WalkResult::advance();
    };
  };
  if (module.walk(defaults(true)).wasInterrupted())
    return failure();
  // Loops that index a placed fragment of their own rank first, again until
  // none is left (each places the fragments it holds beside that one), then
  // the others in program order. So a fragment a program touches first in a
  // loop of its own (l[i] *= s[i]) takes the layout of the loops that combine
  // it with placed ones (l[i] += a reduction's row sums) instead of a
  // default that each of those would convert through shared memory.
  for (bool changed = true; changed;) {
    changed = false;
    WalkResult placed = module.walk([&](ParallelOp loop) {
      if (loop.getLayout() || !indexesPlacedFragment(loop))
        return WalkResult::advance();
      changed = true;
      return failed(inferParallel(loop)) ? WalkResult::interrupt()
                                         : WalkResult::advance();
    });
    if (placed.wasInterrupted())
      return failure();
  }
  WalkResult loops = module.walk([](ParallelOp loop) {
    return failed(inferParallel(loop)) ? WalkResult::interrupt()
                                       : WalkResult::advance();
  });
  if (loops.wasInterrupted())
    return failure();
  if (module.walk(defaults(false)).wasInterrupted())
    return failure();
  return checkRegisters(module);
}
