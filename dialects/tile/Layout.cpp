//===- Layout.cpp - The fragment-layout library ---------------------------===//
//
// See Layout.h.
//
//===----------------------------------------------------------------------===//

#include "dialects/tile/Layout.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <vector>

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
  // Each register of a thread holds another element (copies are across
  // threads), so a thread has at most the tile's elements; this also bounds
  // the enumeration below.
  if (layout.getRegs() > numel)
    return llvm::formatv("layout gives each thread {0} registers, more than the tile's {1} "
                         "elements",
                         layout.getRegs(), numel)
        .str();
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

FailureOr<LayoutAttr> mlir::tile::rowGroupedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                                   int64_t threads, int64_t vector,
                                                   std::string &why) {
  int64_t n = shape.back(), rows = 1;
  for (int64_t d : shape.drop_back())
    rows *= d;
  int64_t v = std::max<int64_t>(1, std::min(vector, n));
  while (v > 1 && n % v)
    v /= 2;
  int64_t pieces = n / v;
  // Threads per row: the largest power of two dividing both the row's
  // pieces and the thread count.
  int64_t group = 1;
  while (group * 2 <= threads && pieces % (group * 2) == 0 && threads % (group * 2) == 0)
    group *= 2;
  int64_t rowsAtOnce = threads / group;
  if (rows % rowsAtOnce) {
    why = llvm::formatv("{0} rows cannot be dealt out evenly to {1} groups of {2} threads",
                        rows, rowsAtOnce, group)
              .str();
    return failure();
  }
  // Register r of thread t: element e = r mod v of piece q = (r / v) mod
  // (pieces / group) of row pass p = r / (v * pieces / group); thread t
  // holds lane t mod group of row t / group in each pass.
  int64_t perRow = pieces / group;
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr row = t.floorDiv(group);
  if (rows > rowsAtOnce)
    row = r.floorDiv(v * perRow) * rowsAtOnce + row;
  AffineExpr piece = perRow > 1 ? r.floorDiv(v) % perRow : getAffineConstantExpr(0, ctx);
  if (rows == rowsAtOnce)
    piece = r.floorDiv(v); // r < v * perRow
  AffineExpr col = (piece * group + t % group) * v + r % v;
  SmallVector<AffineExpr> results;
  int64_t stride = rows;
  for (int64_t d : shape.drop_back()) {
    stride /= d;
    AffineExpr idx = row.floorDiv(stride);
    if (stride * d != rows)
      idx = idx % d;
    results.push_back(idx);
  }
  results.push_back(col);
  return LayoutAttr::get(ctx, threads, rows * n / threads, AffineMap::get(2, 0, results, ctx));
}

//===----------------------------------------------------------------------===//
// Slices and equivalence
//===----------------------------------------------------------------------===//


namespace {

/// Expresses the sorted list `reps` (starting at 0) as a mixed-radix number
/// of register index r': sum_k ((r' floordiv prod_{l<k} m_l) mod m_k) * s_k.
std::optional<AffineExpr> fitMixedRadix(ArrayRef<int64_t> reps, MLIRContext *ctx) {
  AffineExpr r = getAffineDimExpr(1, ctx);
  if (reps.empty() || reps.front() != 0)
    return std::nullopt;
  AffineExpr expr = getAffineConstantExpr(0, ctx);
  SmallVector<int64_t> cur(reps);
  int64_t below = 1; // product of the radices found so far
  while (cur.size() > 1) {
    int64_t stride = cur[1] - cur[0];
    int64_t radix = 1;
    while (radix < (int64_t)cur.size() && cur[radix] - cur[0] == radix * stride)
      ++radix;
    if (cur.size() % radix != 0 || stride <= 0)
      return std::nullopt;
    SmallVector<int64_t> next;
    for (size_t k = 0; k < cur.size(); k += radix) {
      for (int64_t q = 0; q < radix; ++q)
        if (cur[k + q] - cur[k] != q * stride)
          return std::nullopt;
      next.push_back(cur[k] - cur[0]);
    }
    AffineExpr digit = r.floorDiv(below);
    if (next.size() > 1)
      digit = digit % radix;
    expr = expr + digit * stride;
    below *= radix;
    // The outer digits index the group starts, relative to the first.
    cur = next;
    if (cur.size() > 1 && cur.front() != 0)
      return std::nullopt;
  }
  // Verify: the fit reproduces every representative.
  for (auto [i, rep] : llvm::enumerate(reps)) {
    AffineExpr v = expr.replaceDimsAndSymbols(
        {getAffineConstantExpr(0, ctx), getAffineConstantExpr(i, ctx)}, {});
    if (cast<AffineConstantExpr>(v).getValue() != rep)
      return std::nullopt;
  }
  return expr;
}

} // namespace

