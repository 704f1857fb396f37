//===- TileAccess.cpp - Per-thread loads and stores of tile elements ------===//

#include "passes/Conversion/TileToGPU/TileAccess.h"
#include "dialects/tile/Layout.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

static constexpr int64_t kHugeDivisor = int64_t(1) << 30;

int64_t mlir::tile::powerOfTwoDividing(int64_t n) { return n & -n; }

int64_t mlir::tile::knownDivisor(Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant))) {
    int64_t c = constant.getSExtValue();
    return c == 0 ? kHugeDivisor : powerOfTwoDividing(std::abs(c));
  }
  Operation *op = value.getDefiningOp();
  if (!op)
    return 1;
  if (isa<arith::MulIOp>(op))
    return std::min(kHugeDivisor, knownDivisor(op->getOperand(0)) *
                                      knownDivisor(op->getOperand(1)));
  if (isa<arith::AddIOp, arith::SubIOp>(op))
    return std::min(knownDivisor(op->getOperand(0)),
                    knownDivisor(op->getOperand(1)));
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return knownDivisor(op->getOperand(0));
  return 1;
}

SmallVector<Value> mlir::tile::sideIndices(OpBuilder &b, Location loc,
                                           const TileSide &side,
                                           ValueRange tileIndex) {
  SmallVector<Value> indices;
  unsigned next = 0;
  for (auto [offset, size] : llvm::zip(side.offsets, side.sizes)) {
    if (size == 1 || next >= tileIndex.size()) {
      indices.push_back(offset);
      continue;
    }
    indices.push_back(arith::AddIOp::create(b, loc, offset, tileIndex[next++]));
  }
  return indices;
}

int64_t mlir::tile::maxVectorWidth(const TileSide &side, int64_t limit) {
  MemRefType type = side.type;
  if (type.getElementTypeBitWidth() < 8 || side.sizes.back() == 1)
    return 1;
  int64_t width = std::min(limit, powerOfTwoDividing(side.sizes.back()));
  width = std::min(width, knownDivisor(side.offsets.back()));
  if (!type.isDynamicDim(type.getRank() - 1))
    width = std::min(width, powerOfTwoDividing(type.getShape().back()));
  width = stridedVectorLimit(type, width);
  return std::max<int64_t>(width, 1);
}

/// The size of dimension `dim` of `buffer` as an index value.
static Value dimSize(OpBuilder &b, Location loc, Value buffer, int64_t dim) {
  auto type = cast<MemRefType>(buffer.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  return memref::DimOp::create(b, loc, buffer, dim);
}

static Value andAll(OpBuilder &b, Location loc, ArrayRef<Value> conditions) {
  Value result = conditions.front();
  for (Value c : conditions.drop_front())
    result = arith::AndIOp::create(b, loc, result, c);
  return result;
}

/// Conditions that each index but the last lies inside the buffer.
static SmallVector<Value> leadingInside(OpBuilder &b, Location loc, Value buffer,
                                        ValueRange indices) {
  SmallVector<Value> conditions;
  for (auto [dim, index] : llvm::enumerate(indices.drop_back()))
    conditions.push_back(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, index, dimSize(b, loc, buffer, dim)));
  return conditions;
}

Value mlir::tile::insideBounds(OpBuilder &b, Location loc, Value buffer,
                               ValueRange indices) {
  SmallVector<Value> conditions = leadingInside(b, loc, buffer, indices);
  int64_t last = indices.size() - 1;
  conditions.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             indices.back(),
                                             dimSize(b, loc, buffer, last)));
  return andAll(b, loc, conditions);
}

/// How a global access of `width` elements is guarded.
struct GlobalGuard {
  Value whole;   ///< the whole vector may be accessed at once
  bool partial;  ///< a vector may straddle the tensor's end (dynamic size)
  Value rowInside; ///< the leading indices are inside (null for rank 1)
};

