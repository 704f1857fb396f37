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
// tile-pipeline-loops emits; existing gpu.barrier ops count as barriers, and
// the program's named barriers (nvvm.barrier) too.
//
// Code only some threads run (an scf.if / for / while the frontend marks
// tile.divergent: its condition or bounds depend on the thread index, and it
// accesses shared memory) gets no barrier inside, which the threads that skip
// it would never reach: a barrier its accesses need against earlier ones goes
// before it, and later accesses meet its accesses after it. Between its own
// accesses the program orders its threads, as in CUDA (named barriers of the
// threads that run it).
//
// In a tile.ws body the ops run on its warpgroups only: an access is tagged
// with the threads that made it, and a barrier inserted in the body (a named
// barrier of its warpgroups) orders only theirs. Where a body's ops meet
// accesses of other threads that no barrier ordered, a block barrier goes
// before the body; between bodies of disjoint warpgroups in a kernel with
// mbarriers of its own (T.alloc_barrier), ordering is the program's (its
// tile.barrier_arrive also fences the async proxy).
//
// Bytes read through the async proxy (a wgmma gemm's operands, a TMA
// store's tile) get a fence.proxy.async before the barrier that orders the
// threads' writes of them. A TMA store (tile.tma_store) goes on reading its
// tile after the op: before anything writes those bytes again, and at the
// end of the kernel, its thread waits for the read
// (cp.async.bulk.wait_group.read 0) and a barrier follows.
//
//===----------------------------------------------------------------------===//

#include "dialects/tile/Layout.h"
#include "passes/Passes.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEINSERTBARRIERS
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-insert-barriers"

namespace {

/// The threads that made an access: a set of warps (bit w: warp w, a
/// tile.ws body's), or all of the block's.
using Threads = uint64_t;
constexpr Threads kAllThreads = ~Threads(0);

/// The warps of a tile.ws body.
Threads threadsOf(WarpGroupsOp ws) {
  Threads mask = 0;
  for (int64_t w = ws.getFirstWarp(); w < ws.getFirstWarp() + ws.getWarpCount(); ++w)
    mask |= Threads(1) << w;
  return mask;
}

/// Bytes [begin, end) of the kernel's shared memory, accessed by `threads`.
struct Interval {
  int64_t begin, end;
  Threads threads = kAllThreads;
  /// Written by a per-thread element store at an index of the thread's own
  /// (per-thread code, outside T.Parallel): two such stores need no barrier
  /// between them, as in CUDA (threads storing to the same bytes without one
  /// would race whatever barriers follow).
  bool ownElement = false;
  bool overlaps(const Interval &o) const { return begin < o.end && o.begin < end; }
  bool operator==(const Interval &o) const {
    return begin == o.begin && end == o.end && threads == o.threads &&
           ownElement == o.ownElement;
  }
  /// Whether a barrier of `mask`'s threads orders this access.
  bool within(Threads mask) const { return (threads & ~mask) == 0; }
};

/// Which barrier orders an access after earlier ones: none needed, one of
/// the accessing threads (a tile.ws body's named barrier, or the block's at
/// its top level), or the whole block's (before the tile.ws body).
enum class Order { None, Within, Block };

/// Generic-proxy writes a barrier has ordered but no fence.proxy.async yet:
/// a fence just before that barrier would order them before later
/// async-proxy reads. The barrier is named by a key: the gpu.barrier op, or
/// the op a barrier this pass inserts goes before (the same in the dry runs
/// over loops, which insert nothing, and the final walk).
struct Unfenced {
  Interval bytes;
  Operation *barrier;
  bool operator==(const Unfenced &o) const { return bytes == o.bytes && barrier == o.barrier; }
};

/// The shared bytes read and written since the last barrier (or by one op).
struct Accesses {
  SmallVector<Interval> reads, writes;
  /// Bytes an op's lowering writes and then, after a barrier of its own,
  /// reads (a reduction's scratch, a copy's staging): they meet earlier
  /// accesses as writes, and after the op only its reads remain.
  std::optional<Interval> protocol;
  /// Of one op: the bytes it reads through the async proxy (a wgmma gemm's
  /// shared operands), and the bytes it writes through the generic proxy
  /// (threads' stores and its protocol bytes; an async copy's separately:
  /// cp.async writes through the generic proxy too, but only the pipeliner's
  /// next wait + barrier publishes them).
  SmallVector<Interval> asyncReads, genericWrites, asyncCopyWrites;
  /// Of one op: the bytes a bulk (TMA) store reads after the op returns.
  SmallVector<Interval> bulkReads;
  /// Of one op: bytes it writes that earlier accesses meet as writes but
  /// later ones do not see as written since the last barrier (a cp.async
  /// pipeline's first copies, before its loop: bytes another buffer may have
  /// used before; the pipeline's own waits and barriers publish them).
  SmallVector<Interval> entryWrites;
  /// Of the state: generic writes since the last barrier, async copies'
  /// writes the next barrier publishes, and writes ordered by a barrier but
  /// not fenced.
  SmallVector<Interval> unfencedSince, unpublished;
  SmallVector<Unfenced> unfencedBefore;
  /// Of the state: bytes bulk stores may still be reading (no wait since).
  SmallVector<Interval> storing;