namespace {
/// A sliceLayout answer, as the dialect keeps it.
struct SliceAnswer {
  FailureOr<SlicedLayout> result;
  std::string why;
};
} // namespace

static FailureOr<SlicedLayout> computeSlice(LayoutAttr layout, ArrayRef<int64_t> shape,
                                            int64_t dim, bool forReduction, std::string &why);

FailureOr<SlicedLayout> mlir::tile::sliceLayout(LayoutAttr layout,
                                                ArrayRef<int64_t> shape,
                                                int64_t dim, std::string &why,
                                                bool forReduction) {
  // Layout inference and the lowerings slice the same layouts for every row
  // vector access, and each slice enumerates threads x regs (32768
  // evaluations for MLA's 64 x 512 accumulator): remember the answers.
  auto &dialect = static_cast<TileDialect &>(layout.getDialect());
  auto key = std::make_tuple(layout.getAsOpaquePointer(), shape.vec(),
                             forReduction ? dim : -1 - dim); // (a row vector's: negative)
  {
    std::lock_guard<std::mutex> lock(dialect.layoutAnswersMutex);
    auto it = dialect.slicedLayouts.find(key);
    if (it != dialect.slicedLayouts.end()) {
      auto *answer = static_cast<const SliceAnswer *>(it->second.get());
      why = answer->why;
      return answer->result;
    }
  }
  auto answer = std::make_shared<SliceAnswer>();
  answer->result = computeSlice(layout, shape, dim, forReduction, answer->why);
  why = answer->why;
  FailureOr<SlicedLayout> result = answer->result;
  std::lock_guard<std::mutex> lock(dialect.layoutAnswersMutex);
  dialect.slicedLayouts.emplace(std::move(key), std::move(answer));
  return result;
}

