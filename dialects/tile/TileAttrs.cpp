//===- TileAttrs.cpp - Swizzle, shared-layout, mma and target attributes ---===//
//
// Fragment layouts (#tile.layout) are in Layout.cpp, the layout library.
//

#include "dialects/tile/TileDialect.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

//===----------------------------------------------------------------------===//
// SwizzleAttr
//===----------------------------------------------------------------------===//

LogicalResult SwizzleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t bits, int64_t base, int64_t shift) {
  if (bits < 0 || base < 0 || shift < 0)
    return emitError() << "swizzle parameters must be non-negative, got bits = "
                       << bits << ", base = " << base << ", shift = " << shift;
  if (bits > 0 && shift < bits)
    return emitError() << "swizzle shift (" << shift
                       << ") must be at least bits (" << bits
                       << ") for the XOR to be a permutation";
  // Shared-memory byte offsets stay below 2^18 (256 KiB > 227 KiB per block).
  if (bits > 0 && base + shift + bits - 1 >= 18)
    return emitError() << "swizzle reads bit " << base + shift + bits - 1
                       << " of the offset, but shared-memory offsets stay "
                          "below bit 18";
  return success();
}

int64_t SwizzleAttr::apply(int64_t byteOffset) const {
  int64_t mask = ((int64_t(1) << getBits()) - 1) << getBase();
  return byteOffset ^ ((byteOffset >> getShift()) & mask);
}

//===----------------------------------------------------------------------===//
// SharedLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult SharedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                       int64_t stages, int64_t columnBlock,
                                       SwizzleAttr swizzle) {
  if (stages < 0)
    return emitError() << "shared layout stages must be non-negative, got " << stages;
  if (columnBlock < 0)
    return emitError() << "shared layout column_block must be non-negative, got "
                       << columnBlock;
  return success();
}

SharedLayoutAttr SharedLayoutAttr::withSwizzle(SwizzleAttr swizzle) const {
  return get(getContext(), getStages(), getColumnBlock(), swizzle);
}

SharedLayoutAttr SharedLayoutAttr::withColumnBlock(int64_t columns) const {
  return get(getContext(), getStages(), columns, getSwizzle());
}

SharedLayoutAttr SharedLayoutAttr::withStages(int64_t stages) const {
  return get(getContext(), stages, getColumnBlock(), getSwizzle());
}

bool SharedLayoutAttr::isPlain() const {
  return !getStages() && !getColumnBlock() && (!getSwizzle() || !getSwizzle().getBits());
}

std::string SharedLayoutAttr::checkFits(MemRefType type) const {
  auto shapeStr = [](ArrayRef<int64_t> shape) {
    std::string s;
    llvm::raw_string_ostream os(s);
    llvm::interleave(shape, os, "x");
    return s;
  };
  std::string problem;
  llvm::raw_string_ostream os(problem);
  ArrayRef<int64_t> stage = type.getShape();
  if (int64_t stages = getStages()) {
    if (type.getRank() < 2 || type.getDimSize(0) != stages) {
      os << "its " << stages << " stages must be the leading dimension of a buffer of "
         << "rank 2 or more, got " << shapeStr(type.getShape());
      return problem;
    }
    stage = stage.drop_front();
  }
  int64_t elemBits = type.getElementTypeBitWidth();
  if (int64_t block = getColumnBlock()) {
    if (stage.size() != 2 || stage[1] % block != 0) {
      os << "column blocks of " << block << " need 2-d stages whose columns they divide, got "
         << shapeStr(stage);
      return problem;
    }
  }
  if (SwizzleAttr swizzle = getSwizzle(); swizzle && swizzle.getBits() && getStages()) {
    int64_t stageBytes = elemBits / 8;
    for (int64_t d : stage)
      stageBytes *= d;
    int64_t period = int64_t(1) << (swizzle.getBase() + swizzle.getShift() + swizzle.getBits());
    if (stageBytes % period != 0)
      os << "a stage of " << stageBytes << " bytes is not a multiple of the swizzle's "
         << period << "-byte period";
  }
  return problem;
}

int64_t SharedLayoutAttr::byteOffset(MemRefType type, ArrayRef<int64_t> index) const {
  ArrayRef<int64_t> shape = type.getShape();
  int64_t stageStart = 0;
  if (getStages()) {
    int64_t perStage = type.getNumElements() / shape[0];
    stageStart = index[0] * perStage;
    shape = shape.drop_front();
    index = index.drop_front();
  }
  int64_t element = 0;
  if (int64_t block = getColumnBlock()) {
    element = ((index[1] / block) * shape[0] + index[0]) * block + index[1] % block;
  } else {
    for (auto [i, size] : llvm::zip(index, shape))
      element = element * size + i;
  }
  int64_t elemBytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  int64_t offset = element * elemBytes;
  if (SwizzleAttr swizzle = getSwizzle())
    offset = swizzle.apply(offset);
  return offset + stageStart * elemBytes;
}