static GlobalGuard guardGlobal(OpBuilder &b, Location loc, Value buffer,
                               ValueRange indices, int64_t width) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t last = type.getRank() - 1;
  SmallVector<Value> conditions = leadingInside(b, loc, buffer, indices);
  GlobalGuard guard;
  guard.rowInside = conditions.empty() ? Value() : andAll(b, loc, conditions);
  Value lastElem = arith::AddIOp::create(
      b, loc, indices.back(), arith::ConstantIndexOp::create(b, loc, width - 1));
  Value size = dimSize(b, loc, buffer, last);
  conditions.push_back(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lastElem, size));
  // A static last size is a multiple of the width (maxVectorWidth ensured
  // it), so a vector is wholly inside or wholly outside. A dynamic one may
  // end mid-vector, and rows may not start on a vector boundary: then the
  // vector path runs only for aligned rows and the rest goes element-wise.
  guard.partial = width > 1 && type.isDynamicDim(last);
  if (guard.partial && last > 0) {
    Value rem = arith::RemUIOp::create(
        b, loc, size, arith::ConstantIndexOp::create(b, loc, width));
    conditions.push_back(arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, rem,
        arith::ConstantIndexOp::create(b, loc, 0)));
  }
  guard.whole = andAll(b, loc, conditions);
  return guard;
}

/// Index `e` elements after `indices` along the last dimension.
static SmallVector<Value> shifted(OpBuilder &b, Location loc, ValueRange indices,
                                  int64_t e) {
  SmallVector<Value> result(indices);
  result.back() = arith::AddIOp::create(b, loc, indices.back(),
                                        arith::ConstantIndexOp::create(b, loc, e));
  return result;
}

/// The element-at-a-time guard of element `e` of a straddling vector.
static Value elementInside(OpBuilder &b, Location loc, Value buffer,
                           const GlobalGuard &guard, ValueRange indices) {
  int64_t last = indices.size() - 1;
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       indices.back(),
                                       dimSize(b, loc, buffer, last));
  return guard.rowInside ? arith::AndIOp::create(b, loc, guard.rowInside, inside)
                         : inside;
}

/// Splits a sum of `arith.addi`s into its constant part (returned) and its
/// other terms.
static int64_t splitConstant(Value v, SmallVector<Value> &terms) {
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c;
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add) {
    terms.push_back(v);
    return 0;
  }
  return splitConstant(add.getLhs(), terms) + splitConstant(add.getRhs(), terms);
}

/// sharedAddress of an element of a view (SharedBuffer::allocType): the
/// allocation element holding its first byte, addressed through the layout,
/// plus the bytes before it in that element.
static std::pair<Value, SmallVector<Value>>
viewAddress(OpBuilder &b, Location loc, const SharedBuffer &view, Value buffer,
            ValueRange indices) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  int64_t viewBytes = std::max<int64_t>(1, view.type.getElementTypeBitWidth() / 8);
  int64_t allocBytes = std::max<int64_t>(1, view.allocType.getElementTypeBitWidth() / 8);
  Value flat = cst(0);
  for (auto [index, size] : llvm::zip(indices, view.type.getShape()))
    flat = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, flat, cst(size)), index);
  Value bytes = arith::MulIOp::create(b, loc, flat, cst(viewBytes));
  Value element = arith::DivUIOp::create(b, loc, bytes, cst(allocBytes));
  SmallVector<Value> allocIndices(view.allocType.getRank());
  for (int64_t d = view.allocType.getRank() - 1; d >= 0; --d) {
    int64_t size = view.allocType.getDimSize(d);
    allocIndices[d] = d ? arith::RemUIOp::create(b, loc, element, cst(size)).getResult() : element;
    if (d)
      element = arith::DivUIOp::create(b, loc, element, cst(size));
  }
  SharedBuffer alloc = view;
  alloc.type = view.allocType;
  alloc.allocType = MemRefType();
  auto [memref, at] = sharedAddress(b, loc, &alloc, buffer, allocIndices);
  Value physical = arith::MulIOp::create(b, loc, at.front(), cst(allocBytes));
  if (viewBytes < allocBytes)
    physical = arith::AddIOp::create(b, loc, physical,
                                     arith::RemUIOp::create(b, loc, bytes, cst(allocBytes)));
  return {memref, SmallVector<Value>{arith::DivUIOp::create(b, loc, physical, cst(viewBytes))}};
}