static FailureOr<SlicedLayout> computeSlice(LayoutAttr layout, ArrayRef<int64_t> shape,
                                            int64_t dim, bool forReduction, std::string &why) {
  MLIRContext *ctx = layout.getContext();
  int64_t threads = layout.getThreads(), regs = layout.getRegs();
  auto kept = [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> out;
    for (auto [k, i] : llvm::enumerate(index))
      if ((int64_t)k != dim)
        out.push_back(i);
    return out;
  };
  // table[r][t]: the kept index of register r of thread t; full[r][t]: its
  // whole index.
  SmallVector<SmallVector<SmallVector<int64_t>>> table(regs), full(regs);
  LayoutEvaluator eval(layout);
  SmallVector<int64_t> index;
  for (int64_t r = 0; r < regs; ++r)
    for (int64_t t = 0; t < threads; ++t) {
      eval.apply(t, r, index);
      table[r].push_back(kept(index));
      full[r].push_back(index);
    }

  // Registers holding the same slice on every thread form one class.
  SlicedLayout out;
  out.sourceToResult.assign(regs, -1);
  SmallVector<int64_t> reps;
  std::map<SmallVector<SmallVector<int64_t>>, int64_t> classOf;
  for (int64_t r = 0; r < regs; ++r) {
    auto [it, inserted] = classOf.try_emplace(table[r], reps.size());
    if (inserted) {
      reps.push_back(r);
      out.resultToSources.emplace_back();
    }
    out.sourceToResult[r] = it->second;
    out.resultToSources[it->second].push_back(r);
  }

  // Threads that differ only in a bit that never changes the kept index hold
  // other parts of the same slices, unless the bit never changes the whole
  // index either: then they hold copies of the same elements (a fragment
  // smaller than the block), which a reduction must not combine twice.
  int64_t bits = llvm::Log2_64_Ceil(threads);
  int64_t copies = 1;
  for (int64_t b = 0; b < bits; ++b) {
    bool alongDim = (threads % (int64_t(2) << b) == 0), copy = alongDim;
    for (int64_t t = 0; t < threads && alongDim; ++t) {
      int64_t u = t ^ (int64_t(1) << b);
      for (int64_t r = 0; r < regs && alongDim; ++r) {
        alongDim = table[r][t] == table[r][u];
        copy = copy && full[r][t] == full[r][u];
      }
    }
    if (alongDim && copy)
      copies *= 2;
    else if (alongDim)
      (b < 5 ? out.laneMask : out.warpMask) |= int64_t(1) << b;
  }

  std::optional<AffineExpr> h = fitMixedRadix(reps, ctx);
  if (!h) {
    why = "the registers holding one row of this layout follow no affine "
          "pattern, which tlc's reductions need";
    return failure();
  }
  SmallVector<AffineExpr> results;
  for (auto [k, e] : llvm::enumerate(layout.getMap().getResults()))
    if ((int64_t)k != dim)
      results.push_back(
          simplifyAffineExpr(e.replaceDims({getAffineDimExpr(0, ctx), *h}), 2, 0));
  if (results.empty())
    results.push_back(getAffineConstantExpr(0, ctx));
  out.layout = LayoutAttr::get(ctx, threads, reps.size(),
                               AffineMap::get(2, 0, results, ctx));
  SmallVector<int64_t> resultShape;
  for (auto [k, d] : llvm::enumerate(shape))
    if ((int64_t)k != dim)
      resultShape.push_back(d);
  if (resultShape.empty())
    resultShape.push_back(1);
  std::string problem = out.layout.checkCovers(resultShape);
  if (!problem.empty()) {
    why = "the sliced layout does not cover the result: " + problem;
    return failure();
  }
  if (!forReduction)
    return out; // a row vector's layout: each thread holds the rows it reads
  // Each result element must be held by exactly the threads the masks
  // combine (a reduction visits each source element once).
  int64_t numel = 1;
  for (int64_t d : resultShape)
    numel *= d;
  int64_t holders = threads * int64_t(reps.size()) / numel;
  int64_t group = int64_t(1) << llvm::popcount(uint64_t(out.laneMask | out.warpMask));
  int64_t srcNumel = 1;
  for (int64_t d : shape)
    srcNumel *= d;
  if (threads * regs != srcNumel * copies || holders != group * copies) {
    why = llvm::formatv("this layout holds row elements in a pattern tlc's "
                        "reductions do not combine ({0} holders per row, "
                        "thread groups of {1}, {2} registers for {3} elements)",
                        holders, group, threads * regs, srcNumel)
              .str();
    return failure();
  }
  return out;
}

std::optional<SmallVector<int64_t>> mlir::tile::droppedDims(ValueRange indices,
                                                           ValueRange ivs) {
  if (indices.size() >= ivs.size())
    return std::nullopt;
  SmallVector<int64_t> dropped;
  size_t next = 0; // the indices are the loop's, in order, some left out
  for (auto [d, iv] : llvm::enumerate(ivs)) {
    if (next < indices.size() && indices[next] == iv)
      ++next;
    else
      dropped.push_back(d);
  }
  if (next != indices.size())
    return std::nullopt;
  return dropped;
}

FailureOr<SlicedLayout> mlir::tile::sliceRows(LayoutAttr layout, ArrayRef<int64_t> shape,
                                              ArrayRef<int64_t> dims, std::string &why) {
  // One dimension at a time, the last first (the others keep their places);
  // each register's row register composed through the slices.
  SlicedLayout out;
  out.layout = layout;
  out.sourceToResult = llvm::to_vector(llvm::seq<int64_t>(0, layout.getRegs()));
  SmallVector<int64_t> current(shape);
  for (int64_t dim : llvm::reverse(dims)) {
    FailureOr<SlicedLayout> step =
        sliceLayout(out.layout, current, dim, why, /*forReduction=*/false);
    if (failed(step))
      return failure();
    for (int64_t &r : out.sourceToResult)
      r = step->sourceToResult[r];
    out.layout = step->layout;
    current.erase(current.begin() + dim);
    if (current.empty())
      current.push_back(1);
  }
  out.resultToSources.assign(out.layout.getRegs(), {});
  for (auto [r, to] : llvm::enumerate(out.sourceToResult))
    out.resultToSources[to].push_back(r);
  return out;
}

