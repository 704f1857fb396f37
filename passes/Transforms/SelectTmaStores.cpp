//===- SelectTmaStores.cpp - Shared -> global copies as TMA stores --------===//
//
// On a target with TMA, a tile.copy of a whole 2-d shared tile to a global
// tensor inside a loop (an epilogue staged through shared memory: T.copy(
// C_local, C_shared); T.copy(C_shared, C[...]), in a persistent kernel's loop
// over its tiles) becomes a tile.tma_store: one thread hands the tile to the
// TMA unit, which writes it to global memory (clipping what falls outside the
// tensor) while the block goes on with its next tile. The tile is given
// the layout TMA's 128-byte swizzle writes and reads (128-byte column
// blocks, XOR-swizzled), and a tile.tensor_map of the tensor with one column
// block as its box is created at the top of the kernel. Synchronisation is
// tile-insert-barriers' (a fence and a barrier before the store, a bulk wait
// before the tile is written again); copies that do not fit stay as they are.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESELECTTMASTORES
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-select-tma-stores"

namespace {

/// The column block (elements) the store's boxes take from a tile of `type`
/// laid out as `layout`, or nothing when it cannot be stored through TMA's
/// 128-byte swizzle.
std::optional<int64_t> boxColumns(MemRefType type, SharedLayoutAttr layout) {
  int64_t bits = type.getElementTypeBitWidth();
  if (type.getRank() != 2 || bits < 8 || bits % 8 || kTmaSwizzleBytes % (bits / 8))
    return std::nullopt;
  int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
  int64_t block = kTmaSwizzleBytes / (bits / 8);
  if (rows % 8 || rows > 256 || columns % block)
    return std::nullopt;
  if (layout.getStages())
    return std::nullopt;
  // A layout set for another use (a wgmma operand's column blocks, an
  // annotated swizzle) is kept only when it already is TMA's.
  if (layout.getColumnBlock() && layout.getColumnBlock() != block)
    return std::nullopt;
  if (!layout.getColumnBlock() && columns != block && layout.getSwizzle())
    return std::nullopt;
  if (layout.getSwizzle() && !isTmaSwizzle(layout.getSwizzle()))
    return std::nullopt;
  return block;
}

/// The shared bytes the kernel's buffers take, none sharing bytes (an upper
/// bound of what tile-allocate-shared-memory will place).
int64_t sharedBytesAtMost(KernelOp kernel) {
  int64_t total = 0;
  kernel.walk([&](AllocSharedOp alloc) { total += llvm::alignTo(bufferBytes(alloc.getType()), 128); });
  return total;
}

/// Rewrites `copy` (of a whole shared tile, or of a whole fragment, to a
/// global tensor) into a tile.tma_store when it fits; returns whether it did.
/// A fragment is first copied into a new shared tile of the tensor's element
/// type, when the kernel's shared memory has room for one beside everything
/// else (the accumulator of a GEMM whose epilogue copies it straight out).
/// What the copies of one source into one tensor share once selected: the
/// shared tile a fragment goes through and the tensor map.
struct StoreTile {
  AllocSharedOp alloc;
  Value map;
};

/// Whether `other` copies what `copy` copies, into the same tensor, the same
/// way (a clone of the epilogue in another branch: stream-K's pieces and the
/// plain persistent loop of a kernel that picks one at run time).
bool sameStore(CopyOp copy, Operation *other) {
  auto twin = dyn_cast<CopyOp>(other);
  return twin && twin.getSrc() == copy.getSrc() && twin.getDst() == copy.getDst() &&
         twin.getSrcSizes() == copy.getSrcSizes() &&
         twin.getDstSizes() == copy.getDstSizes() && !twin.getAsync() && !twin.getPred() &&
         !twin->hasAttr(kDisableTmaAttr);
}

/// Gives `alloc` (laid out as `layout`) TMA's layout in boxes of `block`
/// columns and the kernel a map of `copy`'s destination tensor in those boxes.
StoreTile storeTile(KernelOp kernel, CopyOp copy, AllocSharedOp alloc, SharedLayoutAttr layout,
                    int64_t block) {
  MLIRContext *ctx = copy.getContext();
  int64_t columns = alloc.getType().getDimSize(1);
  alloc.setLayoutAttr(
      layout.withColumnBlock(columns == block ? 0 : block).withSwizzle(tmaSwizzle(ctx)));
  SmallVector<int64_t> box(copy.getDstSizes());
  box.back() = block;
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Value map = TensorMapOp::create(b, copy.getLoc(), LLVM::LLVMPointerType::get(ctx),
                                  copy.getDst(), b.getDenseI64ArrayAttr(box),
                                  b.getI64IntegerAttr(kTmaSwizzleBytes));
  return {alloc, map};
}

bool selectTmaStore(CopyOp copy, DenseMap<std::pair<Value, Value>, StoreTile> &tiles) {
  TargetAttr target = TargetAttr::lookup(copy);
  auto kernel = copy->getParentOfType<KernelOp>();
  if (!target || !target.has(TargetFeature::Tma) || !kernel || copy.getAsync() ||
      copy.getPred() || copy->hasAttr(kDisableTmaAttr))
    return false;
  // Only where the block has more to do after the store (the next tile of a
  // persistent kernel): its wait then hides behind that work. A store that
  // ends the kernel would have the block wait for the TMA unit's read before
  // it exits, where the threads' own stores let it go at once (on the H200,
  // FlashAttention's output 1-5% slower by TMA; a persistent GEMM's 0-3%
  // faster: bench/results/2026-12-02/session11/).
  if (!copy->getParentOfType<LoopLikeOpInterface>() ||
      !kernel->isAncestor(copy->getParentOfType<LoopLikeOpInterface>()))
    return false;
  auto alloc = copy.getSrc().getDefiningOp<AllocSharedOp>();
  auto fragment = copy.getSrc().getDefiningOp<AllocFragmentOp>();
  MemRefType dst = copy.getDst().getType();
  auto tensor = dyn_cast<BlockArgument>(copy.getDst());
  if ((!alloc && !fragment) || (alloc && isViewed(alloc)) || !tensor || !isa<func::FuncOp>(tensor.getOwner()->getParentOp()) ||
      !tmaProblem(dst).empty() ||
      (alloc && dst.getElementType() != alloc.getType().getElementType()))
    return false;
  // The whole tile, whose columns run along the tensor's innermost dimension.
  MemRefType src = copy.getSrc().getType();
  if (src.getRank() != 2 || copy.getSrcSizes() != src.getShape() ||
      llvm::any_of(copy.getSrcOffsets(),
                   [](Value o) { return getConstantIntValue(o) != int64_t(0); }) ||
      copy.getDstSizes().back() != src.getDimSize(1))
    return false;
  // The store's writes land after the op returns: nothing else in the
  // kernel may touch the tensor (the next kernel of a sequence sees them)
  // but the same store elsewhere (which becomes a TMA store too).
  if (llvm::any_of(tensor.getUsers(), [&](Operation *user) {
        return user != copy && !isa<memref::DimOp, TensorMapOp>(user) &&
               kernel->isAncestor(user) && !sameStore(copy, user);
      }))
    return false;
  StoreTile &known = tiles[{copy.getSrc(), copy.getDst()}];
  if (known.alloc) { // a twin was selected: the same tile and map
    OpBuilder b(copy);
    if (fragment)
      CopyOp::create(b, copy.getLoc(), copy.getSrc(), copy.getSrcOffsets(), copy.getSrcSizes(),
                     known.alloc.getResult(), copy.getSrcOffsets(), copy.getSrcSizes(),
                     /*pred=*/Value());
    TmaStoreOp::create(b, copy.getLoc(), known.alloc.getResult(), known.map,
                       copy.getDstOffsets());
    copy.erase();
    return true;
  }
  MLIRContext *ctx = copy.getContext();
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  MemRefType tileType =
      alloc ? alloc.getType()
            : MemRefType::get(src.getShape(), dst.getElementType(), MemRefLayoutAttrInterface(),
                              workgroup);
  SharedLayoutAttr layout =
      alloc ? sharedLayout(alloc) : SharedLayoutAttr::get(ctx, 0, 0, SwizzleAttr());
  std::optional<int64_t> block = boxColumns(tileType, layout);
  if (!block)
    return false;
  OpBuilder b(ctx);
  if (fragment) {
    // 1024: the alignment a swizzled tile may need.
    if (sharedBytesAtMost(kernel) + bufferBytes(tileType) + 1024 > target.getSharedBytes())
      return false; // no room: the copy stays (staged by its own lowering)
    b.setInsertionPointAfter(fragment);
    alloc = AllocSharedOp::create(b, copy.getLoc(), tileType, SharedLayoutAttr(), IntegerAttr());
    b.setInsertionPoint(copy);
    CopyOp::create(b, copy.getLoc(), copy.getSrc(), copy.getSrcOffsets(), copy.getSrcSizes(),
                   alloc.getResult(), copy.getSrcOffsets(), copy.getSrcSizes(),
                   /*pred=*/Value());
  }
  known = storeTile(kernel, copy, alloc, layout, *block);
  b.setInsertionPoint(copy);
  TmaStoreOp::create(b, copy.getLoc(), alloc.getResult(), known.map, copy.getDstOffsets());
  copy.erase();
  return true;
}

/// T.atomic_add(dst, tile, use_tma=True): `copy` (marked kTmaReduceAddAttr)
/// as a `tile.tma_store ... add` of the whole shared tile, wherever it is in
/// the kernel, or an error saying why it cannot be one.
LogicalResult selectTmaReduce(CopyOp copy,
                              DenseMap<std::pair<Value, Value>, StoreTile> &tiles) {
  TargetAttr target = TargetAttr::lookup(copy);
  auto kernel = copy->getParentOfType<KernelOp>();
  auto fail = [&](const Twine &why) {
    return copy.emitOpError("is a T.atomic_add with use_tma=True that cannot be a TMA "
                            "reduction: ")
           << why;
  };
  if (!target || !target.has(TargetFeature::Tma) || !kernel)
    return fail("the target has no TMA (sm_90a has)");
  if (copy->hasAttr(kDisableTmaAttr))
    return fail("TMA is disabled for this kernel");
  auto alloc = copy.getSrc().getDefiningOp<AllocSharedOp>();
  auto tensor = dyn_cast<BlockArgument>(copy.getDst());
  MemRefType src = copy.getSrc().getType(), dst = copy.getDst().getType();
  if (!alloc || isViewed(alloc) || src.getRank() != 2 || copy.getSrcSizes() != src.getShape())
    return fail("the source is a whole 2-d shared buffer (not a stage, view or part of one)");
  if (!tensor || !isa<func::FuncOp>(tensor.getOwner()->getParentOp()))
    return fail("the destination is a tensor parameter of the kernel");
  if (std::string problem = tmaProblem(dst); !problem.empty())
    return fail(problem);
  if (dst.getElementType() != src.getElementType())
    return fail("the tile and the tensor differ in dtype (TMA adds without converting)");
  if (copy.getDstSizes().back() != src.getDimSize(1))
    return fail("the tile's columns must run along the tensor's innermost dimension");
  SharedLayoutAttr layout = sharedLayout(alloc);
  std::optional<int64_t> block = boxColumns(src, layout);
  if (!block)
    return fail("the tile is not rows of whole 128-byte blocks, 8 to 256 of them, in a layout "
                "of its own");
  StoreTile &known = tiles[{copy.getSrc(), copy.getDst()}];
  if (!known.alloc)
    known = storeTile(kernel, copy, alloc, layout, *block);
  OpBuilder b(copy);
  auto add = TmaStoreOp::create(b, copy.getLoc(), known.alloc.getResult(), known.map,
                                copy.getDstOffsets());
  add.setAdd(true);
  copy.erase();
  return success();
}

struct TileSelectTmaStores : mlir::tile::impl::TileSelectTmaStoresBase<TileSelectTmaStores> {
  void runOnOperation() final {
    if (failed(selectTmaStores(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::selectTmaStores(ModuleOp module) {
  SmallVector<CopyOp> copies, adds;
  module.walk([&](CopyOp copy) {
    Place from = getPlace(copy.getSrc().getType());
    if (copy->hasAttr(kTmaReduceAddAttr))
      adds.push_back(copy);
    else if ((from == Place::Shared || from == Place::Fragment) &&
             getPlace(copy.getDst().getType()) == Place::Global)
      copies.push_back(copy);
  });
  DenseMap<std::pair<Value, Value>, StoreTile> tiles;
  for (CopyOp copy : adds)
    if (failed(selectTmaReduce(copy, tiles)))
      return failure();
  for (CopyOp copy : copies)
    selectTmaStore(copy, tiles);
  return success();
}
