//===- AllocateSharedMemory.cpp - Place shared buffers --------------------===//
//
// Gives every shared buffer, reduction scratch and staging area a byte offset.
// Pieces whose lifetimes cannot overlap share bytes: a lifetime is the span of
// top-level ops, in the innermost block holding all of a piece's accesses,
// that contain them; buffers accessed asynchronously (cp.async and TMA
// destinations, wgmma operands of pending groups, mbarriers) or not at all
// keep their bytes for the whole kernel, as do those a tile.ws body accesses
// (its warpgroups run at their own pace).
//
//===----------------------------------------------------------------------===//

#include "dialects/tile/Layout.h"
#include "passes/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEALLOCATESHAREDMEMORY
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-allocate-shared-memory"

namespace {

/// When a piece of shared memory is in use: the top-level ops of `block`
/// (indices first..last) that contain every access; a pinned piece is in use
/// for the whole kernel.
struct Lifetime {
  Block *block = nullptr;
  int64_t first = 0, last = 0;
  bool pinned = true;
};

/// The ancestor of `op` (or `op`) whose block is `block`, if any.
Operation *ancestorIn(Block *block, Operation *op) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

/// Whether `inner` is `outer` or nested in one of its ops' regions.
bool within(Block *inner, Block *outer) {
  for (Block *b = inner; b; b = b->getParentOp() ? b->getParentOp()->getBlock() : nullptr)
    if (b == outer)
      return true;
  return false;
}

/// Op positions in their blocks, computed once.
class Positions {
public:
  int64_t of(Operation *op) {
    auto it = index.find(op);
    if (it != index.end())
      return it->second;
    int64_t i = 0;
    for (Operation &o : *op->getBlock())
      index[&o] = i++;
    return index[op];
  }

private:
  DenseMap<Operation *, int64_t> index;
};

/// The lifetime of the ops `users`: their innermost common block and the span
/// of their ancestors there.
Lifetime lifetimeOf(ArrayRef<Operation *> users, Positions &pos) {
  Lifetime life;
  if (users.empty())
    return life;
  // A tile.ws body runs on its warpgroups at their own pace, not at its
  // place among the other warpgroups' ops: its pieces keep their bytes.
  if (llvm::any_of(users, [](Operation *u) { return u->getParentOfType<WarpGroupsOp>(); }))
    return life;
  Block *common = users.front()->getBlock();
  for (Operation *user : users)
    while (!within(user->getBlock(), common))
      common = common->getParentOp()->getBlock();
  life.block = common;
  life.first = INT64_MAX;
  life.last = INT64_MIN;
  for (Operation *user : users) {
    int64_t at = pos.of(ancestorIn(common, user));
    life.first = std::min(life.first, at);
    life.last = std::max(life.last, at);
  }
  life.pinned = false;
  return life;
}

/// Whether two lifetimes may overlap in time: compared in the innermost block
/// holding both (a lifetime in a nested block covers its ancestor op there);
/// lifetimes in the two branches of an scf.if or the roles of a
/// warp-specialized kernel meet at that op and overlap.
bool overlap(const Lifetime &a, const Lifetime &b, Positions &pos) {
  if (a.pinned || b.pinned)
    return true;
  Block *common = a.block;
  while (!within(b.block, common))
    common = common->getParentOp()->getBlock();
  auto span = [&](const Lifetime &l) -> std::pair<int64_t, int64_t> {
    if (l.block == common)
      return {l.first, l.last};
    int64_t at = pos.of(ancestorIn(common, l.block->getParentOp()));
    return {at, at};
  };
  auto [a0, a1] = span(a);
  auto [b0, b1] = span(b);
  return a0 <= b1 && b0 <= a1;
}

/// The lifetime of a shared buffer: from its accesses when all of them are
/// ordinary ones the barrier pass sees (synchronous copies, fills, element
/// loads and stores, reductions, transposes, gemms waited for in the op, TMA stores); pinned when
/// any access is asynchronous (cp.async, TMA, a wgmma group left pending,
/// mbarriers) or not understood, or when it has none.
Lifetime bufferLifetime(AllocSharedOp alloc, Positions &pos) {
  SmallVector<Operation *> users;
  // A view's accesses are the allocation's (T.reshape / T.view), and so are
  // a drained pipeline's stages'.
  bool drained = alloc->hasAttr(kDrainedAttr);
  SmallVector<Operation *> accesses;
  SmallVector<Value> names = {alloc.getResult()};
  while (!names.empty()) {
    for (Operation *user : names.pop_back_val().getUsers()) {
      if (auto view = dyn_cast<ViewOp>(user))
        names.push_back(view.getResult());
      else if (auto stage = dyn_cast<StageOp>(user); stage && drained)
        names.push_back(stage.getResult());
      else
        accesses.push_back(user);
    }
  }
  if (drained) {
    // A cp.async pipeline's stages (tile-pipeline-loops): in use from its
    // first copy to the wait for all copies and the barrier after its loop.
    Lifetime life = lifetimeOf(accesses, pos);
    if (life.pinned)
      return life;
    Operation *last = nullptr;
    for (Operation *access : accesses)
      if (Operation *top = ancestorIn(life.block, access); pos.of(top) == life.last)
        last = top;
    for (Operation *next = last->getNextNode();
         next && isa<NVVM::CpAsyncWaitGroupOp, NVVM::WgmmaWaitGroupSyncOp, gpu::BarrierOp>(next);
         next = next->getNextNode())
      life.last = pos.of(next);
    return life;
  }
  for (Operation *user : accesses) {
    if (auto copy = dyn_cast<CopyOp>(user); copy && !copy.getAsync()) {
      users.push_back(user);
      continue;
    }
    if (auto gemm = dyn_cast<GemmOp>(user)) {
      MmaAttr mma = gemm.getMmaAttr();
      if (mma && (mma.getKind() != MmaKind::Wgmma || mma.getDepth() == 0)) {
        users.push_back(user);
        continue;
      }
      // A chain (tile-select-mma: depth -1 before a gemm onto the same
      // accumulator) runs until its last gemm's wait.
      GemmOp last = gemm;
      while (last.getMmaAttr() && last.getMmaAttr().getDepth() == -1) {
        auto next = dyn_cast_or_null<GemmOp>(nextEffectful(last));
        if (!next || next.getC() != last.getC())
          break;
        last = next;
      }
      if (last != gemm && last.getMmaAttr() && last.getMmaAttr().getDepth() == 0) {
        users.push_back(user);
        users.push_back(last);
        continue;
      }
      return Lifetime();
    }
    // A TMA store reads its tile after the op too, but tile-insert-barriers
    // waits for that read before any later write of the same bytes, whichever
    // buffer they belong to then.
    if (isa<FillOp, ReduceOp, TransposeOp, memref::LoadOp, memref::StoreOp, TmaStoreOp>(user)) {
      users.push_back(user);
      continue;
    }
    return Lifetime();
  }
  return lifetimeOf(users, pos);
}

/// A piece of shared memory to place.
struct Piece {
  Operation *op;             ///< the alloc, or the op that uses the scratch
  StringRef attr;            ///< where its offset goes
  int64_t bytes, align;
  Lifetime life;
  bool optional = false;     ///< staging for speed: dropped if it does not fit
  /// The lifetime to fall back to when the kernel does not fit with `life`
  /// (bytes of its own preferred: a reduction's scratch).
  std::optional<Lifetime> shareable;
};

LogicalResult allocateKernel(KernelOp kernel, int64_t maxBytes) {
  Positions pos;
  SmallVector<Piece> pieces;
  SmallVector<AllocSharedOp> allocs;
  kernel.walk([&](AllocSharedOp alloc) {
    // The swizzle pattern repeats every 1024 bytes, so swizzled buffers start
    // on a 1024-byte boundary; the rest on 128 bytes (a TMA box's need).
    pieces.push_back({alloc, "offset", bufferBytes(alloc.getType()),
                      sharedLayout(alloc).getSwizzle() ? 1024 : 128, bufferLifetime(alloc, pos)});
    allocs.push_back(alloc);
  });
  auto during = [&](Operation *op) { return lifetimeOf({op}, pos); };
  // Reductions across warps exchange partial results through shared memory:
  // one slot per result element and warp group.
  kernel.walk([&](ReduceOp reduce) {
    std::optional<LayoutAttr> src = fragmentLayout(reduce.getSrc());
    if (!src)
      return WalkResult::advance(); // the lowering reports it
    std::string why;
    FailureOr<SlicedLayout> sliced =
        sliceLayout(*src, reduce.getSrc().getType().getShape(), reduce.getDim(), why);
    if (failed(sliced) || !sliced->warpMask)
      return WalkResult::advance();
    int64_t groups = int64_t(1) << llvm::popcount(uint64_t(sliced->warpMask));
    int64_t bytes = reduceScratchBytes(reduce, groups);
    // Its own bytes for the whole kernel where the budget has room (a few
    // hundred bytes to a few KB): sharing bytes with other pieces, it would
    // need a barrier against each of their accesses, where alone it needs
    // none between consecutive reductions (MLA decode: three barriers an
    // iteration instead of six). Else its lifetime, like the rest.
    Piece scratch{reduce, "tile.scratch_offset", bytes, 128, Lifetime()};
    scratch.shareable = during(reduce);
    pieces.push_back(scratch);
    return WalkResult::advance();
  });
  // A fragment whose registers hold short runs (an mma accumulator: 2
  // elements) would be stored to global memory in pieces of 4 or 8 bytes;
  // staged through shared memory the block writes whole 16-byte vectors.
  // Staging is added only where the budget has room for it.
  kernel.walk([&](CopyOp copy) {
    std::optional<LayoutAttr> frag = fragmentLayout(copy.getSrc());
    MemRefType dst = copy.getDst().getType();
    if (!frag || copy.getAsync() || getPlace(dst) != Place::Global)
      return;
    int64_t bytes = std::max<int64_t>(1, dst.getElementTypeBitWidth() / 8);
    SmallVector<int64_t> tile = copy.getTileShape();
    if (tile.size() != 2 || tile.back() * bytes % 16 != 0 ||
        frag->getContiguousRun() * bytes >= 16)
      return;
    Piece staging{copy, "tile.staging_offset", tile[0] * tile[1] * bytes, 1024, during(copy)};
    staging.optional = true;
    pieces.push_back(staging);
  });
  // A copy between fragments whose layouts place elements differently (an
  // accumulator cast into another gemm's A operand with another warp
  // partition) goes through shared memory where some element changes warps
  // (or a warp's lanes would need different registers): each thread stores
  // its registers, the block meets, each thread loads the ones its new
  // layout gives it. Unlike staging for speed this one is needed: it counts
  // against the budget like a buffer. One whose elements all stay in their
  // warps moves by shuffles (convert-tile-to-gpu) and needs no bytes.
  SmallVector<CopyOp> conversions;
  kernel.walk([&](CopyOp copy) {
    std::optional<LayoutAttr> src = fragmentLayout(copy.getSrc());
    std::optional<LayoutAttr> dst = fragmentLayout(copy.getDst());
    if (!src || !dst || equivalentLayouts(*src, *dst))
      return;
    std::string why;
    MemRefType srcType = copy.getSrc().getType();
    if (succeeded(shuffleConversion(*src, srcType.getShape(), *dst,
                                    copy.getDst().getType().getShape(),
                                    srcType.getElementTypeBitWidth(), why)))
      return;
    MemRefType dstType = copy.getDst().getType();
    int64_t bytes = std::max<int64_t>(1, dstType.getElementTypeBitWidth() / 8);
    pieces.push_back({copy, "tile.staging_offset", dstType.getNumElements() * bytes, 1024,
                      during(copy)});
    conversions.push_back(copy);
  });

  // First fit, in the order above: a piece goes at the lowest aligned offset
  // whose bytes no piece placed before it uses at an overlapping time. Pieces
  // in use at different times may share bytes; tile-insert-barriers orders
  // their accesses like any others (it works on bytes).
  struct Placed {
    int64_t begin, end;
    Lifetime life;
  };
  auto placeAll = [&]() {
    SmallVector<Placed> placed;
    int64_t total = 0;
    for (Piece &piece : pieces) {
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (const Placed &p : placed)
        if (overlap(p.life, piece.life, pos))
          busy.push_back({p.begin, p.end});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [begin, end] : busy) {
        offset = llvm::alignTo(offset, piece.align);
        if (offset + piece.bytes <= begin)
          break;
        offset = std::max(offset, end);
      }
      offset = llvm::alignTo(offset, piece.align);
      if (piece.optional && offset + piece.bytes > maxBytes) {
        piece.op->removeAttr(piece.attr); // placed by an earlier attempt
        continue;
      }
      piece.op->setAttr(piece.attr,
                        IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), offset));
      placed.push_back({offset, offset + piece.bytes, piece.life});
      total = std::max(total, offset + piece.bytes);
    }
    return total;
  };
  int64_t total = placeAll();
  if (total > maxBytes && llvm::any_of(pieces, [](const Piece &p) { return p.shareable; })) {
    for (Piece &piece : pieces)
      if (piece.shareable)
        piece.life = *piece.shareable;
    total = placeAll();
  }
  kernel->setAttr("tile.shared_bytes",
                  IntegerAttr::get(IntegerType::get(kernel.getContext(), 64), total));
  if (total <= maxBytes)
    return success();
  InFlightDiagnostic diag = kernel.emitError()
                            << "the kernel needs " << total
                            << " bytes of shared memory but the target allows "
                            << maxBytes << " per block";
  for (AllocSharedOp alloc : allocs)
    diag.attachNote(alloc.getLoc())
        << bufferBytes(alloc.getType()) << " bytes for this "
        << alloc.getType() << " buffer";
  for (CopyOp copy : conversions)
    diag.attachNote(copy.getLoc())
        << bufferBytes(copy.getDst().getType())
        << " bytes to convert the layout of this fragment copy";
  return failure();
}

struct TileAllocateSharedMemory
    : mlir::tile::impl::TileAllocateSharedMemoryBase<TileAllocateSharedMemory> {
  using Base::Base;
  void runOnOperation() final {
    if (failed(allocateSharedMemory(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::allocateSharedMemory(ModuleOp module) {
  WalkResult result = module.walk([&](KernelOp kernel) {
    FailureOr<TargetAttr> target = TargetAttr::require(kernel, DEBUG_TYPE);
    if (failed(target))
      return WalkResult::interrupt();
    return failed(allocateKernel(kernel, target->getSharedBytes())) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
