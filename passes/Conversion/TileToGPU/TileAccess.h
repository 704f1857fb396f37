//===- TileAccess.h - Per-thread loads and stores of tile elements -*- C++ -*-===//
//
// The pieces every tile-op lowering shares: where a tile element sits in a
// buffer, masked vector accesses to global memory, element conversion.
//
//===----------------------------------------------------------------------===//

#ifndef TLC_PASSES_TILEACCESS_H
#define TLC_PASSES_TILEACCESS_H

#include "dialects/tile/Layout.h"
#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::tile {

/// A shared buffer with a non-plain #tile.shared layout (swizzled, in column
/// blocks, or one stage of a multi-buffered allocation) as the conversion
/// addresses it: element e of the buffer lives at flat[base + address of e in
/// `layout`] (sharedAddress). A buffer with the plain layout has none: it is
/// indexed as it is.
struct SharedBuffer {
  MemRefType type;         ///< the tile-level type (one stage): shape, element
  SharedLayoutAttr layout; ///< of one stage: `stages` is 0
  Value flat;              ///< the allocation as a 1-d view of elements
  Value base;              ///< the stage's first element in `flat` (null: 0)
  /// A tile.view's allocation type (null: the buffer is no view): element e
  /// of the view (row-major in `type`) is bytes [e x its size, (e + 1) x its
  /// size) of the allocation's elements in row-major order, each where
  /// `layout` puts it; `flat` is then a 1-d view of the view's elements.
  MemRefType allocType;
};

/// The shared buffer `converted` (the converted form of the tile-level shared
/// value `original`: an allocation or a tile.stage of one) addresses, or
/// nothing when its layout is plain.
std::optional<SharedBuffer> sharedBufferOf(Value original, Value converted);

/// The memref and indices that address element `indices` of a shared buffer:
/// `buffer` itself when `shared` is null (the plain layout), else the flat
/// view at the position its #tile.shared layout gives (the one place a
/// layout becomes an address).
std::pair<Value, SmallVector<Value>>
sharedAddress(OpBuilder &b, Location loc, const SharedBuffer *shared,
              Value buffer, ValueRange indices);

/// A fragment as converted: each thread's registers and the layout that
/// fills them (the layout of its tile.alloc_fragment).
struct Fragment {
  Value regs;
  LayoutAttr layout;
};

/// The fragment `original` (a tile.alloc_fragment value, or a tile.view of
/// one: its allocation's registers, in the layout seen through the view) is,
/// with its converted registers `regs`; nothing for any other value.
std::optional<Fragment> fragmentOf(Value original, Value regs);

/// The attribute marking a fragment of per-thread partial results (the
/// partials of a T.alloc_reducer): its dimension 0 is the thread, thread t
/// holding row t (one register per element, row-major), and an element access
/// inside a tile.parallel, whose first index is written 0, reaches the running
/// thread's own row. tile-infer-layout leaves these accesses out of the loop's
/// layout; tile.reduce along dimension 0 combines the rows.
constexpr llvm::StringLiteral kReducerAttr = "tile.reducer";
/// On each memref.atomic_rmw of a T.atomic_addx2 / x4 (the frontend's
/// tlc.frontend.atomics): the group's width, and the op's place in it.
constexpr llvm::StringLiteral kVectorAtomicAttr = "tile.vector_atomic";
constexpr llvm::StringLiteral kVectorLaneAttr = "tile.vector_lane";

/// How a fragment element access inside a tile.parallel reaches its register
/// when not through the loop's layout (Layout: the loop's own register, or a
/// row vector's).
enum class PrivateAccess {
  Layout,     ///< by the loop's layout
  Partials,   ///< a reducer's partials: the row-major position of indices 1..
  WholeTile,  ///< a read of a fragment every thread holds whole (holdsWholeTile),
              ///< at any index (R[0] in a loop over i): row-major
};

/// How `access` (a memref.load/store of a fragment inside a tile.parallel)
/// reaches its register.
PrivateAccess privateAccess(Operation *access);

/// Whether every thread holds every element of `layout` (a tile of `shape`),
/// register r holding the element at row-major position r: what a reduction
/// over all threads leaves (T.finalize_reducer). Such a fragment is read at
/// any index, inside T.Parallel or not, from the thread's own registers.
bool holdsWholeTile(LayoutAttr layout, ArrayRef<int64_t> shape);

