//===- ReduceToGPU.cpp - tile.reduce -> registers, shuffles, shared memory ===//
//
// Each thread combines the registers of a row, then the threads of a warp
// holding the same rows combine with xor shuffles, then (when several warps
// hold parts of a row) the warps combine through the shared scratch at the
// op's `tile.scratch_offset`.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"
#include "dialects/tile/Layout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The type partial results are combined in: f32 for 16/32-bit floats, i32
/// for narrow integers, else the element type.
Type computeType(Type elem) {
  Builder b(elem.getContext());
  if (isa<FloatType>(elem))
    return elem.getIntOrFloatBitWidth() <= 32 ? b.getF32Type() : elem;
  return elem.getIntOrFloatBitWidth() <= 32 ? b.getI32Type() : elem;
}

/// `x` and `y` combined; floats' max / min skip NaNs (maxnumf / minnumf,
/// PTX max / min: TileLang's default) unless `nanPropagates`
/// (T.reduce_*(..., nan_propagate=True): maximumf / minimumf, max.NaN).
Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value x, Value y,
              bool nanPropagates) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case ReduceKind::Max:
  case ReduceKind::AbsMax:
    if (!isFloat)
      return arith::MaxSIOp::create(b, loc, x, y);
    return nanPropagates ? (Value)arith::MaximumFOp::create(b, loc, x, y)
                         : (Value)arith::MaxNumFOp::create(b, loc, x, y);
  case ReduceKind::Min:
    if (!isFloat)
      return arith::MinSIOp::create(b, loc, x, y);
    return nanPropagates ? (Value)arith::MinimumFOp::create(b, loc, x, y)
                         : (Value)arith::MinNumFOp::create(b, loc, x, y);
  case ReduceKind::Sum:
  case ReduceKind::AbsSum:
    return isFloat ? (Value)arith::AddFOp::create(b, loc, x, y)
                   : (Value)arith::AddIOp::create(b, loc, x, y);
  }
  llvm_unreachable("unknown reduce kind");
}

/// A source element as it enters the reduction.
Value prepare(OpBuilder &b, Location loc, ReduceKind kind, Value v, Type compute) {
  v = convertElements(b, loc, v, compute);
  if (kind == ReduceKind::AbsSum || kind == ReduceKind::AbsMax)
    v = isa<FloatType>(compute) ? (Value)math::AbsFOp::create(b, loc, v)
                                : (Value)math::AbsIOp::create(b, loc, v);
  return v;
}

Value load(OpBuilder &b, Location loc, Value regs, int64_t r) {
  return memref::LoadOp::create(b, loc, regs,
                                ValueRange{arith::ConstantIndexOp::create(b, loc, r)});
}