std::pair<Value, SmallVector<Value>>
mlir::tile::sharedAddress(OpBuilder &b, Location loc, const SharedBuffer *shared,
                          Value buffer, ValueRange indices) {
  if (!shared)
    return {buffer, SmallVector<Value>(indices)};
  if (shared->allocType)
    return viewAddress(b, loc, *shared, buffer, indices);
  // Linearize, swizzle the byte offset, and address the flat view.
  MemRefType type = shared->type;
  SwizzleAttr swizzle = shared->layout.getSwizzle();
  if (swizzle && !swizzle.getBits())
    swizzle = SwizzleAttr(); // the identity
  Value base = shared->base;
  int64_t elemBytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  // An offset that is a multiple of the swizzle's period leaves the bits the
  // swizzle reads alone: swizzle(o + e) = o + swizzle(e). Such offsets are
  // added after the swizzle: a stage base, so swizzle(e) can be hoisted out
  // of the loop, and constant parts of the indices (a thread's rows k, k+32,
  // ...), so they become immediate offsets from one base address.
  int64_t period = swizzle ? int64_t(1) << (swizzle.getBase() + swizzle.getShift() +
                                            swizzle.getBits())
                           : 1;
  // Column blocks: element (r, c) of an R x C buffer sits at
  // ((c / B) * R + r) * B + c % B. Constant row parts move by B per row;
  // constant column parts only when whole blocks (R * B per block).
  int64_t block = shared->layout.getColumnBlock();
  int64_t rows = block ? type.getDimSize(0) : 0;
  SmallVector<Value> dynamic;
  int64_t constant = 0, stride = type.getNumElements();
  for (auto [dim, index, size] : llvm::enumerate(indices, type.getShape())) {
    stride /= size;
    int64_t step = stride;
    SmallVector<Value> terms;
    int64_t c = splitConstant(index, terms);
    if (block) {
      step = dim == 0 ? block : rows;
      if (dim == 1 && c % block != 0)
        c = 0; // a partial block: keep it in the index
    }
    if (c == 0 || c * step * elemBytes % period != 0 || terms.size() > 2) {
      dynamic.push_back(index);
      continue;
    }
    constant += c * step;
    Value rest = terms.empty() ? arith::ConstantIndexOp::create(b, loc, 0) : terms[0];
    if (terms.size() == 2)
      rest = arith::AddIOp::create(b, loc, terms[0], terms[1]);
    dynamic.push_back(rest);
  }
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value flat = cst(0);
  if (block) {
    Value col = dynamic[1];
    flat = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc,
            arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, col, cst(block)),
                                              cst(rows)),
                dynamic[0]),
            cst(block)),
        arith::RemUIOp::create(b, loc, col, cst(block)));
  } else {
    for (auto [index, size] : llvm::zip(dynamic, type.getShape()))
      flat = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, flat, cst(size)), index);
  }
  bool baseLast = !base || type.getNumElements() * elemBytes % period == 0;
  if (base && !baseLast)
    flat = arith::AddIOp::create(b, loc, base, flat);
  if (swizzle) {
    Value bytes = arith::MulIOp::create(b, loc, flat, cst(elemBytes));
    Value bits = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, bytes, cst(swizzle.getShift())),
        cst(((int64_t(1) << swizzle.getBits()) - 1) << swizzle.getBase()));
    Value swizzled = arith::XOrIOp::create(b, loc, bytes, bits);
    flat = arith::DivUIOp::create(b, loc, swizzled, cst(elemBytes));
  }
  if (base && baseLast)
    flat = arith::AddIOp::create(b, loc, flat, base);
  if (constant)
    flat = arith::AddIOp::create(b, loc, flat,
                                 arith::ConstantIndexOp::create(b, loc, constant));
  return {shared->flat, SmallVector<Value>{flat}};
}