/// The register of `fragment` (a reducer's partials, or a fragment every
/// thread holds whole) that holds element `indices` in the running thread:
/// their row-major position, the partials' dimension 0 (the thread) left out.
Value ownRegister(OpBuilder &b, Location loc, Value fragment, ValueRange indices);

/// One side of a data movement: a buffer (as converted), its tile-level
/// type, and the region of it the tile occupies (start index and size per
/// dimension of that type).
struct TileSide {
  Value buffer;
  MemRefType type;
  Place place;
  SmallVector<Value> offsets;
  SmallVector<int64_t> sizes;
  std::optional<SharedBuffer> shared; ///< a laid-out shared buffer's addressing
  /// Fragment sides: the thread's registers (`buffer`) and their layout.
  LayoutAttr fragmentLayout;

  const SharedBuffer *sharedPtr() const { return shared ? &*shared : nullptr; }
};

/// The side of a tile op's operand `original` (converted: `converted`) over the
/// region at `offsets` of `sizes`.
TileSide makeSide(Value original, Value converted, ValueRange offsets,
                  ArrayRef<int64_t> sizes);

/// Builds index arithmetic with less noise.
struct IndexBuilder {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return y ? add(x, c(y)) : x; }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, c(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, c(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, c(y)); }
};

/// The largest power of two dividing `n` (n > 0).
int64_t powerOfTwoDividing(int64_t n);

/// The largest power of two known to divide `value` (block indices and other
/// unknowns count as 1; a zero constant as 2^30).
int64_t knownDivisor(Value value);

/// Buffer indices of the tile element `tileIndex` (tile coordinates, unit
/// dimensions of the region dropped).
SmallVector<Value> sideIndices(OpBuilder &b, Location loc, const TileSide &side,
                               ValueRange tileIndex);

/// The widest vector (elements along the last dimension, a power of two at
/// most `limit`) this side can move with naturally aligned accesses, given
/// the sizes and offsets known at compile time.
int64_t maxVectorWidth(const TileSide &side, int64_t limit);

/// Loads `width` consecutive elements along the last dimension at `indices`.
/// Global reads outside the tensor yield zero.
Value loadElements(OpBuilder &b, Location loc, const TileSide &side,
                   ValueRange indices, int64_t width);

/// Stores the vector (or scalar, when `width` is 1) `value` at `indices`.
/// Global writes outside the tensor are skipped.
void storeElements(OpBuilder &b, Location loc, const TileSide &side,
                   ValueRange indices, Value value, int64_t width);

/// Copies `width` elements from global `from` to shared `to` with cp.async
/// (nvgpu.device_async_copy); elements outside the tensor are zero-filled
/// (cp.async's source size). Rows that a dynamic size leaves misaligned for
/// the vector fall back to element-wise loads and stores. Where `pred` (an
/// i1, optional) is false nothing is read and zeros are written.
void asyncCopyElements(OpBuilder &b, Location loc, const TileSide &from,
                       ValueRange fromIdx, const TileSide &to, ValueRange toIdx,
                       int64_t width, Value pred = Value());

/// Whether `indices` lie inside `buffer` (an i1 value; for global buffers).
Value insideBounds(OpBuilder &b, Location loc, Value buffer, ValueRange indices);

/// Converts a scalar or vector of one element type to another.
Value convertElements(OpBuilder &b, Location loc, Value value, Type toElement);

/// Emits a loop over the `width`-element vectors of a row-major tile of
/// `shape` (`width` divides the last extent), shared by the block: thread
/// `tid` of `threads` visits vectors tid, tid + threads, ... (guarded at the
/// end); with no `tid` one thread visits them all. `body` builds the work of
/// one vector from its first element's indices. When one round of all
/// threads covers whole rows, a thread's indices are computed once and each
/// round only moves the first index by a constant, so the addresses a thread
/// touches share a base register.
void forEachVector(OpBuilder &b, Location loc, Value tid, int64_t threads,
                   ArrayRef<int64_t> shape, int64_t width,
                   function_ref<void(OpBuilder &, Location, ValueRange)> body);

/// Row-major indices of `flat` in a tile of `shape`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                               ArrayRef<int64_t> shape);

/// The index values of `layout` applied to (`thread`, constant `reg`).
SmallVector<Value> applyLayout(OpBuilder &b, Location loc, LayoutAttr layout,
                               Value thread, int64_t reg);



} // namespace mlir::tile

#endif // TLC_PASSES_TILEACCESS_H
