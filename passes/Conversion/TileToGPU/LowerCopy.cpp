//===- LowerCopy.cpp - tile.copy -> per-thread vector loads and stores ----===//
//
// A copy with a fragment side moves each thread's own registers, a run of
// contiguous ones at a time; a copy between two fragments converts registers
// in place; any other copy spreads 16-byte vectors over the block so that
// consecutive threads touch consecutive addresses. Global sides are masked,
// shared sides swizzled; async copies become cp.async.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/LowerCopy.h"
#include "dialects/tile/LayoutMath.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

TileSide makeSide(Value buffer, OperandRange offsets, ArrayRef<int64_t> sizes,
                  const SharedBuffers &shared) {
  return TileSide{buffer, getPlace(cast<MemRefType>(buffer.getType())),
                  SmallVector<Value>(offsets), SmallVector<int64_t>(sizes), &shared};
}

/// Drops the unit dimensions of a fragment index (tile coordinates).
SmallVector<Value> squeezeIndex(ArrayRef<Value> index,
                                       ArrayRef<int64_t> shape) {
  SmallVector<Value> result;
  for (auto [i, d] : llvm::zip(index, shape))
    if (d != 1)
      result.push_back(i);
  return result;
}

} // namespace

/// src -> staging, barrier, staging -> dst, with `tile.staging_offset`'s
/// shared bytes between: fragment -> global stores as 16-byte vectors across
/// the block; fragment -> fragment converts between layouts (each thread
/// stores its registers and loads the ones its new layout holds).
static LogicalResult lowerStaged(CopyOp copy, int64_t offset, Value tid, int64_t threads,
                                 Value smem, const Fragments &fragments,
                                 SharedBuffers &shared) {
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  SmallVector<int64_t> tile = copy.getTileShape();
  Type elem = copy.getDst().getType().getElementType();
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(tile, elem, MemRefLayoutAttrInterface(), wg);
  auto flatType = MemRefType::get({type.getNumElements()}, elem,
                                  MemRefLayoutAttrInterface(), wg);
  Value at = arith::ConstantIndexOp::create(b, loc, offset);
  Value view = memref::ViewOp::create(b, loc, type, smem, at, ValueRange{});
  Value flat = memref::ViewOp::create(b, loc, flatType, smem, at, ValueRange{});
  SwizzleAttr swizzle;
  if (std::optional<std::array<int64_t, 3>> s = chooseSwizzle(type))
    swizzle = SwizzleAttr::get(b.getContext(), (*s)[0], (*s)[1], (*s)[2]);
  shared[view] = SharedView{flat, SharedLayoutAttr::get(b.getContext(), 0, 0, swizzle), Value()};
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> zeros(tile.size(), c0);
  // tile-insert-barriers put a barrier before the op if earlier accesses
  // of the staging needed one.
  auto in = CopyOp::create(b, loc, copy.getSrc(), copy.getSrcOffsets(), copy.getSrcSizes(),
                           view, zeros, tile, /*pred=*/Value());
  gpu::BarrierOp::create(b, loc);
  auto out = CopyOp::create(b, loc, view, zeros, tile, copy.getDst(), copy.getDstOffsets(),
                            copy.getDstSizes(), /*pred=*/Value());
  for (CopyOp part : {in, out}) {
    if (failed(lowerCopy(part, tid, threads, smem, fragments, shared)))
      return failure();
    part.erase();
  }
  return success();
}

