//===- CopyToGPU.cpp - tile.copy -> per-thread vector loads and stores ----===//
//
// A copy with a fragment side moves each thread's own registers, a run of
// contiguous ones at a time; a copy between two fragments converts registers
// in place; any other copy spreads 16-byte vectors over the block so that
// consecutive threads touch consecutive addresses. Global sides are masked,
// shared sides swizzled; async copies become cp.async. A copy with a
// `tile.staging_offset` goes through that shared buffer. A tile.tma_store is
// one thread's bulk tensor stores; a tile.transpose 4 x 4 byte blocks per
// thread.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"
#include "dialects/tile/Layout.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Drops the unit dimensions of a fragment index (tile coordinates).
SmallVector<Value> squeezeIndex(ArrayRef<Value> index, ArrayRef<int64_t> shape) {
  SmallVector<Value> result;
  for (auto [i, d] : llvm::zip(index, shape))
    if (d != 1)
      result.push_back(i);
  return result;
}

/// What a copy is besides its two sides.
struct CopyKind {
  bool async;
  Value pred; ///< async copies: where false, nothing is read and zeros written
};

LogicalResult lowerSides(ConversionPatternRewriter &b, Operation *op, const KernelInfo &info,
                         TileSide src, TileSide dst, SmallVector<int64_t> tile, CopyKind kind);

/// src -> staging, barrier, staging -> dst, with `offset`'s shared bytes
/// between: fragment -> global stores as 16-byte vectors across the block;
/// fragment -> fragment converts between layouts (each thread stores its
/// registers and loads the ones its new layout holds).
LogicalResult lowerStaged(ConversionPatternRewriter &b, CopyOp copy, const KernelInfo &info,
                          int64_t offset, const TileSide &src, const TileSide &dst) {
  Location loc = copy.getLoc();
  SmallVector<int64_t> tile = copy.getTileShape();
  Type elem = copy.getDst().getType().getElementType();
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get(tile, elem, MemRefLayoutAttrInterface(), wg);
  auto flatType = MemRefType::get({type.getNumElements()}, elem,
                                  MemRefLayoutAttrInterface(), wg);
  Value at = arith::ConstantIndexOp::create(b, loc, offset);
  Value view = memref::ViewOp::create(b, loc, type, info.smem, at, ValueRange{});
  Value flat = memref::ViewOp::create(b, loc, flatType, info.smem, at, ValueRange{});
  SwizzleAttr swizzle;
  if (std::optional<std::array<int64_t, 3>> s = chooseSwizzle(type))
    swizzle = SwizzleAttr::get(b.getContext(), (*s)[0], (*s)[1], (*s)[2]);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> zeros(tile.size(), c0);
  TileSide staging{view, type, Place::Shared, zeros, tile,
                   SharedBuffer{type, SharedLayoutAttr::get(b.getContext(), 0, 0, swizzle),
                                flat, Value()},
                   LayoutAttr()};
  // tile-insert-barriers put a barrier before the op if earlier accesses
  // of the staging needed one.
  if (failed(lowerSides(b, copy, info, src, staging, tile, {false, Value()})))
    return failure();
  gpu::BarrierOp::create(b, loc);
  return lowerSides(b, copy, info, staging, dst, tile, {false, Value()});
}

