//===- InsertBarriers.cpp - Block barriers from shared-memory hazards -----===//
//
// Places the block barriers that ordinary (not async) shared-memory accesses
// of different threads need, from the byte intervals each tile op reads and
// writes in the kernel's shared memory (offsets from
// tile-allocate-shared-memory): walking the kernel in program order, a
// barrier goes before an op that reads bytes written (RAW) or writes bytes
// read or written (WAR, WAW) since the last barrier. Loops are walked until
// the state at their head stops growing, so hazards across the back edge
// (an iteration rewriting what the previous one read) get a barrier too; the
// two sides of an scf.if join by union. A hazard between the ops before a
// loop and its body gets its barrier before the loop, not in every iteration.
//
// Ops whose lowering runs a protocol of its own through shared memory (a
// reduction across warps through its scratch, a copy staged through shared
// memory: writes, a barrier, reads) count as writing those bytes where they
// meet earlier accesses, so a barrier goes before them only when a hazard
// asks for one; their own barrier orders everything before it, and they
// leave their bytes read.
// Async copies are ordered by the cp.async wait + barrier that
// tile-pipeline-loops emits; existing gpu.barrier ops count as barriers.
//
//===----------------------------------------------------------------------===//

#include "dialects/tile/LayoutMath.h"
#include "passes/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEINSERTBARRIERS
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-insert-barriers"

namespace {

/// Bytes [begin, end) of the kernel's shared memory.
struct Interval {
  int64_t begin, end;
  bool overlaps(const Interval &o) const { return begin < o.end && o.begin < end; }
  bool operator==(const Interval &o) const { return begin == o.begin && end == o.end; }
};

/// The shared bytes read and written since the last barrier (or by one op).
struct Accesses {
  SmallVector<Interval> reads, writes;
  /// Bytes an op's lowering writes and then, after a barrier of its own,
  /// reads (a reduction's scratch, a copy's staging): they meet earlier
  /// accesses as writes, and after the op only its reads remain.
  std::optional<Interval> protocol;

  void clear() {
    reads.clear();
    writes.clear();
  }
  static void addUnique(SmallVector<Interval> &to, ArrayRef<Interval> from) {
    for (const Interval &i : from)
      if (!llvm::is_contained(to, i))
        to.push_back(i);
  }
  void merge(const Accesses &o) {
    addUnique(reads, o.reads);
    addUnique(writes, o.writes);
  }
  size_t size() const { return reads.size() + writes.size(); }
  static bool any(ArrayRef<Interval> a, ArrayRef<Interval> b) {
    return llvm::any_of(a, [&](const Interval &x) {
      return llvm::any_of(b, [&](const Interval &y) { return x.overlaps(y); });
    });
  }
  /// The op's accesses as earlier ones see them: its protocol bytes written.
  Accesses entry() const {
    Accesses e{reads, writes, std::nullopt};
    if (protocol)
      e.writes.push_back(*protocol);
    return e;
  }
  /// Whether `op` (accessing `next`) must wait for these accesses.
  bool conflicts(const Accesses &next) const {
    return any(next.reads, writes) || any(next.writes, writes) || any(next.writes, reads);
  }
};

int64_t bytesOf(MemRefType type) {
  return llvm::divideCeil(type.getNumElements() * type.getElementTypeBitWidth(), 8);
}

/// The bytes of the shared buffer `v` (a stage view counts as its whole
/// buffer), if it is one with an offset.
std::optional<Interval> sharedInterval(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || getPlace(type) != Place::Shared)
    return std::nullopt;
  AllocSharedOp alloc = sharedAllocation(v);
  if (!alloc || !alloc.getOffset())
    return std::nullopt;
  int64_t at = *alloc.getOffset();
  return Interval{at, at + bytesOf(alloc.getType())};
}

/// The scratch bytes tile-allocate-shared-memory gave a reduction across
/// warps: one f32 slot per result element and warp group.
int64_t scratchBytes(ReduceOp reduce) {
  auto src = reduce.getSrc().getDefiningOp<AllocFragmentOp>();
  std::string why;
  FailureOr<SlicedLayout> sliced =
      src && src.getLayout() ? sliceLayout(src.getLayoutAttr(), src.getType().getShape(),
                                           reduce.getDim(), why)
                             : FailureOr<SlicedLayout>(failure());
  int64_t groups = succeeded(sliced) ? int64_t(1) << llvm::popcount(uint64_t(sliced->warpMask))
                                     : 32; // the most there can be
  return reduce.getDst().getType().getNumElements() * groups * 4;
}

/// What each op accesses, computed once per op: the fixpoint walks revisit
/// the ops of nested loops many times.
using AccessCache = DenseMap<Operation *, Accesses>;

class Analysis {
public:
  Analysis(bool insert, AccessCache &cache) : insert(insert), cache(cache) {}