Value mlir::tile::loadElements(OpBuilder &b, Location loc, const TileSide &side,
                               ValueRange indices, int64_t width) {
  MemRefType type = side.type;
  Type elem = type.getElementType();
  auto vecType = VectorType::get({width}, elem);
  int64_t bytes = width * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  auto vectorLoad = [&](OpBuilder &ob, Location l) -> Value {
    if (side.place == Place::Shared) {
      auto [memref, at] = sharedAddress(ob, l, side.sharedPtr(), side.buffer, indices);
      return vector::LoadOp::create(ob, l, vecType, memref, at,
                                    /*nontemporal=*/false, llvm::Align(bytes));
    }
    return vector::LoadOp::create(ob, l, vecType, side.buffer, indices,
                                  /*nontemporal=*/false, llvm::Align(bytes));
  };
  if (side.place != Place::Global)
    return vectorLoad(b, loc);

  GlobalGuard guard = guardGlobal(b, loc, side.buffer, indices, width);
  Value zero = arith::ConstantOp::create(b, loc, vecType, b.getZeroAttr(vecType));
  auto ifOp = scf::IfOp::create(
      b, loc, guard.whole,
      [&](OpBuilder &ob, Location l) {
        scf::YieldOp::create(ob, l, vectorLoad(ob, l));
      },
      [&](OpBuilder &ob, Location l) {
        if (!guard.partial) {
          scf::YieldOp::create(ob, l, zero);
          return;
        }
        Value vec = zero;
        Value scalarZero =
            arith::ConstantOp::create(ob, l, elem, ob.getZeroAttr(elem));
        for (int64_t e = 0; e < width; ++e) {
          SmallVector<Value> at = shifted(ob, l, indices, e);
          Value ok = elementInside(ob, l, side.buffer, guard, at);
          auto one = scf::IfOp::create(
              ob, l, ok,
              [&](OpBuilder &ib, Location il) {
                scf::YieldOp::create(
                    ib, il, memref::LoadOp::create(ib, il, side.buffer, at).getResult());
              },
              [&](OpBuilder &ib, Location il) {
                scf::YieldOp::create(ib, il, scalarZero);
              });
          vec = vector::InsertOp::create(ob, l, one.getResult(0), vec, e);
        }
        scf::YieldOp::create(ob, l, vec);
      });
  return ifOp.getResult(0);
}

void mlir::tile::storeElements(OpBuilder &b, Location loc, const TileSide &side,
                               ValueRange indices, Value value, int64_t width) {
  MemRefType type = side.type;
  int64_t bytes = width * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  auto vectorStore = [&](OpBuilder &ob, Location l) {
    if (side.place == Place::Shared) {
      auto [memref, at] = sharedAddress(ob, l, side.sharedPtr(), side.buffer, indices);
      vector::StoreOp::create(ob, l, value, memref, at, /*nontemporal=*/false,
                              llvm::Align(bytes));
      return;
    }
    vector::StoreOp::create(ob, l, value, side.buffer, indices,
                            /*nontemporal=*/false, llvm::Align(bytes));
  };
  if (side.place != Place::Global) {
    vectorStore(b, loc);
    return;
  }
  GlobalGuard guard = guardGlobal(b, loc, side.buffer, indices, width);
  auto ifOp = scf::IfOp::create(b, loc, guard.whole, /*withElseRegion=*/guard.partial);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    vectorStore(b, loc);
    if (!guard.partial)
      return;
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    for (int64_t e = 0; e < width; ++e) {
      SmallVector<Value> at = shifted(b, loc, indices, e);
      Value ok = elementInside(b, loc, side.buffer, guard, at);
      auto one = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(one.thenBlock()->getTerminator());
      Value element = vector::ExtractOp::create(b, loc, value, e);
      memref::StoreOp::create(b, loc, element, side.buffer, at);
    }
  }
}