/// Emits the reduction before `op`.
LogicalResult lowerReduce(OpBuilder &b, ReduceOp op, Value tid, Value smem, Value srcRegs,
                          LayoutAttr srcLayout, Value dstRegs, LayoutAttr dstLayout) {
  std::string why;
  FailureOr<SlicedLayout> sliced =
      sliceLayout(srcLayout, op.getSrc().getType().getShape(), op.getDim(), why);
  if (failed(sliced))
    return op.emitOpError(why);
  if (sliced->layout != dstLayout)
    return op.emitOpError("the destination's layout is not the source's "
                          "sliced along the reduced dimension");
  Location loc = op.getLoc();
  ReduceKind kind = op.getKind();
  bool nanPropagates = op->hasAttr("tile.nan_propagate");
  Type elem = op.getSrc().getType().getElementType();
  Type compute = computeType(elem);
  if (compute.getIntOrFloatBitWidth() != 32 && compute.getIntOrFloatBitWidth() != 64)
    return op.emitOpError("reductions of ") << elem << " are not lowered yet";
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Type i32 = b.getI32Type();

  // In-thread, then across the lanes that hold other parts of the rows.
  SmallVector<Value> partial;
  for (ArrayRef<int64_t> sources : sliced->resultToSources) {
    Value v = prepare(b, loc, kind, load(b, loc, srcRegs, sources.front()), compute);
    for (int64_t r : sources.drop_front())
      v = combine(b, loc, kind, v, prepare(b, loc, kind, load(b, loc, srcRegs, r), compute),
                  nanPropagates);
    for (int64_t bit = 0; bit < 5; ++bit) {
      if (!(sliced->laneMask & (int64_t(1) << bit)))
        continue;
      Value other = gpu::ShuffleOp::create(
                        b, loc, v, arith::ConstantIntOp::create(b, loc, i32, 1 << bit),
                        arith::ConstantIntOp::create(b, loc, i32, 32), gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      v = combine(b, loc, kind, v, other, nanPropagates);
    }
    partial.push_back(v);
  }

  // Across warps: each warp group's lane-leader writes its partial results
  // to scratch[element][group]; after a barrier every thread combines them.
  if (int64_t warpMask = sliced->warpMask) {
    auto offset = op->getAttrOfType<IntegerAttr>("tile.scratch_offset");
    if (!offset || !smem)
      return op.emitOpError("needs shared scratch; run tile-allocate-shared-memory first");
    SmallVector<int64_t> warpBits;
    for (int64_t bit = 5; bit < 31; ++bit)
      if (warpMask & (int64_t(1) << bit))
        warpBits.push_back(bit);
    int64_t groups = int64_t(1) << warpBits.size();
    int64_t numel = op.getDst().getType().getNumElements();
    auto wg = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    auto scratchType =
        MemRefType::get({numel, groups}, compute, MemRefLayoutAttrInterface(), wg);
    Value scratch = memref::ViewOp::create(b, loc, scratchType, smem, c(offset.getInt()),
                                           ValueRange{});
    Value group = c(0);
    for (auto [k, bit] : llvm::enumerate(warpBits)) {
      Value bitValue = arith::AndIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, tid, c(bit)), c(1));
      group = arith::AddIOp::create(
          b, loc, group, arith::MulIOp::create(b, loc, bitValue, c(int64_t(1) << k)));
    }
    Value leader = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::AndIOp::create(b, loc, tid, c(sliced->laneMask)), c(0));
    ArrayRef<int64_t> dstShape = op.getDst().getType().getShape();
    SmallVector<Value> elements;
    for (int64_t r = 0; r < (int64_t)partial.size(); ++r) {
      SmallVector<Value> index = applyLayout(b, loc, dstLayout, tid, r);
      Value flat = c(0);
      for (auto [i, d] : llvm::zip(index, dstShape))
        flat = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, flat, c(d)), i);
      elements.push_back(flat);
    }
    // tile-insert-barriers put a barrier before the op if earlier accesses
    // of the scratch needed one.
    auto ifLeader = scf::IfOp::create(b, loc, leader, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifLeader.thenBlock()->getTerminator());
      for (auto [v, e] : llvm::zip(partial, elements))
        memref::StoreOp::create(b, loc, v, scratch, ValueRange{e, group});
    }
    gpu::BarrierOp::create(b, loc);
    for (size_t r = 0; r < partial.size(); ++r) {
      Value v = memref::LoadOp::create(b, loc, scratch, ValueRange{elements[r], c(0)});
      for (int64_t g = 1; g < groups; ++g)
        v = combine(b, loc, kind, v,
                    memref::LoadOp::create(b, loc, scratch, ValueRange{elements[r], c(g)}),
                    nanPropagates);
      partial[r] = v;
    }
  }

  for (size_t r = 0; r < partial.size(); ++r) {
    Value v = partial[r];
    if (!op.getClear())
      v = combine(b, loc, kind, v, convertElements(b, loc, load(b, loc, dstRegs, r), compute),
                  nanPropagates);
    memref::StoreOp::create(b, loc, convertElements(b, loc, v, elem), dstRegs,
                            ValueRange{c(r)});
  }
  return success();
}

/// tile.reduce.
struct ReduceLowering : TileOpLowering<ReduceOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    std::optional<Fragment> src = fragmentOf(op.getSrc(), adaptor.getSrc());
    std::optional<Fragment> dst = fragmentOf(op.getDst(), adaptor.getDst());
    if (!src || !dst)
      return op.emitOpError("reduces fragments of this kernel only");
    if (failed(lowerReduce(rewriter, op, info.at(op).tid, info.smem, src->regs, src->layout,
                           dst->regs, dst->layout)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateReduceToGPUPatterns(const TypeConverter &converter,
                                             const KernelInfo &info,
                                             RewritePatternSet &patterns) {
  patterns.add<ReduceLowering>(converter, info); // tile.reduce
}