bool mlir::tile::equivalentLayouts(LayoutAttr a, LayoutAttr b) {
  if (a == b)
    return true;
  if (a.getThreads() != b.getThreads() || a.getRegs() != b.getRegs() ||
      a.getRank() != b.getRank())
    return false;
  // Enumerating costs thousands of map evaluations: the dialect (one per
  // context) remembers the answers.
  auto &dialect = static_cast<TileDialect &>(a.getDialect());
  std::pair<const void *, const void *> key(a.getAsOpaquePointer(), b.getAsOpaquePointer());
  {
    std::lock_guard<std::mutex> lock(dialect.layoutAnswersMutex);
    auto it = dialect.equivalentLayouts.find(key);
    if (it != dialect.equivalentLayouts.end())
      return it->second;
  }
  bool same = true;
  LayoutEvaluator evalA(a), evalB(b);
  SmallVector<int64_t> ia, ib;
  for (int64_t t = 0; t < a.getThreads() && same; ++t)
    for (int64_t r = 0; r < a.getRegs() && same; ++r) {
      evalA.apply(t, r, ia);
      evalB.apply(t, r, ib);
      same = ia == ib;
    }
  std::lock_guard<std::mutex> lock(dialect.layoutAnswersMutex);
  dialect.equivalentLayouts.emplace(key, same);
  return same;
}

//===----------------------------------------------------------------------===//
// Conversion by warp shuffles
//===----------------------------------------------------------------------===//

/// What a conversion through shared memory costs beyond moving its bytes, in
/// warp-instruction issues: the block's barrier and the stores' latency
/// before the loads.
static constexpr int64_t kSharedRoundTrip = 32;

/// The row-major position of `index` in `shape`.
static int64_t rowMajor(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (auto [i, d] : llvm::zip(index, shape))
    flat = flat * d + i;
  return flat;
}