void mlir::tile::asyncCopyElements(OpBuilder &b, Location loc, const TileSide &from,
                                   ValueRange fromIdx, const TileSide &to,
                                   ValueRange toIdx, int64_t width, Value pred) {
  MemRefType type = from.type;
  int64_t bytes = width * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  auto syncCopy = [&](OpBuilder &ob, Location l) {
    Value v = loadElements(ob, l, from, fromIdx, width);
    if (pred) // reads stay inside the tensor either way; keep zeros where off
      v = arith::SelectOp::create(ob, l, pred, v,
                                  arith::ConstantOp::create(ob, l, ob.getZeroAttr(v.getType())));
    storeElements(ob, l, to, toIdx, v, width);
  };
  if (bytes != 4 && bytes != 8 && bytes != 16) { // cp.async moves 4, 8 or 16 bytes
    syncCopy(b, loc);
    return;
  }
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  int64_t last = type.getRank() - 1;
  SmallVector<Value> inside = leadingInside(b, loc, from.buffer, fromIdx);
  if (pred)
    inside.push_back(pred);
  Value size = dimSize(b, loc, from.buffer, last);
  Value col = fromIdx.back();
  // Elements of this vector inside the tensor: min(size - col, width), or 0.
  Value colInside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, size);
  inside.push_back(colInside);
  Value any = andAll(b, loc, inside);
  Value left = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, size, arith::MinUIOp::create(b, loc, col, size)),
      cst(width));
  Value count = arith::SelectOp::create(b, loc, any, left, cst(0));
  // cp.async reads only `count` bytes, none for an empty copy, so its source
  // address may lie outside the tensor; not clamping it lets the addresses
  // of a thread's vectors share one base and constant offsets.
  SmallVector<Value> src(fromIdx);
  auto [dst, dstIdx] = sharedAddress(b, loc, to.sharedPtr(), to.buffer, toIdx);
  auto issue = [&](OpBuilder &ob, Location l) {
    nvgpu::DeviceAsyncCopyOp::create(ob, l, dst, dstIdx, from.buffer, src,
                                     ob.getIndexAttr(width), count,
                                     bytes == 16 ? ob.getUnitAttr() : UnitAttr());
  };
  if (!type.isDynamicDim(last) || last == 0 || width == 1) {
    issue(b, loc);
    return;
  }
  // A dynamic row length may leave rows misaligned for the vector.
  Value aligned = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, arith::RemUIOp::create(b, loc, size, cst(width)),
      cst(0));
  scf::IfOp::create(
      b, loc, aligned,
      [&](OpBuilder &ob, Location l) {
        issue(ob, l);
        scf::YieldOp::create(ob, l);
      },
      [&](OpBuilder &ob, Location l) {
        syncCopy(ob, l);
        scf::YieldOp::create(ob, l);
      });
}

Value mlir::tile::convertElements(OpBuilder &b, Location loc, Value value,
                                  Type toElement) {
  Type from = value.getType();
  Type fromElement = getElementTypeOrSelf(from);
  if (fromElement == toElement)
    return value;
  Type to = toElement;
  if (auto vec = dyn_cast<VectorType>(from))
    to = vec.clone(toElement);
  bool fromFloat = isa<FloatType>(fromElement), toFloat = isa<FloatType>(toElement);
  unsigned fromBits = fromElement.getIntOrFloatBitWidth();
  unsigned toBits = toElement.getIntOrFloatBitWidth();
  if (fromFloat && toFloat)
    return fromBits < toBits ? (Value)arith::ExtFOp::create(b, loc, to, value)
                             : (Value)arith::TruncFOp::create(b, loc, to, value);
  if (fromFloat)
    return arith::FPToSIOp::create(b, loc, to, value);
  if (toFloat)
    return arith::SIToFPOp::create(b, loc, to, value);
  return fromBits < toBits ? (Value)arith::ExtSIOp::create(b, loc, to, value)
                           : (Value)arith::TruncIOp::create(b, loc, to, value);
}