/// A copy between fragments of different layouts whose elements stay in
/// their warps (shuffleConversion): each destination register takes a source
/// register of another lane by `shfl.sync.idx` (of 32 bits; narrower
/// elements widened for it), or the thread's own.
void convertByShuffles(OpBuilder &b, Location loc, Value tid, const TileSide &src,
                       const TileSide &dst, ArrayRef<ShuffleStep> steps) {
  Type i32 = b.getI32Type();
  Type elem = src.type.getElementType();
  unsigned width = elem.getIntOrFloatBitWidth();
  Type bitsType = b.getIntegerType(width);
  auto c32 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i32, v); };
  Value thread = arith::IndexCastOp::create(b, loc, i32, tid);
  // The lane maps' thread-dependent parts, one per distinct map.
  SmallVector<std::pair<ArrayRef<int64_t>, Value>> maps;
  auto laneMap = [&](ArrayRef<int64_t> bits) -> Value {
    for (auto &[known, value] : maps)
      if (known == bits)
        return value;
    Value lane = c32(0);
    for (auto [j, col] : llvm::enumerate(bits)) {
      if (!col)
        continue;
      Value bit = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, thread, c32(int64_t(j))), c32(1));
      lane = arith::XOrIOp::create(b, loc, lane, arith::MulIOp::create(b, loc, bit, c32(col)));
    }
    maps.push_back({bits, lane});
    return lane;
  };
  Type dstElem = dst.type.getElementType();
  for (const ShuffleStep &step : steps) {
    Value at = arith::ConstantIndexOp::create(b, loc, step.srcReg);
    Value v = memref::LoadOp::create(b, loc, src.buffer, ValueRange{at});
    if (!step.own) {
      Value bits = elem == bitsType ? v : arith::BitcastOp::create(b, loc, bitsType, v).getResult();
      Value word = width == 32 ? bits : arith::ExtUIOp::create(b, loc, i32, bits).getResult();
      Value lane = arith::XOrIOp::create(b, loc, laneMap(step.laneBits), c32(step.laneXor));
      word = gpu::ShuffleOp::create(b, loc, word, lane, c32(32), gpu::ShuffleMode::IDX)
                 .getShuffleResult();
      bits = width == 32 ? word : arith::TruncIOp::create(b, loc, bitsType, word).getResult();
      v = elem == bitsType ? bits : arith::BitcastOp::create(b, loc, elem, bits).getResult();
    }
    memref::StoreOp::create(b, loc, convertElements(b, loc, v, dstElem), dst.buffer,
                            ValueRange{arith::ConstantIndexOp::create(b, loc, step.dstReg)});
  }
}