FailureOr<SmallVector<ShuffleStep>>
mlir::tile::shuffleConversion(LayoutAttr src, ArrayRef<int64_t> srcShape, LayoutAttr dst,
                              ArrayRef<int64_t> dstShape, int64_t elementBits,
                              std::string &why) {
  int64_t threads = src.getThreads();
  int64_t numel = 1, dstNumel = 1;
  for (int64_t d : srcShape)
    numel *= d;
  for (int64_t d : dstShape)
    dstNumel *= d;
  if (numel != dstNumel || dst.getThreads() != threads) {
    why = "the two layouts are of different tiles or thread counts";
    return failure();
  }
  if (threads % 32 != 0) {
    why = "a block of fewer than 32 threads or of part of a warp";
    return failure();
  }
  if (elementBits > 32) {
    why = "elements wider than 32 bits";
    return failure();
  }
  // Every (thread, register) of the source holding each element, in
  // increasing thread order.
  std::vector<SmallVector<std::pair<int32_t, int32_t>, 2>> holders(numel);
  LayoutEvaluator srcEval(src), dstEval(dst);
  SmallVector<int64_t> index;
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t r = 0; r < src.getRegs(); ++r) {
      srcEval.apply(t, r, index);
      holders[rowMajor(index, srcShape)].push_back({int32_t(t), int32_t(r)});
    }
  // needed[t]: the element thread t's destination register holds.
  std::vector<int64_t> needed(threads);
  std::vector<int64_t> lanes(threads);
  int64_t bits = llvm::Log2_64_Ceil(uint64_t(threads));
  SmallVector<ShuffleStep> steps;
  for (int64_t r = 0; r < dst.getRegs(); ++r) {
    for (int64_t t = 0; t < threads; ++t) {
      dstEval.apply(t, r, index);
      needed[t] = rowMajor(index, dstShape);
    }
    // Thread 0's holders in its warp name the source registers to try.
    SmallVector<int64_t> candidates;
    for (auto [t, reg] : holders[needed[0]])
      if (t < 32 && !llvm::is_contained(candidates, reg))
        candidates.push_back(reg);
    std::optional<ShuffleStep> found;
    for (int64_t reg : candidates) {
      // A thread takes its own register where it holds the element (then
      // the step may need no shuffle at all), or the lowest lane of its
      // warp that does.
      for (bool ownFirst : {true, false}) {
        bool held = true;
        for (int64_t t = 0; t < threads && held; ++t) {
          int64_t warp = t / 32, lane = -1;
          for (auto [h, hreg] : holders[needed[t]]) {
            if (h / 32 != warp || hreg != reg)
              continue;
            if (ownFirst && h == t) {
              lane = t % 32;
              break;
            }
            if (lane < 0)
              lane = h % 32;
          }
          held = lane >= 0;
          lanes[t] = lane;
        }
        if (!held)
          break; // the other policy finds no holder either
        ShuffleStep step{r, reg, true, lanes[0], {}};
        for (int64_t j = 0; j < bits; ++j)
          step.laneBits.push_back((int64_t(1) << j) < threads
                                      ? lanes[int64_t(1) << j] ^ lanes[0]
                                      : 0);
        bool linear = true;
        for (int64_t t = 0; t < threads && linear; ++t) {
          int64_t lane = step.laneXor;
          for (int64_t j = 0; j < bits; ++j)
            if (t >> j & 1)
              lane ^= step.laneBits[j];
          linear = lane == lanes[t];
          step.own &= lanes[t] == t % 32;
        }
        if (linear) {
          found = std::move(step);
          break;
        }
      }
      if (found)
        break;
    }
    if (!found) {
      why = llvm::formatv("destination register {0} needs elements from other warps, from "
                          "several source registers, or from lanes no linear map of the "
                          "thread index gives",
                          r)
                .str();
      return failure();
    }
    steps.push_back(std::move(*found));
  }
  // The cost, in warp-instruction issues: a shuffle each for the registers
  // that move, against storing and loading the tile's bytes at shared
  // memory's 128 bytes a clock (a warp's registers twice) plus the block's
  // barrier and the round trip's latency. Shuffles move 32 bits at most, so
  // narrow elements in large tiles go through shared memory faster.
  int64_t shuffles = llvm::count_if(steps, [](const ShuffleStep &s) { return !s.own; });
  int64_t sharedCost =
      2 * llvm::divideCeil(dst.getRegs() * std::max<int64_t>(elementBits, 8) * 32, 8 * 128) +
      kSharedRoundTrip;
  if (shuffles > sharedCost) {
    why = llvm::formatv("{0} shuffles cost more than a round trip through shared memory",
                        shuffles)
              .str();
    return failure();
  }
  return steps;
}

//===----------------------------------------------------------------------===//
// Layouts seen through views and permuted indices
//===----------------------------------------------------------------------===//

LayoutAttr mlir::tile::reshapeLayout(LayoutAttr layout, ArrayRef<int64_t> from,
                                     ArrayRef<int64_t> to) {
  if (from == to)
    return layout;
  AffineMap map = layout.getMap();
  MLIRContext *ctx = layout.getContext();
  // The row-major position of each element, then its indices in `to`.
  AffineExpr flat = getAffineConstantExpr(0, ctx);
  for (auto [e, d] : llvm::zip(map.getResults(), from))
    flat = flat * d + e;
  SmallVector<AffineExpr> results;
  int64_t stride = 1;
  for (int64_t d : to)
    stride *= d;
  for (auto [k, d] : llvm::enumerate(to)) {
    stride /= d;
    AffineExpr e = stride > 1 ? flat.floorDiv(stride) : flat;
    if (k > 0)
      e = e % d;
    results.push_back(simplifyAffineExpr(e, map.getNumDims(), map.getNumSymbols()));
  }
  return LayoutAttr::get(ctx, layout.getThreads(), layout.getRegs(),
                         AffineMap::get(map.getNumDims(), map.getNumSymbols(), results, ctx));
}

LayoutAttr mlir::tile::permuteLayout(LayoutAttr layout, ArrayRef<int64_t> perm) {
  AffineMap map = layout.getMap();
  SmallVector<AffineExpr> results;
  for (int64_t d : perm)
    results.push_back(map.getResult(d));
  return LayoutAttr::get(layout.getContext(), layout.getThreads(), layout.getRegs(),
                         AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                                        layout.getContext()));
}