  /// A barrier (key: see Unfenced) of the threads `mask`: their reads and
  /// writes before it are ordered.
  void barrier(Operation *key, Threads mask) {
    auto ordered = [&](const Interval &i) { return i.within(mask); };
    llvm::erase_if(reads, ordered);
    llvm::erase_if(writes, ordered);
    for (SmallVector<Interval> *from : {&unfencedSince, &unpublished}) {
      for (const Interval &i : *from)
        if (ordered(i))
          addUnique(unfencedBefore, Unfenced{i, key});
      llvm::erase_if(*from, ordered);
    }
  }
  /// An op's accesses as made by `threads`.
  Accesses by(Threads threads) const {
    Accesses a = *this;
    for (SmallVector<Interval> *v : {&a.reads, &a.writes, &a.asyncReads, &a.genericWrites,
                                     &a.asyncCopyWrites, &a.bulkReads, &a.entryWrites})
      for (Interval &i : *v)
        i.threads = threads;
    if (a.protocol)
      a.protocol->threads = threads;
    return a;
  }
  template <typename T>
  static void addUnique(SmallVector<T> &to, ArrayRef<T> from) {
    for (const T &i : from)
      if (!llvm::is_contained(to, i))
        to.push_back(i);
  }
  template <typename T>
  static void addUnique(SmallVector<T> &to, const T &i) {
    if (!llvm::is_contained(to, i))
      to.push_back(i);
  }
  /// The join of two paths, or an op's own accesses joined into the state.
  void merge(const Accesses &o) {
    addUnique<Interval>(reads, o.reads);
    addUnique<Interval>(writes, o.writes);
    addUnique<Interval>(unfencedSince, o.unfencedSince);
    addUnique<Interval>(unfencedSince, o.genericWrites);
    addUnique<Unfenced>(unfencedBefore, o.unfencedBefore);
    addUnique<Interval>(unpublished, o.unpublished);
    addUnique<Interval>(unpublished, o.asyncCopyWrites);
    addUnique<Interval>(storing, o.storing);
    addUnique<Interval>(storing, o.bulkReads);
  }
  size_t size() const {
    return reads.size() + writes.size() + unfencedSince.size() + unfencedBefore.size() +
           unpublished.size() + storing.size();
  }
  static bool any(ArrayRef<Interval> a, ArrayRef<Interval> b) {
    return llvm::any_of(a, [&](const Interval &x) {
      return llvm::any_of(b, [&](const Interval &y) { return x.overlaps(y); });
    });
  }
  /// The op's accesses as earlier ones see them: its protocol bytes written.
  Accesses entry() const {
    Accesses e;
    e.reads = reads;
    e.writes = writes;
    if (protocol)
      e.writes.push_back(*protocol);
    llvm::append_range(e.writes, entryWrites);
    return e;
  }
  /// The barrier `next`, run by `threads`, needs after these accesses. With
  /// `programOrders` (the kernel's own mbarriers), accesses of tile.ws
  /// bodies of disjoint warpgroups are the program's to order.
  Order orderFor(const Accesses &next, Threads threads, bool programOrders) const {
    Order order = Order::None;
    auto check = [&](ArrayRef<Interval> earlier, ArrayRef<Interval> later, bool bothWrites) {
      for (const Interval &x : earlier)
        if (llvm::any_of(later,
                         [&](const Interval &y) {
                           return x.overlaps(y) &&
                                  !(bothWrites && x.ownElement && y.ownElement);
                         }) &&
            !programOrdered(x, threads, programOrders))
          order = std::max(order, x.within(threads) ? Order::Within : Order::Block);
    };
    check(writes, next.reads, false);
    check(writes, next.writes, true);
    check(reads, next.writes, false);
    return order;
  }
  static bool programOrdered(const Interval &x, Threads threads, bool programOrders) {
    return programOrders && threads != kAllThreads && x.threads != kAllThreads &&
           !(x.threads & threads);
  }
};

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
  return Interval{at, at + bufferBytes(alloc.getType())};
}

