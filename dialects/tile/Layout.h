//===- Layout.h - The fragment-layout library --------------------*- C++ -*-===//
//
// Everything tlc knows about a fragment layout (#tile.layout: which thread and
// register hold each element of a tile), in one place:
//
//   - the attribute itself: its verifier, apply(thread, reg), the coverage
//     check (every element held, replication consistent), the longest run of
//     contiguous registers (LayoutAttr methods, Layout.cpp);
//   - construction: blocked layouts sized for vector accesses
//     (LayoutAttr::getBlocked; tensor-core layouts are built by the target's
//     instructions, passes/Target/Mma.cpp, from these pieces);
//   - evaluation: LayoutEvaluator, for loops over every (thread, register);
//   - equality: equivalentLayouts compares the functions the maps describe
//     (however they are written); an op that needs a given layout rewrites an
//     equivalent one as that layout (tile-infer-layout), so one element
//     placement has one form in the IR;
//   - slicing: sliceLayout, the layout of a reduction's result and which
//     threads a reduction must combine;
//   - conversion: shuffleConversion, moving a tile between two layouts with
//     warp shuffles where every element stays in its warp.
//
// The answers that cost an enumeration (equivalence, slices, coverage) are
// cached in the tile dialect, i.e. per MLIR context.
//
//===----------------------------------------------------------------------===//

#ifndef TLC_DIALECTS_TILE_LAYOUT_H
#define TLC_DIALECTS_TILE_LAYOUT_H

#include "dialects/tile/TileDialect.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::tile {

/// A layout sliced along one dimension: the layout of the tensor without that
/// dimension, held by the same threads.
struct SlicedLayout {
  /// The layout of the result, every element held by every thread that held
  /// a part of it.
  LayoutAttr layout;
  /// For each register of the source, the result register holding its slice.
  SmallVector<int64_t> sourceToResult;
  /// For each result register, the source registers sliced into it.
  SmallVector<SmallVector<int64_t>> resultToSources;
  /// Thread-index bits that move along the sliced dimension only, within a
  /// warp (lanes) and across warps: the threads a reduction must combine
  /// (not the bits between threads holding copies of the same elements).
  int64_t laneMask = 0, warpMask = 0;
};

/// Slices `layout` (of a tile of `shape`) along `dim`; fails with the reason
/// when the registers holding one slice do not form an affine pattern or,
/// `forReduction`, when a reduction could not combine them (each source
/// element visited once, the holders of a row exactly the threads the masks
/// combine).
FailureOr<SlicedLayout> sliceLayout(LayoutAttr layout, ArrayRef<int64_t> shape,
                                    int64_t dim, std::string &why,
                                    bool forReduction = true);

/// The layout of a row vector a loop of `layout` (over `shape`) reads without
/// the dimensions `dims` (increasing): `layout` sliced along each, and each
/// loop register's row register. The masks are not set (no reduction).
FailureOr<SlicedLayout> sliceRows(LayoutAttr layout, ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> dims, std::string &why);

/// A layout for a tile of `shape` whose rows (along the last dimension) are
/// each held by a power-of-two group of `threads` (the largest that divides
/// the row's `vector`-wide pieces, up to `threads`), each thread holding
/// `vector` contiguous elements per piece: what a row reduction combines with
/// shuffles where the blocked layout spreads a row over an uneven thread set
/// (160 columns in 16-byte pieces: 20 pieces a row). Fails with the reason
/// when the rows cannot be dealt out evenly.
FailureOr<LayoutAttr> rowGroupedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                       int64_t threads, int64_t vector, std::string &why);

/// One destination register of a conversion by warp shuffles: thread t's
/// register `dstReg` takes register `srcReg` of lane
/// `laneXor ^ (XOR of laneBits[j] over the set bits j of t)` of t's own warp
/// (a linear map of the thread index's bits), or, `own`, its own register
/// `srcReg` (no shuffle).
struct ShuffleStep {
  int64_t dstReg, srcReg;
  bool own;
  int64_t laneXor;
  SmallVector<int64_t> laneBits;
};

/// How to convert a tile from layout `src` (over `srcShape`) to `dst` (over
/// `dstShape`, as many elements, matched in row-major order) with warp
/// shuffles alone: one step per destination register. Fails, with the
/// reason, where an element must come from another warp, where the lanes of
/// a warp would need different source registers for one destination
/// register, where the source lanes are no linear map of the thread index,
/// for blocks of fewer than 32 threads, for elements wider than 32 bits
/// (`elementBits`), and where the shuffles would cost more than a round trip
/// through shared memory (narrow elements, many registers); such conversions
/// go through shared memory.
FailureOr<SmallVector<ShuffleStep>> shuffleConversion(LayoutAttr src, ArrayRef<int64_t> srcShape,
                                                      LayoutAttr dst, ArrayRef<int64_t> dstShape,
                                                      int64_t elementBits, std::string &why);

/// Whether two layouts place every (thread, register) on the same element
/// (the same function, however their maps are written).
bool equivalentLayouts(LayoutAttr a, LayoutAttr b);

