//===- LowerFp8Conversions.cpp - fp8 <-> wider floats on the tensor core's cvt -===//
//
// LLVM has no fp8 type: after arith-to-llvm an fp8 value is its byte, and an
// arith.extf or arith.truncf involving f8E4M3FN or f8E5M2 has no lowering.
// This pass rewrites them, before the NVVM conversion, to the hardware's
// paired conversions (sm_89 and later):
//
//   extf  f8 -> T:  [byte, 0] --nvvm.convert.f8x2.to.f16x2--> f16 -> T
//   truncf S -> f8: S -> f32 --nvvm.convert.f32x2.to.f8x2 (rn, satfinite)--> byte
//
// Rounding is to nearest even and out-of-range values saturate to the largest
// finite fp8 value (PTX's cvt.rn.satfinite), as the interpreter models it.
// Any other arithmetic on fp8 values is an error: convert to a wider type
// first.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILELOWERFP8CONVERSIONS
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-lower-fp8-conversions"

namespace {

bool isFp8(Type t) {
  if (auto vec = dyn_cast<VectorType>(t))
    t = vec.getElementType();
  return isa<Float8E4M3FNType, Float8E5M2Type>(t);
}

/// `v` (a float) as `to`, through extf/truncf of non-fp8 types.
Value castFloat(OpBuilder &b, Location loc, Value v, FloatType to) {
  auto from = cast<FloatType>(v.getType());
  if (from == to)
    return v;
  if (from.getWidth() < to.getWidth())
    return arith::ExtFOp::create(b, loc, to, v);
  return arith::TruncFOp::create(b, loc, to, v);
}

/// fp8 -> `to`: the byte through cvt.f16x2.e4m3x2 / e5m2x2, then f16 -> `to`.
Value extendFp8(OpBuilder &b, Location loc, Value v, FloatType to) {
  Type i8 = b.getI8Type();
  Value byte = arith::BitcastOp::create(b, loc, i8, v);
  Value zero = arith::ConstantIntOp::create(b, loc, i8, 0);
  Value pair = vector::FromElementsOp::create(b, loc, VectorType::get({2}, i8),
                                              ValueRange{byte, zero});
  Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
      b, loc, VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false,
      v.getType());
  Value half = vector::ExtractOp::create(b, loc, halves, ArrayRef<int64_t>{0});
  if (to.isBF16()) // f16 -> bf16 through f32 (no direct conversion)
    return arith::TruncFOp::create(b, loc, to, castFloat(b, loc, half, b.getF32Type()));
  return castFloat(b, loc, half, to);
}

/// `v` -> fp8 `to`: through f32 and cvt.rn.satfinite.e4m3x2.f32 (the value in
/// the pair's upper byte).
Value truncateToFp8(OpBuilder &b, Location loc, Value v, Type to) {
  Value f = castFloat(b, loc, v, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value packed = NVVM::ConvertF32x2ToF8x2Op::create(
      b, loc, b.getI16Type(), f, zero, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, to);
  Value upper = arith::ShRUIOp::create(b, loc, packed,
                                       arith::ConstantIntOp::create(b, loc, b.getI16Type(), 8));
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), upper);
  return arith::BitcastOp::create(b, loc, to, byte);
}

struct TileLowerFp8Conversions
    : mlir::tile::impl::TileLowerFp8ConversionsBase<TileLowerFp8Conversions> {
  void runOnOperation() final {
    if (failed(lowerFp8Conversions(getOperation())))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::lowerFp8Conversions(Operation *root) {
  SmallVector<Operation *> conversions;
  SmallVector<arith::SelectOp> selects;
  WalkResult result = root->walk([&](Operation *op) {
    if (!isa_and_present<arith::ArithDialect>(op->getDialect()))
      return WalkResult::advance();
    bool touchesFp8 = llvm::any_of(op->getOperandTypes(), isFp8) ||
                      llvm::any_of(op->getResultTypes(), isFp8);
    if (!touchesFp8 || isa<arith::BitcastOp, arith::ConstantOp>(op))
      return WalkResult::advance();
    if (auto select = dyn_cast<arith::SelectOp>(op)) {
      selects.push_back(select); // moves bits (a masked copy's zero fill)
      return WalkResult::advance();
    }
    if (!isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      op->emitOpError("on fp8 values is not supported: convert them to a wider float first");
      return WalkResult::interrupt();
    }
    conversions.push_back(op);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  // A select of fp8 values picks bytes: the same select of their bits.
  for (arith::SelectOp select : selects) {
    OpBuilder b(select);
    Location loc = select.getLoc();
    Type type = select.getType(), bits = b.getI8Type();
    if (auto vec = dyn_cast<VectorType>(type))
      bits = VectorType::get(vec.getShape(), bits);
    Value t = arith::BitcastOp::create(b, loc, bits, select.getTrueValue());
    Value f = arith::BitcastOp::create(b, loc, bits, select.getFalseValue());
    Value picked = arith::SelectOp::create(b, loc, select.getCondition(), t, f);
    select.replaceAllUsesWith(arith::BitcastOp::create(b, loc, type, picked).getResult());
    select.erase();
  }
  for (Operation *op : conversions)
    if (auto vec = dyn_cast<VectorType>(op->getResult(0).getType()); vec && vec.getRank() != 1)
      return op->emitOpError("converts an fp8 vector of rank ") << vec.getRank()
                                                                 << "; only 1-d vectors lower";
  if (!conversions.empty()) {
    TargetAttr target = TargetAttr::lookup(root);
    if (target && target.getArch() < StringRef("sm_89"))
      return conversions.front()->emitOpError("converts fp8 values, which needs sm_89 or "
                                              "later; the target is ")
             << target.getArch();
  }
  for (Operation *op : conversions) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto convert = [&](Value in, Type to) -> Value {
      if (isFp8(in.getType()) && isFp8(to))
        return truncateToFp8(b, loc, extendFp8(b, loc, in, b.getF32Type()), to);
      if (isFp8(in.getType()))
        return extendFp8(b, loc, in, cast<FloatType>(to));
      return truncateToFp8(b, loc, in, to);
    };
    Value in = op->getOperand(0);
    Type to = op->getResult(0).getType();
    Value out;
    if (auto vec = dyn_cast<VectorType>(to)) {
      // Element by element (1-d vectors of copies' 16-byte accesses).
      SmallVector<Value> parts;
      for (int64_t i = 0; i < vec.getNumElements(); ++i)
        parts.push_back(convert(vector::ExtractOp::create(b, loc, in, ArrayRef<int64_t>{i}),
                                vec.getElementType()));
      out = vector::FromElementsOp::create(b, loc, vec, parts);
    } else {
      out = convert(in, to);
    }
    op->getResult(0).replaceAllUsesWith(out);
    op->erase();
  }
  return success();
}