/// The scratch bytes tile-allocate-shared-memory gave a reduction across
/// warps: one slot per result element and warp group (reduceScratchBytes).
int64_t scratchBytes(ReduceOp reduce) {
  std::optional<LayoutAttr> src = fragmentLayout(reduce.getSrc());
  std::string why;
  FailureOr<SlicedLayout> sliced =
      src ? sliceLayout(*src, reduce.getSrc().getType().getShape(), reduce.getDim(), why)
          : FailureOr<SlicedLayout>(failure());
  int64_t groups = succeeded(sliced) ? int64_t(1) << llvm::popcount(uint64_t(sliced->warpMask))
                                     : 32; // the most there can be
  return reduceScratchBytes(reduce, groups);
}

/// What each op accesses, computed once per op: the fixpoint walks revisit
/// the ops of nested loops many times.
using AccessCache = DenseMap<Operation *, Accesses>;

/// The attribute the frontend puts on an scf.if / for / while whose
/// condition or bounds depend on the thread index and in which shared memory
/// is accessed: only some threads run its body, so no barrier goes there.
constexpr llvm::StringLiteral kDivergentAttr = "tile.divergent";

class Analysis {
public:
  Analysis(bool insert, AccessCache &cache, bool programOrders,
           Threads threads = kAllThreads, Operation *divergent = nullptr)
      : insert(insert), programOrders(programOrders), cache(cache), threads(threads),
        divergent(divergent) {}

