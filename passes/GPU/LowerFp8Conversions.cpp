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
// A 1-d vector converts two elements a cvt ([byte i, byte i + 1], the pair
// of f32s i and i + 1); a scalar takes a pair with a zero.
//
// Rounding is to nearest even and out-of-range values saturate to the largest
// finite fp8 value (PTX's cvt.rn.satfinite), as the interpreter models it.
// On a target without that cvt (its fp8_convert feature: before sm_89) the
// same conversions are integer arithmetic on the values' bits
// (truncateToFp8Soft, extendFp8Soft).
// Any other arithmetic on fp8 values is an error: convert to a wider type
// first.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>

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

/// fp8 `lo` and `hi` (null: a zero byte) -> `to`: both bytes through one
/// cvt.f16x2.e4m3x2 / e5m2x2, then f16 -> `to`. One result per value given.
SmallVector<Value> extendFp8Pair(OpBuilder &b, Location loc, Value lo, Value hi, FloatType to) {
  Type i8 = b.getI8Type();
  Value loByte = arith::BitcastOp::create(b, loc, i8, lo);
  Value hiByte = hi ? arith::BitcastOp::create(b, loc, i8, hi).getResult()
                    : arith::ConstantIntOp::create(b, loc, i8, 0).getResult();
  Value pair = vector::FromElementsOp::create(b, loc, VectorType::get({2}, i8),
                                              ValueRange{loByte, hiByte});
  Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
      b, loc, VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false,
      lo.getType());
  SmallVector<Value> out;
  for (int64_t i = 0; i < (hi ? 2 : 1); ++i) {
    Value half = vector::ExtractOp::create(b, loc, halves, ArrayRef<int64_t>{i});
    if (to.isBF16()) // f16 -> bf16 through f32 (no direct conversion)
      out.push_back(
          arith::TruncFOp::create(b, loc, to, castFloat(b, loc, half, b.getF32Type())));
    else
      out.push_back(castFloat(b, loc, half, to));
  }
  return out;
}

/// `lo` and `hi` (null: zero) -> fp8 `to`: through f32 and one
/// cvt.rn.satfinite.e4m3x2.f32 / e5m2x2, `lo` in the pair's lower byte. One
/// result per value given.
SmallVector<Value> truncatePairToFp8(OpBuilder &b, Location loc, Value lo, Value hi, Type to) {
  Value low = castFloat(b, loc, lo, b.getF32Type());
  Value high = hi ? castFloat(b, loc, hi, b.getF32Type())
                  : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)).getResult();
  // PTX puts the first operand's code in the upper byte.
  Value packed = NVVM::ConvertF32x2ToF8x2Op::create(
      b, loc, b.getI16Type(), high, low, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, to);
  SmallVector<Value> out;
  for (int64_t i = 0; i < (hi ? 2 : 1); ++i) {
    Value bits = i ? arith::ShRUIOp::create(
                         b, loc, packed,
                         arith::ConstantIntOp::create(b, loc, b.getI16Type(), 8))
                         .getResult()
                   : packed;
    Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), bits);
    out.push_back(arith::BitcastOp::create(b, loc, to, byte));
  }
  return out;
}

/// The fp8 format of `t` (f8E4M3FN or f8E5M2): mantissa bits, exponent bias,
/// largest finite code.
struct Fp8Format {
  int64_t mantissa, bias, maxCode;
};
Fp8Format formatOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return {3, 7, 0x7e}; // 448
  return {2, 15, 0x7b};  // 57344
}

/// Without the hardware's cvt (before sm_89): `v` -> fp8 `to` in integer
/// arithmetic on the f32 bits, as cvt.rn.satfinite does it: round to nearest
/// even, magnitudes past the largest finite value (infinities too) saturate
/// to it, NaN -> 0x7f (with the sign), subnormals kept.
Value truncateToFp8Soft(OpBuilder &b, Location loc, Value v, Type to) {
  Fp8Format fmt = formatOf(to);
  Type i32 = b.getI32Type();
  FloatType f32 = b.getF32Type();
  auto c = [&](int64_t x) { return arith::ConstantIntOp::create(b, loc, i32, x).getResult(); };
  Value bits = arith::BitcastOp::create(b, loc, i32, castFloat(b, loc, v, f32));
  Value sign = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, bits, c(24)),
                                     c(0x80));
  Value mag = arith::AndIOp::create(b, loc, bits, c(0x7fffffff));
  // Normal results: drop 23 - M mantissa bits rounding to nearest even (a
  // carry moves into the exponent), then rebias the exponent.
  int64_t shift = 23 - fmt.mantissa;
  Value lsb = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, mag, c(shift)), c(1));
  Value rounded = arith::AddIOp::create(
      b, loc, mag, arith::AddIOp::create(b, loc, c((int64_t(1) << (shift - 1)) - 1), lsb));
  Value normal = arith::SubIOp::create(b, loc, arith::ShRUIOp::create(b, loc, rounded, c(shift)),
                                       c((127 - fmt.bias) << fmt.mantissa));
  // Below the smallest normal (2^(1 - bias)): multiples of 2^(1 - bias - M),
  // rounded to nearest even in f32 (adding and taking away 2^23).
  Value absF = arith::BitcastOp::create(b, loc, f32, mag);
  Value scaled = arith::MulFOp::create(
      b, loc, absF,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(std::ldexp(1.0f, int(fmt.bias + fmt.mantissa - 1)))));
  Value big = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(8388608.0f));
  Value units = arith::SubFOp::create(b, loc, arith::AddFOp::create(b, loc, scaled, big), big);
  Value sub = arith::FPToUIOp::create(b, loc, i32, units);
  Value isSub = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, mag,
                                      c((127 + 1 - fmt.bias) << 23));
  Value code = arith::SelectOp::create(b, loc, isSub, sub, normal);
  code = arith::MinUIOp::create(b, loc, code, c(fmt.maxCode)); // satfinite (infinities too)
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, mag, c(0x7f800000));
  code = arith::SelectOp::create(b, loc, isNaN, c(0x7f), code);
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(),
                                       arith::OrIOp::create(b, loc, code, sign));
  return arith::BitcastOp::create(b, loc, to, byte);
}