/// Rounds of forEachVector emitted without a loop.
static constexpr int64_t kMaxUnrolledRounds = 16;

void mlir::tile::forEachVector(OpBuilder &b, Location loc, Value tid, int64_t threads,
                               ArrayRef<int64_t> shape, int64_t width,
                               function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  OpBuilder::InsertionGuard guard(b);
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  int64_t count = numel / width;
  int64_t step = tid ? threads : 1;
  int64_t inner = numel / shape.front(); // elements per row of the first dim
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  // Rounds of whole rows: the thread's own indices, then a constant per round.
  SmallVector<Value> base;
  if (tid && (step * width) % inner == 0)
    base = delinearize(b, loc, arith::MulIOp::create(b, loc, tid, cst(width)), shape);
  int64_t rounds = llvm::divideCeil(count, step);
  if (!base.empty() && rounds <= kMaxUnrolledRounds) {
    // Straight-line rounds: the first index is the thread's plus a constant.
    for (int64_t r = 0; r < rounds; ++r) {
      OpBuilder::InsertionGuard roundGuard(b);
      if ((r + 1) * step > count) { // the last round covers part of the tile
        Value inside = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::ult,
            arith::AddIOp::create(b, loc, tid, cst(r * step)), cst(count));
        auto ifOp = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
        b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      }
      SmallVector<Value> index = base;
      if (r)
        index.front() = arith::AddIOp::create(b, loc, base.front(),
                                              cst(r * step * width / inner));
      body(b, loc, index);
    }
    return;
  }
  auto loop = scf::ForOp::create(b, loc, cst(0), cst(llvm::divideCeil(count, step)), cst(1));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value round = loop.getInductionVar();
  Value item = round;
  if (tid)
    item = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, round, cst(threads)),
                                 tid);
  if (count % step != 0) {
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, item, cst(count));
    auto ifOp = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  SmallVector<Value> index;
  if (!base.empty()) {
    index = base;
    index.front() = arith::AddIOp::create(
        b, loc, base.front(),
        arith::MulIOp::create(b, loc, round, cst(step * width / inner)));
  } else {
    index = delinearize(b, loc, arith::MulIOp::create(b, loc, item, cst(width)), shape);
  }
  body(b, loc, index);
}

SmallVector<Value> mlir::tile::delinearize(OpBuilder &b, Location loc, Value flat,
                                           ArrayRef<int64_t> shape) {
  SmallVector<Value> indices;
  int64_t stride = 1;
  for (int64_t d : shape)
    stride *= d;
  for (auto [k, d] : llvm::enumerate(shape)) {
    stride /= d;
    AffineExpr s0 = b.getAffineDimExpr(0);
    AffineExpr expr = s0.floorDiv(stride);
    if (k != 0)
      expr = expr % d;
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, expr), ValueRange{flat}));
  }
  return indices;
}

SmallVector<Value> mlir::tile::applyLayout(OpBuilder &b, Location loc,
                                           LayoutAttr layout, Value thread,
                                           int64_t reg) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> indices;
  for (AffineExpr expr : layout.getMap().getResults()) {
    AffineExpr onThread = simplifyAffineExpr(
        expr.replaceDims({getAffineDimExpr(0, ctx), getAffineConstantExpr(reg, ctx)}),
        1, 0);
    if (auto constant = dyn_cast<AffineConstantExpr>(onThread)) {
      indices.push_back(arith::ConstantIndexOp::create(b, loc, constant.getValue()));
      continue;
    }
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, onThread), ValueRange{thread}));
  }
  return indices;
}