  void block(Block &b, Accesses &state) {
    for (Operation &op : llvm::make_early_inc_range(b))
      visit(&op, state);
  }

private:
  void visit(Operation *op, Accesses &state) {
    if (isa<gpu::BarrierOp>(op)) {
      state.clear();
      return;
    }
    if (isa<scf::ForOp, PipelinedOp, scf::WhileOp>(op)) {
      loop(op, state);
      return;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      Accesses thenState = state, elseState = state;
      block(branch.getThenRegion().front(), thenState);
      if (!branch.getElseRegion().empty())
        block(branch.getElseRegion().front(), elseState);
      thenState.merge(elseState);
      state = thenState;
      return;
    }
    auto cached = cache.find(op);
    if (cached == cache.end())
      cached = cache.try_emplace(op, accessesOf(op)).first;
    Accesses own = cached->second;
    if (state.conflicts(own.entry())) {
      if (insert) {
        OpBuilder b(op);
        gpu::BarrierOp::create(b, op->getLoc());
      }
      state.clear();
    }
    if (own.protocol) { // the lowering's own barrier, then its reads
      state.clear();
      own.reads.push_back(*own.protocol);
    }
    state.merge(own);
  }

  /// Walks a loop's body until the state at its head stops growing (a dry
  /// run), then once for real from that state.
  void loop(Operation *op, Accesses &state) {
    // A hazard between what came before the loop and the body is resolved
    // once, before the loop, rather than by a barrier that every iteration
    // would pay (e.g. a tile loaded into shared memory before the loop and
    // read by each iteration's gemm).
    if (state.size() != 0 && state.conflicts(bodyAccesses(op))) {
      if (insert) {
        OpBuilder b(op);
        gpu::BarrierOp::create(b, op->getLoc());
      }
      state.clear();
    }
    Accesses head = state;
    for (int i = 0; i < 8; ++i) {
      Accesses end = head;
      for (Region &r : op->getRegions())
        for (Block &b : r)
          Analysis(false, cache).block(b, end);
      size_t before = head.size();
      head.merge(end);
      if (head.size() == before)
        break;
    }
    Accesses end = head;
    for (Region &r : op->getRegions())
      for (Block &b : r)
        block(b, end);
    head.merge(end);
    state = head; // the loop may run zero or more times
  }

  /// Everything the ops nested in a loop or branch may access.
  Accesses bodyAccesses(Operation *op) {
    Accesses all;
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (Operation &inner : b) {
          if (isa<scf::ForOp, PipelinedOp, scf::WhileOp, scf::IfOp>(inner)) {
            all.merge(bodyAccesses(&inner));
            continue;
          }
          auto cached = cache.find(&inner);
          if (cached == cache.end())
            cached = cache.try_emplace(&inner, accessesOf(&inner)).first;
          all.merge(cached->second.entry());
        }
    return all;
  }

  /// What a (non-loop, non-branch) op reads and writes in shared memory.
  static Accesses accessesOf(Operation *op) {
    Accesses a;
    auto read = [&](Value v) {
      if (std::optional<Interval> i = sharedInterval(v))
        a.reads.push_back(*i);
    };
    auto write = [&](Value v) {
      if (std::optional<Interval> i = sharedInterval(v))
        a.writes.push_back(*i);
    };
    auto protocol = [&](Operation *o, StringRef attr, int64_t bytes) {
      if (auto at = o->getAttrOfType<IntegerAttr>(attr))
        a.protocol = Interval{at.getInt(), at.getInt() + bytes};
    };
    if (auto copy = dyn_cast<CopyOp>(op)) {
      if (copy.getAsync())
        return a; // ordered by the pipeliner's wait + barrier
      read(copy.getSrc());
      write(copy.getDst());
      int64_t n = 1;
      for (int64_t d : copy.getTileShape())
        n *= d;
      int64_t width = std::max<int64_t>(1, copy.getDst().getType().getElementTypeBitWidth() / 8);
      protocol(op, "tile.staging_offset", n * width);
      return a;
    }
    if (auto fill = dyn_cast<FillOp>(op)) {
      write(fill.getDst());
      return a;
    }
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      read(gemm.getA());
      read(gemm.getB());
      return a;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      read(reduce.getSrc());
      write(reduce.getDst());
      if (!reduce.getClear())
        read(reduce.getDst());
      protocol(op, "tile.scratch_offset", scratchBytes(reduce));
      return a;
    }
    // Element accesses, also inside T.Parallel bodies.
    op->walk([&](Operation *inner) {
      if (auto load = dyn_cast<memref::LoadOp>(inner))
        read(load.getMemRef());
      else if (auto store = dyn_cast<memref::StoreOp>(inner))
        write(store.getMemRef());
    });
    return a;
  }

  bool insert;
  AccessCache &cache;
};

struct TileInsertBarriers : mlir::tile::impl::TileInsertBarriersBase<TileInsertBarriers> {
  void runOnOperation() final { insertBarriers(getOperation()); }
};

} // namespace

void mlir::tile::insertBarriers(ModuleOp module) {
  module.walk([](KernelOp kernel) {
    Accesses state;
    AccessCache cache;
    Analysis(true, cache).block(kernel.getBody().front(), state);
  });
}