/// Without the hardware's cvt: fp8 `v` -> `to` from its bits (exact).
Value extendFp8Soft(OpBuilder &b, Location loc, Value v, FloatType to) {
  Fp8Format fmt = formatOf(v.getType());
  Type i32 = b.getI32Type();
  FloatType f32 = b.getF32Type();
  auto c = [&](int64_t x) { return arith::ConstantIntOp::create(b, loc, i32, x).getResult(); };
  Value byte = arith::ExtUIOp::create(b, loc, i32,
                                      arith::BitcastOp::create(b, loc, b.getI8Type(), v));
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         arith::AndIOp::create(b, loc, byte, c(0x80)), c(0));
  Value mag = arith::AndIOp::create(b, loc, byte, c(0x7f));
  Value exp = arith::ShRUIOp::create(b, loc, mag, c(fmt.mantissa));
  Value man = arith::AndIOp::create(b, loc, mag, c((1 << fmt.mantissa) - 1));
  // Normal: the exponent rebiased, the mantissa at the top of f32's.
  Value normalBits = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, exp, c(127 - fmt.bias)), c(23)),
      arith::ShLIOp::create(b, loc, man, c(23 - fmt.mantissa)));
  Value normal = arith::BitcastOp::create(b, loc, f32, normalBits);
  // Subnormal (and zero): mantissa x 2^(1 - bias - M), exact in f32.
  Value subnormal = arith::MulFOp::create(
      b, loc, arith::UIToFPOp::create(b, loc, f32, man),
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(std::ldexp(1.0f, int(1 - fmt.bias - fmt.mantissa)))));
  Value isSub = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exp, c(0));
  Value value = arith::SelectOp::create(b, loc, isSub, subnormal, normal);
  // Specials: e4m3fn's 0x7f is NaN (no infinities); e5m2's top exponent is
  // infinity (mantissa 0) or NaN.
  Value nan = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(std::nanf("")));
  if (fmt.mantissa == 3) {
    Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, mag, c(0x7f));
    value = arith::SelectOp::create(b, loc, isNaN, nan, value);
  } else {
    Value top = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, exp, c(31));
    Value inf = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(INFINITY));
    Value zeroMan = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, man, c(0));
    value = arith::SelectOp::create(b, loc, top,
                                    arith::SelectOp::create(b, loc, zeroMan, inf, nan), value);
  }
  value = arith::SelectOp::create(b, loc, negative, arith::NegFOp::create(b, loc, value), value);
  return castFloat(b, loc, value, to);
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
  // The hardware's paired cvt where the target has it (sm_89 on); else the
  // same conversions in integer arithmetic on the bits.
  TargetAttr target = TargetAttr::lookup(root);
  bool hardware = !target || target.has(TargetFeature::Fp8Convert);
  for (Operation *op : conversions) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto extend = [&](Value in, FloatType to) -> Value {
      return hardware ? extendFp8Pair(b, loc, in, Value(), to)[0]
                      : extendFp8Soft(b, loc, in, to);
    };
    auto truncate = [&](Value in, Type to) -> Value {
      return hardware ? truncatePairToFp8(b, loc, in, Value(), to)[0]
                      : truncateToFp8Soft(b, loc, in, to);
    };
    auto convert = [&](Value in, Type to) -> Value {
      if (isFp8(in.getType()) && isFp8(to))
        return truncate(extend(in, b.getF32Type()), to);
      if (isFp8(in.getType()))
        return extend(in, cast<FloatType>(to));
      return truncate(in, to);
    };
    Value in = op->getOperand(0);
    Type to = op->getResult(0).getType();
    Value out;
    if (auto vec = dyn_cast<VectorType>(to)) {
      // 1-d vectors (copies' 16-byte accesses, vectorized T.Parallel bodies):
      // on the hardware's cvt two elements at a time, one cvt a pair; else
      // element by element.
      Type elem = vec.getElementType();
      bool paired = hardware && isFp8(in.getType()) != isFp8(elem);
      SmallVector<Value> parts;
      auto element = [&](int64_t i) {
        return vector::ExtractOp::create(b, loc, in, ArrayRef<int64_t>{i}).getResult();
      };
      for (int64_t i = 0, n = vec.getNumElements(); i < n; i += paired ? 2 : 1) {
        if (!paired) {
          parts.push_back(convert(element(i), elem));
          continue;
        }
        Value hi = i + 1 < n ? element(i + 1) : Value();
        llvm::append_range(parts, isFp8(elem)
                                      ? truncatePairToFp8(b, loc, element(i), hi, elem)
                                      : extendFp8Pair(b, loc, element(i), hi,
                                                      cast<FloatType>(elem)));
      }
      out = vector::FromElementsOp::create(b, loc, vec, parts);
    } else {
      out = convert(in, to);
    }
    op->getResult(0).replaceAllUsesWith(out);
    op->erase();
  }
  return success();
}