std::optional<SharedBuffer> mlir::tile::sharedBufferOf(Value original, Value converted) {
  AllocSharedOp alloc = sharedAllocation(original);
  if (!alloc)
    return std::nullopt;
  SharedLayoutAttr layout = sharedLayout(alloc);
  if (layout.isPlain())
    return std::nullopt;
  SharedBuffer buffer{cast<MemRefType>(original.getType()), layout.withStages(0), converted,
                      Value(), MemRefType()};
  if (original.getDefiningOp<ViewOp>())
    buffer.allocType = alloc.getType();
  // One stage: a subview of the allocation's flat view from its first element.
  if (auto stage = converted.getDefiningOp<memref::SubViewOp>()) {
    buffer.flat = stage.getSource();
    buffer.base = stage.getOffsets().front();
  }
  return buffer;
}

std::optional<Fragment> mlir::tile::fragmentOf(Value original, Value regs) {
  std::optional<LayoutAttr> layout = fragmentLayout(original);
  if (!layout)
    return std::nullopt;
  return Fragment{regs, *layout};
}

bool mlir::tile::holdsWholeTile(LayoutAttr layout, ArrayRef<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  if (layout.getRegs() != numel || (int64_t)layout.getRank() != (int64_t)shape.size())
    return false;
  LayoutEvaluator eval(layout);
  SmallVector<int64_t> index;
  for (int64_t t = 0; t < layout.getThreads(); ++t)
    for (int64_t r = 0; r < numel; ++r) {
      eval.apply(t, r, index);
      int64_t flat = 0;
      for (auto [i, d] : llvm::zip(index, shape))
        flat = flat * d + i;
      if (flat != r)
        return false;
    }
  return true;
}

PrivateAccess mlir::tile::privateAccess(Operation *access) {
  auto load = dyn_cast<memref::LoadOp>(access);
  Value memref = load ? load.getMemRef() : cast<memref::StoreOp>(access).getMemRef();
  AllocFragmentOp alloc = fragmentRoot(memref);
  if (!alloc)
    return PrivateAccess::Layout;
  if (alloc->hasAttr(kReducerAttr))
    return PrivateAccess::Partials;
  std::optional<LayoutAttr> layout = fragmentLayout(memref);
  if (!load || !layout ||
      !holdsWholeTile(*layout, cast<MemRefType>(memref.getType()).getShape()))
    return PrivateAccess::Layout;
  return PrivateAccess::WholeTile;
}

Value mlir::tile::ownRegister(OpBuilder &b, Location loc, Value fragment,
                              ValueRange indices) {
  ArrayRef<int64_t> shape = cast<MemRefType>(fragment.getType()).getShape();
  if (fragmentRoot(fragment)->hasAttr(kReducerAttr)) {
    shape = shape.drop_front();
    indices = indices.drop_front();
  }
  IndexBuilder ib{b, loc};
  Value flat = ib.c(0);
  for (auto [i, d] : llvm::zip(indices, shape))
    flat = ib.add(ib.mul(flat, d), i);
  return flat;
}

TileSide mlir::tile::makeSide(Value original, Value converted, ValueRange offsets,
                              ArrayRef<int64_t> sizes) {
  auto type = cast<MemRefType>(original.getType());
  // A local buffer is indexed as the plain array it became (masked like a
  // tensor); shared and fragment sides keep their place.
  Place place = getPlace(type) == Place::Local ? getPlace(cast<MemRefType>(converted.getType()))
                                               : getPlace(type);
  TileSide side{converted, type, place, SmallVector<Value>(offsets),
                SmallVector<int64_t>(sizes), sharedBufferOf(original, converted), LayoutAttr()};
  if (std::optional<Fragment> f = fragmentOf(original, converted))
    side.fragmentLayout = f->layout;
  return side;
}