  void block(Block &b, Accesses &state) {
    for (Operation &op : llvm::make_early_inc_range(b))
      visit(&op, state);
  }

private:
  void visit(Operation *op, Accesses &state) {
    // The program's barriers: the block's, or a named one (the program's
    // synchronization of the threads that reach it, in divergent code too).
    if (isa<gpu::BarrierOp, NVVM::BarrierOp>(op)) {
      state.barrier(op, threads);
      return;
    }
    if (!divergent && op->hasAttr(kDivergentAttr)) {
      divergentRegion(op, state);
      return;
    }
    if (auto ws = dyn_cast<WarpGroupsOp>(op)) {
      warpGroups(ws, state);
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
    Accesses own = cached->second.by(threads);
    if (Accesses::any(own.entry().writes, state.storing))
      waitForStores(op, state);
    // (Block: not inside a tile.ws body, whose entry ordered the other
    // threads' accesses its ops meet.)
    if (state.orderFor(own.entry(), threads, programOrders) != Order::None)
      state.barrier(insertBarrier(op), threads);
    if (!own.asyncReads.empty())
      fence(op, own.asyncReads, state);
    auto gemm = dyn_cast<GemmOp>(op);
    if (own.protocol || (gemm && !gemm.getPrefetch().empty())) {
      // The lowering's own barrier (a prefetching gemm's after its reads of
      // this iteration's stage), then its reads; no fence can go before it.
      auto ordered = [&](const Interval &i) { return i.within(threads); };
      llvm::erase_if(state.reads, ordered);
      llvm::erase_if(state.writes, ordered);
      if (own.protocol)
        own.reads.push_back(*own.protocol);
    }
    state.merge(own);
  }

  /// A gpu.barrier before `op` when inserting (also in `inserted`); returns
  /// `op`, the barrier's key. Inside divergent code none can go (the
  /// threads that skip it would never reach it): there the program orders
  /// its threads' accesses itself, as in CUDA (T.sync_threads(barrier_id,
  /// arrive_count) of the threads that run it).
  Operation *insertBarrier(Operation *op) {
    if (insert && !divergent) {
      OpBuilder b(op);
      inserted[op] = gpu::BarrierOp::create(b, op->getLoc());
    }
    return op;
  }

  /// Before `op` (a loop, or a region only some threads run), whose body
  /// makes the accesses `body`: the waits and the one barrier its accesses
  /// need against those before it (`state`).
  void meetBefore(Operation *op, const Accesses &body, Accesses &state) {
    if (Accesses::any(body.writes, state.storing))
      waitForStores(op, state);
    if (state.size() != 0 && state.orderFor(body, threads, programOrders) != Order::None)
      state.barrier(insertBarrier(op), threads);
  }

  /// An scf.if / for / while only some threads run (kDivergentAttr): the
  /// barrier its accesses need against earlier ones goes before it, and
  /// those after it meet its accesses after it; between its own accesses
  /// none goes (insertBarrier).
  void divergentRegion(Operation *op, Accesses &state) {
    meetBefore(op, bodyAccesses(op, threads), state);
    Accesses end = state;
    for (Region &r : op->getRegions())
      for (Block &b : r)
        Analysis(false, cache, programOrders, threads, op).block(b, end);
    state.merge(end); // some threads ran it, or none
  }

  /// Before `op`: the bulk stores' wait for their reads of shared memory,
  /// then a barrier (the storing thread waited; the others wait for it).
  void waitForStores(Operation *op, Accesses &state) {
    if (insert) {
      OpBuilder b(op);
      NVVM::CpAsyncBulkWaitGroupOp::create(b, op->getLoc(), 0, b.getUnitAttr());
    }
    state.storing.clear();
    state.barrier(insertBarrier(op), threads);
  }

  /// A tile.ws body: a block barrier before it where its ops meet accesses
  /// of other threads no barrier ordered yet (and the program does not),
  /// then its ops as run by its warpgroups.
  void warpGroups(WarpGroupsOp ws, Accesses &state) {
    Threads mask = threadsOf(ws);
    if (state.orderFor(bodyAccesses(ws, mask), mask, programOrders) == Order::Block)
      state.barrier(insertBarrier(ws), kAllThreads);
    Threads outer = threads;
    threads = mask;
    block(ws.getBody().front(), state);
    threads = outer;
  }

  /// Orders the threads' writes of the bytes `op` reads through the async
  /// proxy (a wgmma gemm's shared operands) before it: a fence.proxy.async
  /// just before the barrier that ordered them (every writer runs it after
  /// its writes; placed once the walk is done, as the barrier may be one
  /// inserted later in a loop body); writes no barrier ordered yet (only the
  /// one inside a staged copy or a reduction) get a barrier before `op`.
  void fence(Operation *op, ArrayRef<Interval> asyncReads, Accesses &state) {
    // The program's own mbarriers order (and fence: tile.barrier_arrive) the
    // writes of other warpgroups.
    auto mine = [&](const Interval &w) {
      return !Accesses::programOrdered(w, threads, programOrders);
    };
    if (llvm::any_of(state.unfencedSince, [&](const Interval &w) {
          return mine(w) &&
                 llvm::any_of(asyncReads, [&](const Interval &r) { return r.overlaps(w); });
        }))
      state.barrier(insertBarrier(op), threads);
    SmallVector<Operation *> keys;
    for (const Unfenced &u : state.unfencedBefore)
      if (mine(u.bytes) &&
          llvm::any_of(asyncReads, [&](const Interval &r) { return r.overlaps(u.bytes); }) &&
          !llvm::is_contained(keys, u.barrier))
        keys.push_back(u.barrier);
    for (Operation *key : keys) {
      if (insert)
        fences.insert(key);
      // The fence orders everything written before that barrier.
      llvm::erase_if(state.unfencedBefore, [&](const Unfenced &u) { return u.barrier == key; });
    }
  }

  /// Walks a loop's body until the state at its head stops growing (a dry
  /// run), then once for real from that state.
  void loop(Operation *op, Accesses &state) {
    // A hazard between what came before the loop and the body is resolved
    // once, before the loop, rather than by a barrier that every iteration
    // would pay (e.g. a tile loaded into shared memory before the loop and
    // read by each iteration's gemm).
    meetBefore(op, bodyAccesses(op, threads), state);
    Accesses head = state;
    for (int i = 0; i < 8; ++i) {
      Accesses end = head;
      for (Region &r : op->getRegions())
        for (Block &b : r)
          Analysis(false, cache, programOrders, threads, divergent).block(b, end);
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

  /// Everything the ops nested in a loop, branch or tile.ws body may access,
  /// as made by `by` (a nested tile.ws body's by its warpgroups).
  Accesses bodyAccesses(Operation *op, Threads by) {
    Accesses all;
    for (Region &r : op->getRegions())
      for (Block &b : r)
        for (Operation &inner : b) {
          if (isa<scf::ForOp, PipelinedOp, scf::WhileOp, scf::IfOp>(inner)) {
            all.merge(bodyAccesses(&inner, by));
            continue;
          }
          if (auto ws = dyn_cast<WarpGroupsOp>(inner)) {
            all.merge(bodyAccesses(&inner, threadsOf(ws)));
            continue;
          }
          auto cached = cache.find(&inner);
          if (cached == cache.end())
            cached = cache.try_emplace(&inner, accessesOf(&inner)).first;
          all.merge(cached->second.by(by).entry());
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
      if (std::optional<Interval> i = sharedInterval(v)) {
        a.writes.push_back(*i);
        a.genericWrites.push_back(*i);
      }
    };
    auto protocol = [&](Operation *o, StringRef attr, int64_t bytes) {
      if (auto at = o->getAttrOfType<IntegerAttr>(attr)) {
        a.protocol = Interval{at.getInt(), at.getInt() + bytes};
        a.genericWrites.push_back(*a.protocol);
      }
    };
    if (auto copy = dyn_cast<CopyOp>(op)) {
      if (copy.getAsync()) { // ordered by the pipeliner's wait + barrier
        if (std::optional<Interval> i = sharedInterval(copy.getDst())) {
          a.asyncCopyWrites.push_back(*i);
          // Before the pipeline's loop (its prologue), the stages' bytes may
          // have been another buffer's until now (tile.drained).
          auto loop = op->getParentOfType<scf::ForOp>();
          if (!loop || !loop->hasAttr("tile.num_stages"))
            a.entryWrites.push_back(*i);
        }
        return a;
      }
      read(copy.getSrc());
      write(copy.getDst());
      int64_t n = 1;
      for (int64_t d : copy.getTileShape())
        n *= d;
      int64_t width = std::max<int64_t>(1, copy.getDst().getType().getElementTypeBitWidth() / 8);
      protocol(op, "tile.staging_offset", n * width);
      return a;
    }
    if (auto store = dyn_cast<TmaStoreOp>(op)) {
      read(store.getSrc());
      a.asyncReads = a.reads; // the TMA unit reads the tile
      a.bulkReads = a.reads;  // and goes on after the op
      return a;
    }
    if (auto fill = dyn_cast<FillOp>(op)) {
      write(fill.getDst());
      return a;
    }
    if (auto transpose = dyn_cast<TransposeOp>(op)) {
      read(transpose.getSrc());
      write(transpose.getDst());
      return a;
    }
    if (auto gemm = dyn_cast<GemmOp>(op)) {
      read(gemm.getA());
      read(gemm.getB());
      if (gemm.getMmaAttr() && gemm.getMmaAttr().getKind() == MmaKind::Wgmma)
        a.asyncReads = a.reads; // the tensor cores read the shared operands
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
    // A per-thread store (an element or a vector) at an index of the thread's own.
    auto [stored, indices] =
        llvm::TypeSwitch<Operation *, std::pair<Value, ValueRange>>(op)
            .Case([](memref::StoreOp s) { return std::make_pair(s.getMemRef(), s.getIndices()); })
            .Case([](vector::StoreOp s) { return std::make_pair(s.getBase(), s.getIndices()); })
            .Default([](Operation *) { return std::make_pair(Value(), ValueRange()); });
    if (stored && llvm::any_of(indices, [](Value i) { return dependsOnThread(i); })) {
      write(stored);
      for (Interval &i : a.writes)
        i.ownElement = true;
      return a;
    }
    // Element accesses, also inside T.Parallel bodies.
    op->walk([&](Operation *inner) {
      if (auto load = dyn_cast<memref::LoadOp>(inner))
        read(load.getMemRef());
      else if (auto store = dyn_cast<memref::StoreOp>(inner))
        write(store.getMemRef());
      else if (auto rmw = dyn_cast<memref::AtomicRMWOp>(inner)) {
        read(rmw.getMemref()); // an atomic of shared memory (a histogram)
        write(rmw.getMemref());
      } else if (auto load = dyn_cast<vector::LoadOp>(inner))
        read(load.getBase());
      else if (auto store = dyn_cast<vector::StoreOp>(inner))
        write(store.getBase());
    });
    return a;
  }

public:
  /// After the final walk: a fence.proxy.async before each barrier a fence
  /// was asked for.
  void placeFences() {
    for (Operation *key : fences) {
      Operation *barrier = isa<gpu::BarrierOp>(key) ? key : inserted.lookup(key);
      OpBuilder b(barrier ? barrier : key);
      if (!barrier) // not inserted after all: a barrier of its own
        barrier = gpu::BarrierOp::create(b, key->getLoc());
      b.setInsertionPoint(barrier);
      NVVM::FenceProxyOp::create(
          b, key->getLoc(), NVVM::ProxyKindAttr::get(key->getContext(), NVVM::ProxyKind::async_shared),
          NVVM::SharedSpaceAttr::get(key->getContext(), NVVM::SharedSpace::shared_cta));
    }
  }

private:
  bool insert;
  bool programOrders; ///< the kernel has mbarriers of its own
  AccessCache &cache;
  /// The threads running the ops walked: a tile.ws body's, else all.
  Threads threads = kAllThreads;
  /// The divergent region (kDivergentAttr) the walk is in, if any.
  Operation *divergent = nullptr;
  /// Keys (see Unfenced) of the barriers a fence goes before, and the
  /// barriers this walk inserted, by key.
  llvm::SetVector<Operation *> fences;
  DenseMap<Operation *, Operation *> inserted;
};

struct TileInsertBarriers : mlir::tile::impl::TileInsertBarriersBase<TileInsertBarriers> {
  void runOnOperation() final { insertBarriers(getOperation()); }
};

} // namespace

void mlir::tile::insertBarriers(ModuleOp module) {
  module.walk([](KernelOp kernel) {
    Accesses state;
    AccessCache cache;
    Analysis analysis(true, cache, kernel->hasAttr(kProgramBarriersAttr));
    analysis.block(kernel.getBody().front(), state);
    analysis.placeFences();
    if (!state.storing.empty()) { // the tile stays until the stores read it
      OpBuilder b = OpBuilder::atBlockEnd(&kernel.getBody().front());
      NVVM::CpAsyncBulkWaitGroupOp::create(b, kernel.getLoc(), 0, b.getUnitAttr());
    }
  });
}