LogicalResult mlir::tile::lowerCopy(CopyOp copy, Value tid, int64_t threads, Value smem,
                                    const Fragments &fragments, SharedBuffers &shared) {
  if (auto staging = copy->getAttrOfType<IntegerAttr>("tile.staging_offset")) {
    if (!smem)
      return copy.emitOpError("needs shared staging; run tile-allocate-shared-memory first");
    return lowerStaged(copy, staging.getInt(), tid, threads, smem, fragments, shared);
  }
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  TileSide src = makeSide(copy.getSrc(), copy.getSrcOffsets(), copy.getSrcSizes(), shared);
  TileSide dst = makeSide(copy.getDst(), copy.getDstOffsets(), copy.getDstSizes(), shared);
  Type srcElem = cast<MemRefType>(src.buffer.getType()).getElementType();
  Type dstElem = cast<MemRefType>(dst.buffer.getType()).getElementType();
  int64_t narrowest = std::max<int64_t>(
      1, std::min(srcElem.getIntOrFloatBitWidth(), dstElem.getIntOrFloatBitWidth()) / 8);
  int64_t width = 16 / narrowest;
  for (TileSide *side : {&src, &dst})
    if (side->place != Place::Fragment)
      width = std::min(width, maxVectorWidth(*side, width));

  auto move = [&](OpBuilder &ob, const TileSide &from, ValueRange fromIdx,
                  const TileSide &to, ValueRange toIdx, int64_t w) {
    if (copy.getAsync()) {
      asyncCopyElements(ob, loc, from, fromIdx, to, toIdx, w, copy.getPred());
      return;
    }
    Value v = loadElements(ob, loc, from, fromIdx, w);
    storeElements(ob, loc, to, toIdx, convertElements(ob, loc, v, dstElem), w);
  };

  if (src.place == Place::Fragment && dst.place == Place::Fragment) {
    // Between fragments: elements stay with their threads when the layouts
    // agree; each register is converted in place.
    auto from = fragments.find(src.buffer), to = fragments.find(dst.buffer);
    if (from == fragments.end() || to == fragments.end())
      return copy.emitOpError("copies fragments that are not of this kernel");
    if (!equivalentLayouts(from->second.layout, to->second.layout))
      return copy.emitOpError("copies between fragments of different layouts; "
                              "converting needs shared memory: run tile-allocate-shared-memory first");
    for (int64_t r = 0; r < from->second.layout.getRegs(); ++r) {
      Value at = arith::ConstantIndexOp::create(b, loc, r);
      Value v = memref::LoadOp::create(b, loc, from->second.regs, ValueRange{at});
      memref::StoreOp::create(b, loc, convertElements(b, loc, v, dstElem),
                              to->second.regs, ValueRange{at});
    }
    return success();
  }
  auto fragIt = fragments.find(src.place == Place::Fragment ? src.buffer : dst.buffer);
  if (fragIt != fragments.end()) {
    // Each thread moves its own registers, `width` contiguous ones at a time.
    Fragment frag = fragIt->second;
    bool fromFragment = src.place == Place::Fragment;
    TileSide &other = fromFragment ? dst : src;
    ArrayRef<int64_t> fragShape =
        cast<MemRefType>((fromFragment ? src : dst).buffer.getType()).getShape();
    width = std::min(width, frag.layout.getContiguousRun());
    TileSide regs{frag.regs, Place::Local, {}, {frag.layout.getRegs()}};
    regs.offsets.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    for (int64_t r = 0; r < frag.layout.getRegs(); r += width) {
      SmallVector<Value> index = applyLayout(b, loc, frag.layout, tid, r);
      SmallVector<Value> otherIdx =
          sideIndices(b, loc, other, squeezeIndex(index, fragShape));
      SmallVector<Value> regIdx{arith::ConstantIndexOp::create(b, loc, r)};
      if (fromFragment)
        move(b, regs, regIdx, other, otherIdx, width);
      else
        move(b, other, otherIdx, regs, regIdx, width);
    }
    return success();
  }
  if (src.place == Place::Fragment || dst.place == Place::Fragment)
    return copy.emitOpError("copies a fragment that was not allocated by "
                            "tile.alloc_fragment in this kernel");

  // No fragment: consecutive threads move consecutive vectors (coalesced).
  SmallVector<int64_t> tile = copy.getTileShape();
  if (tile.empty())
    tile.push_back(1);
  width = std::min(width, powerOfTwoDividing(tile.back()));
  forEachVector(b, loc, tid, threads, tile, width,
                [&](OpBuilder &ob, Location l, ValueRange at) {
                  SmallVector<Value> index(at);
                  if (copy.getTileShape().empty())
                    index.clear();
                  move(ob, src, sideIndices(ob, l, src, index), dst,
                       sideIndices(ob, l, dst, index), width);
                });
  return success();
}