LogicalResult lowerSides(ConversionPatternRewriter &b, Operation *op, const KernelInfo &info,
                         TileSide src, TileSide dst, SmallVector<int64_t> tile, CopyKind kind) {
  Location loc = op->getLoc();
  Type srcElem = src.type.getElementType();
  Type dstElem = dst.type.getElementType();
  int64_t narrowest = std::max<int64_t>(
      1, std::min(srcElem.getIntOrFloatBitWidth(), dstElem.getIntOrFloatBitWidth()) / 8);
  int64_t width = 16 / narrowest;
  for (TileSide *side : {&src, &dst})
    if (side->place != Place::Fragment)
      width = std::min(width, maxVectorWidth(*side, width));

  auto move = [&](OpBuilder &ob, const TileSide &from, ValueRange fromIdx, const TileSide &to,
                  ValueRange toIdx, int64_t w) {
    if (kind.async) {
      asyncCopyElements(ob, loc, from, fromIdx, to, toIdx, w, kind.pred);
      return;
    }
    Value v = loadElements(ob, loc, from, fromIdx, w);
    storeElements(ob, loc, to, toIdx, convertElements(ob, loc, v, dstElem), w);
  };

  if (src.place == Place::Fragment && dst.place == Place::Fragment) {
    // Between fragments: elements stay with their threads when the layouts
    // agree; each register is converted in place.
    if (!src.fragmentLayout || !dst.fragmentLayout)
      return op->emitOpError("copies fragments that are not of this kernel");
    if (!equivalentLayouts(src.fragmentLayout, dst.fragmentLayout)) {
      std::string why;
      FailureOr<SmallVector<ShuffleStep>> steps = shuffleConversion(
          src.fragmentLayout, src.type.getShape(), dst.fragmentLayout, dst.type.getShape(),
          srcElem.getIntOrFloatBitWidth(), why);
      if (failed(steps))
        return op->emitOpError("copies between fragments of different layouts (" + why +
                               "); converting needs shared memory: run "
                               "tile-allocate-shared-memory first");
      convertByShuffles(b, loc, info.at(op).tid, src, dst, *steps);
      return success();
    }
    for (int64_t r = 0; r < src.fragmentLayout.getRegs(); ++r) {
      Value at = arith::ConstantIndexOp::create(b, loc, r);
      Value v = memref::LoadOp::create(b, loc, src.buffer, ValueRange{at});
      memref::StoreOp::create(b, loc, convertElements(b, loc, v, dstElem), dst.buffer,
                              ValueRange{at});
    }
    return success();
  }
  if (src.place == Place::Fragment || dst.place == Place::Fragment) {
    // Each thread moves its own registers, `width` contiguous ones at a time.
    bool fromFragment = src.place == Place::Fragment;
    TileSide &frag = fromFragment ? src : dst;
    TileSide &other = fromFragment ? dst : src;
    if (!frag.fragmentLayout)
      return op->emitOpError("copies a fragment that was not allocated by "
                             "tile.alloc_fragment in this kernel");
    LayoutAttr layout = frag.fragmentLayout;
    width = std::min(width, layout.getContiguousRun());
    auto regsType = cast<MemRefType>(frag.buffer.getType());
    TileSide regs{frag.buffer, regsType, Place::Local, {}, {layout.getRegs()}, std::nullopt,
                  LayoutAttr()};
    regs.offsets.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    // A fragment every thread holds whole (a finalized reducer) is written
    // out by thread 0 alone, not once by every thread.
    OpBuilder::InsertionGuard guard(b);
    if (fromFragment && holdsWholeTile(layout, frag.type.getShape())) {
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, info.at(op).tid,
                                          arith::ConstantIndexOp::create(b, loc, 0));
      auto once = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
      b.setInsertionPoint(once.thenBlock()->getTerminator());
    }
    // Part of the fragment (acc[0:4, :]): each register whose element falls
    // inside the region, one at a time, at its place in the region.
    SmallVector<int64_t> start;
    for (Value o : frag.offsets)
      start.push_back(getConstantIntValue(o).value_or(0));
    bool whole = frag.sizes == SmallVector<int64_t>(frag.type.getShape()) &&
                 llvm::all_of(start, [](int64_t v) { return v == 0; });
    if (!whole)
      width = 1;
    IndexBuilder ib{b, loc};
    for (int64_t r = 0; r < layout.getRegs(); r += width) {
      SmallVector<Value> index = applyLayout(b, loc, layout, info.at(op).tid, r);
      OpBuilder::InsertionGuard inside(b);
      if (!whole) {
        Value in;
        for (size_t d = 0; d < index.size(); ++d) {
          index[d] = arith::SubIOp::create(b, loc, index[d], ib.c(start[d])); // in the region
          Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index[d],
                                           ib.c(frag.sizes[d]));
          in = in ? arith::AndIOp::create(b, loc, in, ok).getResult() : ok;
        }
        auto guard = scf::IfOp::create(b, loc, in, /*withElseRegion=*/false);
        b.setInsertionPoint(guard.thenBlock()->getTerminator());
      }
      SmallVector<Value> otherIdx =
          sideIndices(b, loc, other, squeezeIndex(index, frag.sizes));
      SmallVector<Value> regIdx{arith::ConstantIndexOp::create(b, loc, r)};
      if (fromFragment)
        move(b, regs, regIdx, other, otherIdx, width);
      else
        move(b, other, otherIdx, regs, regIdx, width);
    }
    return success();
  }

  // No fragment: consecutive threads move consecutive vectors (coalesced).
  bool scalar = tile.empty();
  if (scalar)
    tile.push_back(1);
  width = std::min(width, powerOfTwoDividing(tile.back()));
  forEachVector(b, loc, info.at(op).tid, info.at(op).threads, tile, width,
                [&](OpBuilder &ob, Location l, ValueRange at) {
                  SmallVector<Value> index(at);
                  if (scalar)
                    index.clear();
                  move(ob, src, sideIndices(ob, l, src, index), dst,
                       sideIndices(ob, l, dst, index), width);
                });
  return success();
}

