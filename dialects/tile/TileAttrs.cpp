//===- TileAttrs.cpp - Layout and swizzle attributes ----------------------===//

#include "dialects/tile/TileDialect.h"
#include "dialects/tile/LayoutEvaluator.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t threads, int64_t regs, AffineMap map) {
  if (threads <= 0 || regs <= 0)
    return emitError() << "layout needs positive threads and regs, got threads = "
                       << threads << ", regs = " << regs;
  if (!map || map.getNumDims() != 2 || map.getNumSymbols() != 0)
    return emitError() << "layout map must take (thread, register) and no "
                          "symbols, got "
                       << AffineMapAttr::get(map);
  if (map.getNumResults() == 0)
    return emitError() << "layout map must give at least one index";
  // Evaluating the map (LayoutAttr::apply) folds it to constants: every
  // floordiv, ceildiv and mod must divide by a positive constant.
  std::optional<AffineExpr> badDivisor;
  for (AffineExpr result : map.getResults())
    result.walk([&](AffineExpr e) {
      auto bin = dyn_cast<AffineBinaryOpExpr>(e);
      if (!bin || badDivisor ||
          (e.getKind() != AffineExprKind::FloorDiv && e.getKind() != AffineExprKind::CeilDiv &&
           e.getKind() != AffineExprKind::Mod))
        return;
      auto rhs = dyn_cast<AffineConstantExpr>(bin.getRHS());
      if (!rhs || rhs.getValue() <= 0)
        badDivisor = e;
    });
  if (badDivisor) {
    std::string text;
    llvm::raw_string_ostream os(text);
    badDivisor->print(os);
    return emitError() << "layout map must divide by positive constants only, got `" << text
                       << "`";
  }
  return success();
}

/// The value of `expr` at dims (d0, d1) = (thread, reg), by walking its tree:
/// folding it through replaceDimsAndSymbols would unique a new expression per
/// node and evaluation, which dominated the compile time of the layout passes.
/// The verifier above guarantees positive constant divisors.
static int64_t evaluate(AffineExpr expr, int64_t thread, int64_t reg) {
  switch (expr.getKind()) {
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(expr).getValue();
  case AffineExprKind::DimId:
    return cast<AffineDimExpr>(expr).getPosition() == 0 ? thread : reg;
  case AffineExprKind::SymbolId:
    llvm_unreachable("layout maps have no symbols");
  default:
    break;
  }
  auto bin = cast<AffineBinaryOpExpr>(expr);
  int64_t l = evaluate(bin.getLHS(), thread, reg), r = evaluate(bin.getRHS(), thread, reg);
  switch (expr.getKind()) {
  case AffineExprKind::Add:
    return l + r;
  case AffineExprKind::Mul:
    return l * r;
  case AffineExprKind::FloorDiv:
    return llvm::divideFloorSigned(l, r);
  case AffineExprKind::CeilDiv:
    return llvm::divideCeilSigned(l, r);
  case AffineExprKind::Mod:
    return llvm::mod(l, r);
  default:
    llvm_unreachable("not a binary affine expression");
  }
}

SmallVector<int64_t> LayoutAttr::apply(int64_t thread, int64_t reg) const {
  SmallVector<int64_t> result;
  for (AffineExpr expr : getMap().getResults())
    result.push_back(evaluate(expr, thread, reg));
  return result;
}

//===----------------------------------------------------------------------===//
// LayoutEvaluator
//===----------------------------------------------------------------------===//

LayoutEvaluator::LayoutEvaluator(LayoutAttr layout) {
  for (AffineExpr expr : layout.getMap().getResults())
    results.push_back(flatten(expr));
  values.resize(nodes.size());
}

int32_t LayoutEvaluator::flatten(AffineExpr expr) {
  Node node{expr.getKind(), 0, -1, -1};
  switch (expr.getKind()) {
  case AffineExprKind::Constant:
    node.value = cast<AffineConstantExpr>(expr).getValue();
    break;
  case AffineExprKind::DimId:
    node.value = cast<AffineDimExpr>(expr).getPosition() == 0 ? 0 : 1;
    break;
  case AffineExprKind::SymbolId:
    llvm_unreachable("layout maps have no symbols");
  default: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    node.lhs = flatten(bin.getLHS());
    node.rhs = flatten(bin.getRHS());
    break;
  }
  }
  nodes.push_back(node);
  return nodes.size() - 1;
}

void LayoutEvaluator::apply(int64_t thread, int64_t reg, SmallVectorImpl<int64_t> &out) {
  for (auto [i, node] : llvm::enumerate(nodes)) {
    int64_t v;
    switch (node.kind) {
    case AffineExprKind::Constant:
      v = node.value;
      break;
    case AffineExprKind::DimId:
      v = node.value == 0 ? thread : reg;
      break;
    case AffineExprKind::Add:
      v = values[node.lhs] + values[node.rhs];
      break;
    case AffineExprKind::Mul:
      v = values[node.lhs] * values[node.rhs];
      break;
    case AffineExprKind::FloorDiv:
      v = llvm::divideFloorSigned(values[node.lhs], values[node.rhs]);
      break;
    case AffineExprKind::CeilDiv:
      v = llvm::divideCeilSigned(values[node.lhs], values[node.rhs]);
      break;
    case AffineExprKind::Mod:
      v = llvm::mod(values[node.lhs], values[node.rhs]);
      break;
    default:
      llvm_unreachable("not an affine expression of a layout");
    }
    values[i] = v;
  }
  out.resize(results.size());
  for (auto [k, at] : llvm::enumerate(results))
    out[k] = values[at];
}

