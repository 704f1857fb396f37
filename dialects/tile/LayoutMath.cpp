//===- LayoutMath.cpp - Layout algebra ------------------------------------===//

#include "dialects/tile/LayoutMath.h"

#include "dialects/tile/LayoutEvaluator.h"

#include "llvm/ADT/DenseMap.h"
#include "dialects/tile/TileDialect.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace mlir::tile;

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
                                            int64_t dim, std::string &why);

FailureOr<SlicedLayout> mlir::tile::sliceLayout(LayoutAttr layout,
                                                ArrayRef<int64_t> shape,
                                                int64_t dim, std::string &why) {
  // Layout inference and the lowerings slice the same layouts for every row
  // vector access, and each slice enumerates threads x regs (32768
  // evaluations for MLA's 64 x 512 accumulator): remember the answers.
  auto &dialect = static_cast<TileDialect &>(layout.getDialect());
  auto key = std::make_tuple(layout.getAsOpaquePointer(), shape.vec(), dim);
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
  answer->result = computeSlice(layout, shape, dim, answer->why);
  why = answer->why;
  FailureOr<SlicedLayout> result = answer->result;
  std::lock_guard<std::mutex> lock(dialect.layoutAnswersMutex);
  dialect.slicedLayouts.emplace(std::move(key), std::move(answer));
  return result;
}

static FailureOr<SlicedLayout> computeSlice(LayoutAttr layout, ArrayRef<int64_t> shape,
                                            int64_t dim, std::string &why) {
  MLIRContext *ctx = layout.getContext();
  int64_t threads = layout.getThreads(), regs = layout.getRegs();
  auto kept = [&](ArrayRef<int64_t> index) {
    SmallVector<int64_t> out;
    for (auto [k, i] : llvm::enumerate(index))
      if ((int64_t)k != dim)
        out.push_back(i);
    return out;
  };
  // table[r][t]: the kept index of register r of thread t.
  SmallVector<SmallVector<SmallVector<int64_t>>> table(regs);
  LayoutEvaluator eval(layout);
  SmallVector<int64_t> index;
  for (int64_t r = 0; r < regs; ++r)
    for (int64_t t = 0; t < threads; ++t) {
      eval.apply(t, r, index);
      table[r].push_back(kept(index));
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
  // other parts of the same slices.
  int64_t bits = llvm::Log2_64_Ceil(threads);
  for (int64_t b = 0; b < bits; ++b) {
    bool alongDim = (threads % (int64_t(2) << b) == 0);
    for (int64_t t = 0; t < threads && alongDim; ++t) {
      int64_t u = t ^ (int64_t(1) << b);
      for (int64_t r = 0; r < regs && alongDim; ++r)
        alongDim = table[r][t] == table[r][u];
    }
    if (alongDim)
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
  if (threads * regs != srcNumel || holders != group) {
    why = llvm::formatv("this layout holds row elements in a pattern tlc's "
                        "reductions do not combine ({0} holders per row, "
                        "thread groups of {1}, {2} registers for {3} elements)",
                        holders, group, threads * regs, srcNumel)
              .str();
    return failure();
  }
  return out;
}

std::optional<int64_t> mlir::tile::droppedDim(ValueRange indices, ValueRange ivs) {
  if (indices.size() + 1 != ivs.size())
    return std::nullopt;
  for (int64_t d = 0; d < (int64_t)ivs.size(); ++d) {
    SmallVector<Value> rest;
    for (auto [k, iv] : llvm::enumerate(ivs))
      if ((int64_t)k != d)
        rest.push_back(iv);
    if (llvm::equal(rest, indices))
      return d;
  }
  return std::nullopt;
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