/// tile.copy.
struct CopyLowering : TileOpLowering<CopyOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(CopyOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (op->hasAttr(kTmaReduceAddAttr)) // never a plain store: an add
      return op.emitOpError("is a T.atomic_add with use_tma=True; run "
                            "tile-select-tma-stores first");
    TileSide src =
        makeSide(op.getSrc(), adaptor.getSrc(), adaptor.getSrcOffsets(), op.getSrcSizes());
    TileSide dst =
        makeSide(op.getDst(), adaptor.getDst(), adaptor.getDstOffsets(), op.getDstSizes());
    if (auto staging = op->getAttrOfType<IntegerAttr>("tile.staging_offset")) {
      if (!info.smem)
        return op.emitOpError("needs shared staging; run tile-allocate-shared-memory first");
      if (failed(lowerStaged(rewriter, op, info, staging.getInt(), src, dst)))
        return failure();
    } else if (failed(lowerSides(rewriter, op, info, src, dst, op.getTileShape(),
                                 {op.getAsync(), adaptor.getPred()}))) {
      return failure();
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// tile.tma_store: the program's first thread issues one bulk tensor store
/// (with `add`, bulk tensor reduction) per column block of the tile
/// (coordinates innermost first, as the map takes them) and commits them as
/// one bulk async group.
struct TmaStoreLowering : TileOpLowering<TmaStoreOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(TmaStoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemRefType src = op.getSrc().getType();
    int64_t block = op.getBoxColumns(), chunks = src.getDimSize(1) / block;
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value first =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, info.at(op).tid, zero);
    auto branch = scf::IfOp::create(rewriter, loc, first, /*withElseRegion=*/false);
    OpBuilder b = OpBuilder::atBlockBegin(branch.thenBlock());
    SmallVector<Value> coords;
    for (Value c : llvm::reverse(adaptor.getCoordinates()))
      coords.push_back(arith::IndexCastOp::create(b, loc, b.getI32Type(), c));
    for (int64_t j = 0; j < chunks; ++j) {
      FailureOr<Value> from = sharedElementPointer(
          b, op, op.getSrc(), adaptor.getSrc(),
          ValueRange{zero, arith::ConstantIndexOp::create(b, loc, j * block)});
      if (failed(from))
        return failure();
      SmallVector<Value> at = coords;
      if (j)
        at[0] = arith::AddIOp::create(
            b, loc, coords[0], arith::ConstantIntOp::create(b, loc, b.getI32Type(), j * block));
      if (op.getAdd())
        NVVM::CpAsyncBulkTensorReduceOp::create(b, loc, adaptor.getMap(), *from,
                                                NVVM::TMAReduxKind::ADD,
                                                NVVM::TMAStoreMode::TILE, at, Value());
      else
        NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(b, loc, adaptor.getMap(), *from, at,
                                                           Value(), NVVM::TMAStoreMode::TILE,
                                                           Value());
    }
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// tile.transpose: each thread moves 4 x 4 blocks of bytes (four 4-byte
/// loads of consecutive source rows, eight byte permutes, four 4-byte
/// stores of consecutive destination rows). In every 128 x 128 tile, lane l of warp w
/// takes block (row quad l, column quad l ^ a) for a = w, w + warps, ...: for
/// any a the 32 lanes of an instruction fall into 32 different banks on both
/// sides when their rows are 128 bytes under the 128-byte swizzle (a row
/// quad spans two swizzle phases, l's low bit picks one, its high bits the
/// 16-byte chunk).
struct TransposeLowering : TileOpLowering<TransposeOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ThreadsAt at = info.at(op);
    if (at.threads % 32)
      return op.emitOpError("runs on whole warps; ") << at.threads << " threads run it";
    // Four bytes of a row stay together under every layout the compiler
    // gives: swizzles move 16-byte chunks, column blocks are 128 bytes.
    for (Value v : {op.getSrc(), op.getDst()}) {
      AllocSharedOp alloc = sharedAllocation(v);
      SharedLayoutAttr layout = alloc ? sharedLayout(alloc) : SharedLayoutAttr();
      if (layout && ((layout.getSwizzle() && layout.getSwizzle().getBase() < 2) ||
                     layout.getColumnBlock() % 4))
        return op.emitOpError("needs runs of 4 bytes kept together by the layout ")
               << layout;
    }
    MemRefType type = op.getSrc().getType();
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    int64_t warps = at.threads / 32, steps = llvm::divideCeil(32, warps);
    auto idx = [&](OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
    Value lane = arith::RemUIOp::create(rewriter, loc, at.tid, idx(rewriter, 32));
    Value warp = arith::DivUIOp::create(rewriter, loc, at.tid, idx(rewriter, 32));
    auto loop = scf::ForOp::create(rewriter, loc, idx(rewriter, 0), idx(rewriter, steps),
                                   idx(rewriter, 1));
    OpBuilder b = OpBuilder::atBlockTerminator(loop.getBody());
    Value a = arith::AddIOp::create(
        b, loc, warp, arith::MulIOp::create(b, loc, loop.getInductionVar(), idx(b, warps)));
    if (32 % warps) { // the last step: only the warps with a step left
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, a, idx(b, 32));
      auto branch = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      b = OpBuilder::atBlockTerminator(branch.thenBlock());
    }
    Type i32 = b.getI32Type();
    // One 4 x 4 block: source rows 4h + q (h = the lane, 32 per tile of 128
    // rows), columns 4g .. 4g + 3 (g the lane ^ a, within `width` quads).
    auto block = [&](OpBuilder &b, int64_t bi, int64_t firstQuad, int64_t width) -> LogicalResult {
      Value quad = arith::XOrIOp::create(b, loc, lane, a);
      if (width < 32)
        quad = arith::AndIOp::create(b, loc, quad, idx(b, width - 1));
      Value row = arith::MulIOp::create(
          b, loc, arith::AddIOp::create(b, loc, lane, idx(b, 32 * bi)), idx(b, 4));
      Value col = arith::MulIOp::create(
          b, loc, arith::AddIOp::create(b, loc, quad, idx(b, firstQuad)), idx(b, 4));
      // The 4-byte word at (r + i, c) of a side.
      auto word = [&](Value original, Value converted, Value r, int64_t i, Value c) {
        return sharedElementPointer(b, op, original, converted,
                                    ValueRange{arith::AddIOp::create(b, loc, r, idx(b, i)), c});
      };
      SmallVector<Value> loaded;
      for (int64_t q = 0; q < 4; ++q) {
        FailureOr<Value> ptr = word(op.getSrc(), adaptor.getSrc(), row, q, col);
        if (failed(ptr))
          return failure();
        loaded.push_back(LLVM::LoadOp::create(b, loc, i32, *ptr, /*alignment=*/4));
      }
      // Word q holds row q's 4 bytes; word p of the result column p's:
      // pairs of rows interleaved, then pairs of pairs (8 byte permutes).
      auto prmt = [&](Value lo, Value hi, int64_t selector) -> Value {
        return NVVM::PermuteOp::create(b, loc, i32, lo, hi,
                                       arith::ConstantIntOp::create(b, loc, i32, selector),
                                       NVVM::PermuteMode::DEFAULT);
      };
      Value lo01 = prmt(loaded[0], loaded[1], 0x5140), hi01 = prmt(loaded[0], loaded[1], 0x7362);
      Value lo23 = prmt(loaded[2], loaded[3], 0x5140), hi23 = prmt(loaded[2], loaded[3], 0x7362);
      Value columns[4] = {prmt(lo01, lo23, 0x5410), prmt(lo01, lo23, 0x7632),
                          prmt(hi01, hi23, 0x5410), prmt(hi01, hi23, 0x7632)};
      for (int64_t p = 0; p < 4; ++p) {
        FailureOr<Value> ptr = word(op.getDst(), adaptor.getDst(), col, p, row);
        if (failed(ptr))
          return failure();
        LLVM::StoreOp::create(b, loc, columns[p], *ptr, /*alignment=*/4);
      }
      return success();
    };
    // Columns in blocks of 128 (32 quads), and a last one of 64 or 32 bytes
    // (16 or 8 quads, a < width only: each lane's row quad meets each of
    // the block's column quads once over those steps).
    int64_t tail = cols % 128 / 4;
    for (int64_t bi = 0; bi < rows / 128; ++bi) {
      for (int64_t bj = 0; bj < cols / 128; ++bj)
        if (failed(block(b, bi, 32 * bj, 32)))
          return failure();
      if (tail) {
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, a, idx(b, tail));
        auto branch = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
        OpBuilder tb = OpBuilder::atBlockTerminator(branch.thenBlock());
        if (failed(block(tb, bi, cols / 128 * 32, tail)))
          return failure();
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateCopyToGPUPatterns(const TypeConverter &converter,
                                           const KernelInfo &info,
                                           RewritePatternSet &patterns) {
  patterns.add<CopyLowering,      // tile.copy
               TmaStoreLowering,  // tile.tma_store
               TransposeLowering  // tile.transpose
               >(converter, info);
}