static std::string coverageProblem(LayoutAttr layout, ArrayRef<int64_t> shape);

std::string LayoutAttr::checkCovers(ArrayRef<int64_t> shape) const {
  auto &dialect = static_cast<TileDialect &>(getDialect());
  std::pair<const void *, std::vector<int64_t>> key(getAsOpaquePointer(), shape.vec());
  {
    std::lock_guard<std::mutex> lock(dialect.coverageMutex);
    auto it = dialect.coverage.find(key);
    if (it != dialect.coverage.end())
      return it->second;
  }
  std::string problem = coverageProblem(*this, shape);
  std::lock_guard<std::mutex> lock(dialect.coverageMutex);
  dialect.coverage.emplace(std::move(key), problem);
  return problem;
}

static std::string coverageProblem(LayoutAttr layout, ArrayRef<int64_t> shape) {
  if (shape.size() != layout.getRank())
    return llvm::formatv("layout gives {0} indices but the tile has rank {1}",
                         layout.getRank(), shape.size())
        .str();
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  int64_t pairs = layout.getThreads() * layout.getRegs();
  if (pairs % numel != 0)
    return llvm::formatv("layout holds {0} registers in all (threads {1} x "
                         "regs {2}), not a multiple of the tile's {3} elements",
                         pairs, layout.getThreads(), layout.getRegs(), numel)
        .str();
  // Enumerating is exact and cheap at tile sizes (at most a few 10^4 pairs).
  SmallVector<int64_t> counts(numel, 0);
  LayoutEvaluator eval(layout);
  SmallVector<int64_t> idx;
  for (int64_t t = 0; t < layout.getThreads(); ++t) {
    for (int64_t r = 0; r < layout.getRegs(); ++r) {
      eval.apply(t, r, idx);
      int64_t flat = 0;
      for (auto [i, d] : llvm::zip(idx, shape)) {
        if (i < 0 || i >= d)
          return llvm::formatv("thread {0} register {1} maps outside the tile",
                               t, r)
              .str();
        flat = flat * d + i;
      }
      ++counts[flat];
    }
  }
  int64_t replication = pairs / numel;
  for (int64_t f = 0; f < numel; ++f)
    if (counts[f] != replication)
      return llvm::formatv("element {0} (row-major) is held {1} times, "
                           "expected {2}",
                           f, counts[f], replication)
          .str();
  return "";
}

int64_t LayoutAttr::getContiguousRun() const {
  int64_t run = 1;
  for (int64_t candidate = 2; candidate <= getRegs(); candidate *= 2) {
    if (getRegs() % candidate != 0)
      break;
    bool ok = true;
    for (int64_t t = 0; t < getThreads() && ok; ++t) {
      for (int64_t r = 0; r < getRegs() && ok; r += candidate) {
        SmallVector<int64_t> first = apply(t, r);
        if (first.back() % candidate != 0)
          ok = false;
        for (int64_t e = 1; e < candidate && ok; ++e) {
          SmallVector<int64_t> idx = apply(t, r + e);
          idx.back() -= e;
          ok = idx == first;
        }
      }
    }
    if (!ok)
      break;
    run = candidate;
  }
  return run;
}

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
// Blocked layouts
//===----------------------------------------------------------------------===//

FailureOr<LayoutAttr> LayoutAttr::getBlocked(MLIRContext *ctx,
                                             ArrayRef<int64_t> shape,
                                             int64_t threads, int64_t vector,
                                             std::string &why) {
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  int64_t inner = shape.back();
  int64_t v = std::max<int64_t>(1, std::min(vector, inner));
  while (v > 1 && (inner % v != 0 || numel % (threads * v) != 0))
    v /= 2;
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr flat;
  int64_t regs;
  if (numel % threads == 0) {
    regs = numel / threads;
    flat = r.floorDiv(v) * (threads * v) + t * v + r % v;
  } else if (threads % numel == 0) {
    // Fewer elements than threads: every element is held by threads/numel
    // threads (a replicated layout).
    regs = 1;
    flat = t % numel;
  } else {
    why = llvm::formatv("{0} elements cannot be spread evenly over {1} "
                        "threads (make the tile a multiple of the thread "
                        "count, or a divisor of it)",
                        numel, threads)
              .str();
    return failure();
  }
  SmallVector<AffineExpr> results;
  int64_t stride = numel;
  for (auto [k, d] : llvm::enumerate(shape)) {
    stride /= d;
    AffineExpr idx = flat.floorDiv(stride);
    if (k != 0)
      idx = idx % d;
    results.push_back(idx);
  }
  return LayoutAttr::get(ctx, threads, regs, AffineMap::get(2, 0, results, ctx));
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