AllocFragmentOp mlir::tile::fragmentRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewOp>())
    v = view.getSource();
  return v.getDefiningOp<AllocFragmentOp>();
}

std::optional<LayoutAttr> mlir::tile::fragmentLayout(Value v) {
  AllocFragmentOp root = fragmentRoot(v);
  if (!root || !root.getLayout())
    return std::nullopt;
  return reshapeLayout(*root.getLayout(), root.getType().getShape(),
                       cast<MemRefType>(v.getType()).getShape());
}

void mlir::tile::setFragmentLayout(Value v, LayoutAttr layout) {
  AllocFragmentOp root = fragmentRoot(v);
  root.setLayoutAttr(reshapeLayout(layout, cast<MemRefType>(v.getType()).getShape(),
                                   root.getType().getShape()));
}

std::optional<SmallVector<int64_t>> mlir::tile::indexPermutation(ValueRange indices,
                                                                ValueRange ivs) {
  if (indices.size() != ivs.size())
    return std::nullopt;
  SmallVector<int64_t> perm;
  for (Value index : indices) {
    auto it = llvm::find(ivs, index);
    if (it == ivs.end() || llvm::is_contained(perm, it - ivs.begin()))
      return std::nullopt;
    perm.push_back(it - ivs.begin());
  }
  return perm;
}

LayoutAttr mlir::tile::loopLayoutOf(LayoutAttr layout, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [k, d] : llvm::enumerate(perm))
    inverse[d] = k;
  return permuteLayout(layout, inverse);
}

/// Whether `v` keeps one value across the iterations of `loop` (a parallel
/// loop): defined outside it, a constant, or computed inside it without side
/// effects from such values, including the index of a serial loop inside it
/// whose bounds are such values.
static bool invariantIn(Value v, Operation *loop) {
  if (matchPattern(v, m_Constant()))
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    // A block outside the loop (or, while a dialect conversion inlines an
    // enclosing loop's body, one already detached from any op).
    Operation *owner = arg.getOwner()->getParentOp();
    if (!owner || !loop->isAncestor(owner))
      return true;
    auto forOp = dyn_cast<scf::ForOp>(owner);
    return forOp && arg == forOp.getInductionVar() &&
           llvm::all_of(ValueRange{forOp.getLowerBound(), forOp.getUpperBound(),
                                   forOp.getStep()},
                        [&](Value b) { return invariantIn(b, loop); });
  }
  Operation *def = v.getDefiningOp();
  if (!loop->isAncestor(def))
    return true;
  return isPure(def) && def->getNumRegions() == 0 &&
         llvm::all_of(def->getOperands(), [&](Value o) { return invariantIn(o, loop); });
}

SmallVector<int64_t> OuterIndexing::splitShape(ArrayRef<int64_t> shape) const {
  SmallVector<int64_t> result;
  for (auto [d, size] : llvm::enumerate(shape)) {
    auto split = llvm::find_if(splits, [&](auto &s) { return s.first == (int64_t)d; });
    if (split == splits.end()) {
      result.push_back(size);
    } else {
      result.push_back(size / split->second);
      result.push_back(split->second);
    }
  }
  return result;
}