/// The loop dimensions a row-vector access leaves out (increasing):
/// `indices` must be the loop indices `ivs` in order with one or more
/// removed (m[i] in a loop over (i, j); s[n] in one over (n, t, h)).
std::optional<SmallVector<int64_t>> droppedDims(ValueRange indices, ValueRange ivs);

/// `layout` (of a tile of shape `from`) seen through a row-major reshape to
/// `to` (as many elements): each (thread, register) holds the element at the
/// same row-major position, so a view of a fragment (tile.view) holds its
/// allocation's registers as they are.
LayoutAttr reshapeLayout(LayoutAttr layout, ArrayRef<int64_t> from, ArrayRef<int64_t> to);

/// `layout` with its dimensions permuted: dimension d of the result is
/// dimension perm[d] of `layout` (how a loop over (i, j) sees a fragment it
/// indexes as f[j, i]: perm = {1, 0}).
LayoutAttr permuteLayout(LayoutAttr layout, ArrayRef<int64_t> perm);

/// For a fragment indexed by a permutation of a loop's indices (f[j, i] in
/// a loop over (i, j)): perm[k], the loop dimension that indexes dimension k;
/// nothing for other indices.
std::optional<SmallVector<int64_t>> indexPermutation(ValueRange indices, ValueRange ivs);

/// The layout of a fragment indexed through `perm` (indexPermutation) as the
/// loop sees it; permuteLayout(loopLayout, perm) goes back.
LayoutAttr loopLayoutOf(LayoutAttr layout, ArrayRef<int64_t> perm);

/// How a loop indexes a fragment in some dimensions by values the loop does
/// not change (lse[k, j] in a loop over j inside a serial loop over k; a
/// serial loop's index inside the loop's body, a[k, i] in a loop over
/// (i, j) whose body loops over k) and in the others by the loop's indices
/// in order, some possibly left out. An index `a * n + i` (a such a value,
/// i the loop's index of extent n: x[i, kk * 4 + j] in a loop over (i, j)
/// of extent 4 in j) splits its dimension in two, [size / n, n], indexed by
/// a and i.
struct OuterIndexing {
  /// The fragment's dimensions indexed by `a * n + i`: (dimension, n),
  /// increasing.
  SmallVector<std::pair<int64_t, int64_t>> splits;
  /// The dimensions of the fragment so split indexed by values the loop
  /// does not change (increasing, at least one), and those values.
  SmallVector<int64_t> outer;
  SmallVector<OpFoldResult> outerValues;
  /// The loop's dimensions the other indices leave out (increasing).
  SmallVector<int64_t> dropped;

  /// `shape` with the splits made.
  SmallVector<int64_t> splitShape(ArrayRef<int64_t> shape) const;
};

/// The OuterIndexing of `indices` in the parallel loop whose body is
/// `loopBody` and whose extents are `loopShape`; nothing when some index
/// depends on the loop's indices other than as one of them or as
/// `a * n + i`, they are out of order, or no index is outer.
std::optional<OuterIndexing> outerIndexing(ValueRange indices, Block &loopBody,
                                           ArrayRef<int64_t> loopShape);

/// The layout of such a fragment (of `shape`) that a loop of `layout` (over
/// `loopShape`) reads from its own registers: the loop's layout sliced along
/// the dropped dimensions (sliceRows), each thread holding, for every element
/// that gives it, the whole range of the outer dimensions: register
/// `o * inner + sourceToResult[r]` for outer position o (row-major over the
/// outer dimensions of the split shape) and loop register r. Fails with the
/// reason where the sizes disagree, a split does not divide its dimension or
/// the slice has no layout.
struct OuterLayout {
  LayoutAttr layout;
  int64_t inner;                     ///< registers per outer position
  SmallVector<int64_t> sourceToResult; ///< loop register -> inner register
};
FailureOr<OuterLayout> outerLayout(LayoutAttr layout, ArrayRef<int64_t> loopShape,
                                   ArrayRef<int64_t> shape, const OuterIndexing &indexing,
                                   std::string &why);

/// The fragment allocation `v` is, or views (through tile.view ops); null
/// for any other value.
AllocFragmentOp fragmentRoot(Value v);

/// The layout of the fragment value `v`: its allocation's, seen through the
/// views between; nothing while the allocation has none.
std::optional<LayoutAttr> fragmentLayout(Value v);

/// Places the fragment value `v`: gives its allocation the layout that makes
/// `v`'s `layout`.
void setFragmentLayout(Value v, LayoutAttr layout);

class LayoutEvaluator {
public:
  explicit LayoutEvaluator(LayoutAttr layout);

  /// The indices `layout.apply(thread, reg)` gives, into `out` (resized).
  void apply(int64_t thread, int64_t reg, SmallVectorImpl<int64_t> &out);

private:
  struct Node {
    AffineExprKind kind;
    int64_t value; ///< a constant; for a dim, 0 = thread, 1 = register
    int32_t lhs, rhs;
  };
  int32_t flatten(AffineExpr expr);

  SmallVector<Node> nodes;
  SmallVector<int32_t> results;
  SmallVector<int64_t> values;
};

} // namespace mlir::tile

#endif // TLC_DIALECTS_TILE_LAYOUT_H