std::optional<OuterIndexing> mlir::tile::outerIndexing(ValueRange indices, Block &loopBody,
                                                       ArrayRef<int64_t> loopShape) {
  ValueRange ivs = loopBody.getArguments();
  Operation *loop = loopBody.getParentOp();
  OuterIndexing result;
  int64_t next = 0, at = 0; // the loop's indices, in order, some left out; `at`: split dim
  auto useIv = [&](Value index) {
    auto iv = llvm::find(ivs, index);
    if (iv == ivs.end())
      return false;
    int64_t k = iv - ivs.begin();
    if (k < next)
      return false; // out of order
    for (; next < k; ++next)
      result.dropped.push_back(next);
    ++next;
    return true;
  };
  // `a * n + i`, `i + a * n`, `c + i` (c a multiple of n): a, or nothing.
  auto splitOf = [&](Value index) -> std::optional<std::pair<OpFoldResult, Value>> {
    auto add = index.getDefiningOp<arith::AddIOp>();
    if (!add)
      return std::nullopt;
    for (auto [iv, other] : {std::pair{add.getLhs(), add.getRhs()},
                             std::pair{add.getRhs(), add.getLhs()}}) {
      auto it = llvm::find(ivs, iv);
      if (it == ivs.end())
        continue;
      int64_t n = loopShape[it - ivs.begin()];
      APInt c;
      if (matchPattern(other, m_ConstantInt(&c))) {
        if (c.getSExtValue() % n == 0)
          return std::pair{OpFoldResult(IntegerAttr::get(IndexType::get(index.getContext()),
                                                         c.getSExtValue() / n)),
                           iv};
        continue;
      }
      auto mul = other.getDefiningOp<arith::MulIOp>();
      if (!mul)
        continue;
      for (auto [a, factor] : {std::pair{mul.getLhs(), mul.getRhs()},
                               std::pair{mul.getRhs(), mul.getLhs()}})
        if (matchPattern(factor, m_ConstantInt(&c)) && c.getSExtValue() == n &&
            invariantIn(a, loop))
          return std::pair{OpFoldResult(a), iv};
    }
    return std::nullopt;
  };
  for (auto [d, index] : llvm::enumerate(indices)) {
    if (useIv(index)) {
      ++at;
      continue;
    }
    if (auto split = splitOf(index)) {
      int64_t n = loopShape[llvm::find(ivs, split->second) - ivs.begin()];
      if (!useIv(split->second))
        return std::nullopt;
      result.splits.push_back({(int64_t)d, n});
      result.outer.push_back(at);
      result.outerValues.push_back(split->first);
      at += 2;
      continue;
    }
    if (!invariantIn(index, loop))
      return std::nullopt;
    result.outer.push_back(at++);
    result.outerValues.push_back(index);
  }
  for (; next < (int64_t)ivs.size(); ++next)
    result.dropped.push_back(next);
  if (result.outer.empty())
    return std::nullopt;
  return result;
}

FailureOr<OuterLayout> mlir::tile::outerLayout(LayoutAttr layout, ArrayRef<int64_t> loopShape,
                                               ArrayRef<int64_t> shape,
                                               const OuterIndexing &indexing,
                                               std::string &why) {
  FailureOr<SlicedLayout> sliced = sliceRows(layout, loopShape, indexing.dropped, why);
  if (failed(sliced))
    return failure();
  for (auto [d, n] : indexing.splits)
    if (shape[d] % n) {
      why = llvm::formatv("dimension {0} of the fragment ({1}) is indexed in pieces of the "
                          "loop's {2}, which do not divide it",
                          d, shape[d], n)
                .str();
      return failure();
    }
  SmallVector<int64_t> original(shape);
  SmallVector<int64_t> split = indexing.splitShape(shape);
  shape = split;
  SmallVector<int64_t> kept; // the loop's dimensions the fragment is indexed by
  for (int64_t d = 0; d < (int64_t)loopShape.size(); ++d)
    if (!llvm::is_contained(indexing.dropped, d))
      kept.push_back(loopShape[d]);
  SmallVector<int64_t> inner; // the fragment's other dimensions
  int64_t outer = 1;
  for (auto [d, size] : llvm::enumerate(shape)) {
    if (llvm::is_contained(indexing.outer, (int64_t)d))
      outer *= size;
    else
      inner.push_back(size);
  }
  if (inner != kept) {
    why = "the fragment's dimensions indexed by the loop are not as long as the loop's";
    return failure();
  }
  MLIRContext *ctx = layout.getContext();
  int64_t regs = sliced->layout.getRegs();
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineMap innerMap = sliced->layout.getMap().replaceDimsAndSymbols({t, r % regs}, {}, 2, 0);
  SmallVector<AffineExpr> results;
  int64_t stride = outer, next = 0;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d) {
    if (llvm::is_contained(indexing.outer, d)) {
      stride /= shape[d];
      results.push_back((r.floorDiv(regs * stride)) % shape[d]);
    } else {
      results.push_back(innerMap.getResult(next++));
    }
  }
  LayoutAttr placed = LayoutAttr::get(ctx, layout.getThreads(), regs * outer,
                                     AffineMap::get(2, 0, results, ctx));
  return OuterLayout{reshapeLayout(placed, split, original), regs, sliced->sourceToResult};
}
