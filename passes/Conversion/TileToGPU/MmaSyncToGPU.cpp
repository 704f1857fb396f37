//===- MmaSyncToGPU.cpp - tile.gemm -> ldmatrix + mma.sync ----------------===//
//
// Each warp computes its sub-tile of C (see Mma.h) as a grid of m16n8k16
// atoms (m16n8k8 for f32 operands, as tf32): per 16-deep (8-deep) slice of K
// it loads its A rows with ldmatrix.x4 (one per 16-row atom) and its B
// columns with ldmatrix.x4/x2 (two or one 8-column atoms), then issues one
// mma.sync per (row atom, column atom). An ldmatrix row is 16 bytes: 8 f16 or
// 4 f32, each lane receiving 32 bits of a matrix, which for f32 is one element
// of the tf32 fragments. Operands ldmatrix cannot transpose, at 32 or 8 bits
// (tf32 or int8 A stored K x M, B stored K x N), are loaded element by
// element (int8: m16n8k32, four bytes to a register). f16 and tf32
// go through nvgpu.mma.sync; bf16, which nvgpu's lowering does not type,
// through nvvm.mma.sync on the same registers.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"
#include "dialects/tile/Layout.h"
#include "passes/Target/Mma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// A gemm operand in shared memory, as converted.
struct SharedOperand {
  Value buffer;                       ///< the converted buffer
  std::optional<SharedBuffer> shared; ///< its addressing, unless plain
  Type elem;
};

SharedOperand sharedOperand(Value original, Value converted) {
  return {converted, sharedBufferOf(original, converted),
          cast<MemRefType>(original.getType()).getElementType()};
}

/// One ldmatrix of `tiles` 8x8 matrices; each lane gives the address of one
/// row (element [row, col] of the shared buffer).
Value ldmatrix(OpBuilder &b, Location loc, const SharedOperand &operand, Value row, Value col,
               int64_t tiles, bool transpose) {
  auto type = VectorType::get({tiles, 32 / operand.elem.getIntOrFloatBitWidth()}, operand.elem);
  auto [memref, at] =
      sharedAddress(b, loc, operand.shared ? &*operand.shared : nullptr, operand.buffer,
                    ValueRange{row, col});
  return nvgpu::LdMatrixOp::create(b, loc, type, memref, at, transpose, tiles);
}

/// Row `i` of a vector<Nx2xT>, as the i32 register that holds it.
Value packedRow(OpBuilder &b, Location loc, Value v, int64_t i) {
  Value row = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i});
  auto i32 = VectorType::get({1}, b.getI32Type());
  Value bits = vector::BitCastOp::create(b, loc, i32, row);
  return vector::ExtractOp::create(b, loc, bits, ArrayRef<int64_t>{0});
}

/// A 2-d vector from scalars, built with inserts (n-d vector.from_elements
/// has no direct LLVM lowering).
Value fromScalars(OpBuilder &b, Location loc, VectorType type, ArrayRef<Value> scalars) {
  Value v = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  int64_t cols = type.getDimSize(1);
  for (auto [i, s] : llvm::enumerate(scalars))
    v = vector::InsertOp::create(b, loc, s, v,
                                 ArrayRef<int64_t>{int64_t(i) / cols, int64_t(i) % cols});
  return v;
}

/// Rows [first, first + 2) of a vector<4xNxT> as a vector<2xNxT>.
Value twoRows(OpBuilder &b, Location loc, Value v, int64_t first) {
  auto src = cast<VectorType>(v.getType());
  auto type = VectorType::get({2, src.getDimSize(1)}, src.getElementType());
  Value out = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  for (int64_t i = 0; i < 2; ++i)
    out = vector::InsertOp::create(
        b, loc, vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{first + i}), out,
        ArrayRef<int64_t>{i});
  return out;
}

/// acc += a x b for one m16n8k16 atom (m16n8k8 tf32 for f32 operands).
Value mma(OpBuilder &b, Location loc, Value a, Value bFrag, Value acc) {
  Type elem = cast<VectorType>(a.getType()).getElementType();
  if (elem.isF16())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, acc,
                                    b.getI64ArrayAttr({kMmaM, kMmaN, kMmaK}));
  if (elem.isF32())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, acc,
                                    ArrayRef<int64_t>{kMmaM, kMmaN, mmaSyncK(elem)},
                                    /*tf32Enabled=*/true);
  if (elem.isInteger(8)) // s8 x s8 -> s32, m16n8k32
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, acc,
                                    b.getI64ArrayAttr({kMmaM, kMmaN, mmaSyncK(elem)}));
  // bf16: nvvm.mma.sync on the packed registers.
  auto accType = cast<VectorType>(acc.getType());
  Type f32 = accType.getElementType();
  SmallVector<Value> aRegs, bRegs, cRegs;
  for (int64_t i = 0; i < 4; ++i)
    aRegs.push_back(packedRow(b, loc, a, i));
  for (int64_t i = 0; i < 2; ++i)
    bRegs.push_back(packedRow(b, loc, bFrag, i));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      cRegs.push_back(vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{i, j}));
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, aRegs, bRegs, cRegs, ArrayRef<int64_t>{kMmaM, kMmaN, kMmaK},
      std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, op.getResult(), i));
  return fromScalars(b, loc, accType, out);
}

/// Where a lane's warp sits in the block's output tile, and the lane
/// quantities the ldmatrix addresses use.
struct Lanes {
  Value lane, rowBase, colBase, lane8, lane16, quad;
};

Lanes lanesOf(IndexBuilder &ib, Value tid, const WarpPartition &p) {
  Value warp = ib.div(tid, 32), lane = ib.rem(tid, 32);
  return {lane,
          ib.mul(ib.div(warp, p.warpsN), p.tileM),
          ib.mul(ib.rem(warp, p.warpsN), p.tileN),
          ib.rem(lane, 8),
          ib.rem(lane, 16),
          ib.div(lane, 8)}; // which 8x8 matrix a lane addresses (x4)
}

/// One K slice of a warp's operands (16 deep, 8 for tf32): per row atom a
/// vector<4xNxT> (A), per column atom a vector<2xNxT> (B), N = 32 bits / T.
struct Slice {
  SmallVector<Value> a, b;
};

/// Loads the K slice at `k0` of the operands `A` and `B` (shared buffers, or
/// A from the registers `aRegs`).
Slice loadSlice(IndexBuilder &ib, GemmOp op, const WarpPartition &p, const Lanes &l,
                const SharedOperand &A, const SharedOperand &B, Value aRegs, int64_t k,
                int64_t k0) {
  OpBuilder &b = ib.b;
  Location loc = ib.loc;
  Type in = op.getA().getType().getElementType();
  int64_t atomK = mmaSyncK(in);
  int64_t cols = 32 / in.getIntOrFloatBitWidth(); // elements a lane gets of a matrix
  int64_t half = 4 * cols;                         // elements in an ldmatrix row (16 bytes)
  bool tf32 = in.isF32(), int8 = in.isInteger(8);
  Value g = ib.div(l.lane, 4), q = ib.rem(l.lane, 4);
  // Operands ldmatrix cannot transpose (32- and 8-bit elements stored
  // M-/N-major): each lane's elements, one load each, `per` to a register.
  auto elements = [&](const SharedOperand &operand, int64_t regs, int64_t per,
                      function_ref<std::pair<Value, Value>(int64_t)> at) {
    SmallVector<Value> values;
    for (int64_t e = 0; e < regs * per; ++e) {
      auto [row, col] = at(e);
      auto [memref, idx] = sharedAddress(b, loc, operand.shared ? &*operand.shared : nullptr,
                                         operand.buffer, ValueRange{row, col});
      values.push_back(memref::LoadOp::create(b, loc, memref, idx));
    }
    return fromScalars(b, loc, VectorType::get({regs, per}, in), values);
  };
  Value q4 = ib.mul(q, 4);
  Slice s;
  for (int64_t i = 0; i < p.atomsM(); ++i) {
    if (aRegs) { // the 4 x cols registers of atom (i, k0 / atomK)
      int64_t perAtom = 4 * cols;
      int64_t first = (i * (k / atomK) + k0 / atomK) * perAtom;
      SmallVector<Value> values;
      for (int64_t e = 0; e < perAtom; ++e)
        values.push_back(memref::LoadOp::create(b, loc, aRegs, ValueRange{ib.c(first + e)}));
      s.a.push_back(fromScalars(b, loc, VectorType::get({4, cols}, in), values));
      continue;
    }
    Value m0 = ib.add(l.rowBase, i * kMmaM);
    if (!op.getTransposeA()) // A[M, K]: lanes 0-15 rows at k0, 16-31 at k0 + half
      s.a.push_back(ldmatrix(b, loc, A, ib.add(m0, l.lane16),
                             ib.add(ib.mul(ib.div(l.lane, 16), half), k0), 4, false));
    else if (tf32) // A[K, M]: a_e at (m g + 8 (e % 2), k q + 4 (e / 2))
      s.a.push_back(elements(A, 4, 1, [&](int64_t e) {
        return std::pair{ib.add(ib.add(q, k0), (e / 2) * 4), ib.add(ib.add(m0, g), (e % 2) * 8)};
      }));
    else if (int8) // A[K, M]: byte e of a_r at (m g + 8 (r % 2), k 4q + e + 16 (r / 2))
      s.a.push_back(elements(A, 4, 4, [&](int64_t i) {
        int64_t r = i / 4, e = i % 4;
        return std::pair{ib.add(ib.add(q4, k0), e + 16 * (r / 2)),
                         ib.add(ib.add(m0, g), (r % 2) * 8)};
      }));
    else // A[K, M]: transposed 8x8 loads, rows are k
      s.a.push_back(ldmatrix(b, loc, A,
                             ib.add(ib.add(ib.mul(ib.div(l.quad, 2), 8), l.lane8), k0),
                             ib.add(m0, ib.mul(ib.rem(l.quad, 2), 8)), 4, true));
  }
  for (int64_t j = 0; j < p.atomsN();) {
    bool pair = j + 1 < p.atomsN() && !((tf32 || int8) && !op.getTransposeB());
    Value n0 = ib.add(l.colBase, j * kMmaN);
    Value frag;
    if (tf32 && !op.getTransposeB()) // B[K, N]: b_e at (k q + 4 e, n g)
      frag = elements(B, 2, 1, [&](int64_t e) {
        return std::pair{ib.add(ib.add(q, k0), e * 4), ib.add(n0, g)};
      });
    else if (int8 && !op.getTransposeB()) // B[K, N]: byte e of b_r at (k 4q + e + 16 r, n g)
      frag = elements(B, 2, 4, [&](int64_t i) {
        return std::pair{ib.add(ib.add(q4, k0), i % 4 + 16 * (i / 4)), ib.add(n0, g)};
      });
    else if (!op.getTransposeB()) // B[K, N]: transposed loads, rows are k
      frag = ldmatrix(b, loc, B, ib.add(l.lane16, k0),
                      pair ? ib.add(n0, ib.mul(ib.div(l.lane, 16), 8)) : n0,
                      pair ? 4 : 2, true);
    else // B[N, K]: rows are n
      frag = ldmatrix(b, loc, B,
                      pair ? ib.add(n0, ib.add(ib.mul(ib.div(l.quad, 2), 8), l.lane8))
                           : ib.add(n0, l.lane8),
                      ib.add(ib.mul(ib.rem(l.quad, 2), half), k0), pair ? 4 : 2, false);
    for (int64_t h = 0; h < (pair ? 2 : 1); ++h)
      s.b.push_back(pair ? twoRows(b, loc, frag, 2 * h) : frag);
    j += pair ? 2 : 1;
  }
  return s;
}

/// Keeps a slice in `mem` (a 1-d register array of the element type) across
/// the loop's back edge, a 32-bit row at a time; LLVM promotes it to
/// registers.
void saveSlice(IndexBuilder &ib, const Slice &s, Value mem) {
  int64_t at = 0;
  for (Value v : llvm::concat<const Value>(s.a, s.b))
    for (int64_t r = 0, cols = cast<VectorType>(v.getType()).getDimSize(1);
         r < cast<VectorType>(v.getType()).getDimSize(0); ++r, at += cols)
      vector::StoreOp::create(ib.b, ib.loc,
                              vector::ExtractOp::create(ib.b, ib.loc, v, ArrayRef<int64_t>{r}),
                              mem, ValueRange{ib.c(at)});
}

Slice restoreSlice(IndexBuilder &ib, const WarpPartition &p, Type elem, Value mem) {
  Slice s;
  int64_t at = 0, cols = 32 / elem.getIntOrFloatBitWidth();
  auto get = [&](int64_t rows) {
    auto type = VectorType::get({rows, cols}, elem);
    Value v = arith::ConstantOp::create(ib.b, ib.loc, type, ib.b.getZeroAttr(type));
    for (int64_t r = 0; r < rows; ++r, at += cols) {
      Value row = vector::LoadOp::create(ib.b, ib.loc, VectorType::get({cols}, elem), mem,
                                         ValueRange{ib.c(at)});
      v = vector::InsertOp::create(ib.b, ib.loc, row, v, ArrayRef<int64_t>{r});
    }
    return v;
  };
  for (int64_t i = 0; i < p.atomsM(); ++i)
    s.a.push_back(get(4));
  for (int64_t j = 0; j < p.atomsN(); ++j)
    s.b.push_back(get(2));
  return s;
}

/// A prefetching gemm's schedule (tile.gemm's `prefetch`): its loop, the
/// stages it reads ahead as converted, and the cp.async wait count.
struct Prefetch {
  Operation *loop;
  SharedOperand firstA, firstB, nextA, nextB;
  int32_t pending;
};

/// Emits `op` before it: each warp loads its A and B sub-tiles from shared
/// memory with ldmatrix and accumulates with mma.sync m16n8k16 into the
/// registers `accRegs` of the C fragment (laid out as `accLayout`). When A is
/// a fragment, its registers `aRegs` (laid out as `aLayout`) are the operand.
/// With `prefetch`, operands are loaded one K slice ahead across iterations.
LogicalResult lowerGemm(ConversionPatternRewriter &b, GemmOp op, const SharedOperand &A,
                        const SharedOperand &B, Value tid, int64_t threads, Value accRegs,
                        LayoutAttr accLayout, Value aRegs, LayoutAttr aLayout,
                        const Prefetch *prefetch) {
  FailureOr<WarpPartition> part = selectedPartition(op);
  if (failed(part))
    return failure();
  if (!equivalentLayouts(accLayout, getAccumulatorLayout(op.getContext(), *part, threads)))
    return op.emitOpError("C's layout is not the tensor-core accumulator "
                          "layout; converting layouts is not supported yet");
  MemRefType aType = op.getA().getType(), bType = op.getB().getType();
  bool aInRegisters = getPlace(aType) == Place::Fragment;
  if (aInRegisters &&
      (!aRegs ||
       !equivalentLayouts(aLayout, getOperandALayout(op.getContext(), *part, aType.getDimSize(1),
                                                     threads, aType.getElementTypeBitWidth()))))
    return op.emitOpError("A in registers must be in the tensor-core operand "
                          "layout; converting layouts is not supported yet");
  Type in = aType.getElementType();
  Type accElem = op.getC().getType().getElementType();
  if (isWgmmaFp8(in))
    return op.emitOpError("fp8 gemms run on sm_90a's wgmma only: both operands in shared "
                          "memory, K tiles of 32, 64 or a multiple of 128, an f32 accumulator, M a "
                          "multiple of 64");
  bool int8 = in.isInteger(8);
  if (!(in.isF16() || in.isBF16() || in.isF32() || int8) ||
      op.getB().getType().getElementType() != in ||
      !(int8 ? accElem.isInteger(32) : accElem.isF32() || (in.isF16() && accElem.isF16())))
    return op.emitOpError("this version of tlc lowers f16 x f16 -> f32|f16, "
                          "bf16 x bf16 -> f32, f32 x f32 -> f32 (tf32), int8 x int8 -> int32 "
                          "and (on sm_90a) fp8 -> f32 gemms, got ")
           << in << " x " << op.getB().getType().getElementType() << " -> " << accElem;
  int64_t atomK = mmaSyncK(in);
  int64_t k = op.getTransposeA() ? aType.getDimSize(0) : aType.getDimSize(1);
  if (k % atomK != 0)
    return op.emitOpError("K = ") << k << " must be a multiple of " << atomK << " for m16n8k"
                                  << atomK << " tensor-core atoms";
  // ldmatrix reads 16-byte rows: every row of A and B starts 16-byte aligned.
  for (MemRefType t : {aType, bType})
    if (getPlace(t) == Place::Shared &&
        t.getDimSize(1) * t.getElementTypeBitWidth() / 8 % 16 != 0)
      return op.emitOpError("rows of a ")
             << t << " operand are not a multiple of 16 bytes, which ldmatrix needs";

  Location loc = op.getLoc();
  IndexBuilder ib{b, loc};
  const WarpPartition &p = *part;
  Lanes lanes = lanesOf(ib, tid, p);
  Value aFrom = aInRegisters ? aRegs : Value();

  // With prefetch: a register array carries the next slice over the back
  // edge, filled first before the loop (after the pipeliner's wait and
  // barrier there).
  Value carried;
  if (prefetch) {
    OpBuilder::InsertionGuard guard(b);
    Block &entry = op->getParentOfType<FunctionOpInterface>().getFunctionBody().front();
    b.setInsertionPointToStart(&entry);
    int64_t n = (p.atomsM() * 4 + p.atomsN() * 2) * (32 / in.getIntOrFloatBitWidth());
    carried = memref::AllocaOp::create(b, loc, MemRefType::get({n}, in));
    b.setInsertionPoint(prefetch->loop);
    IndexBuilder pib{b, loc};
    saveSlice(pib, loadSlice(pib, op, p, lanesOf(pib, tid, p), prefetch->firstA,
                             prefetch->firstB, aFrom, k, 0),
              carried);
  }

  // Accumulators: four registers per atom, in the layout's order.
  auto accType = VectorType::get({2, 2}, accElem);
  int64_t atomsM = p.atomsM(), atomsN = p.atomsN();
  SmallVector<Value> acc;
  for (int64_t i = 0; i < atomsM * atomsN; ++i) {
    if (op.getClearAccum()) {
      acc.push_back(arith::ConstantOp::create(b, loc, accType, b.getZeroAttr(accType)));
      continue;
    }
    SmallVector<Value> regs;
    for (int64_t r = 0; r < 4; ++r)
      regs.push_back(memref::LoadOp::create(b, loc, accRegs, ValueRange{ib.c(4 * i + r)}));
    acc.push_back(fromScalars(b, loc, accType, regs));
  }

  for (int64_t k0 = 0; k0 < k; k0 += atomK) {
    Slice s = prefetch && k0 == 0 ? restoreSlice(ib, p, in, carried)
                                  : loadSlice(ib, op, p, lanes, A, B, aFrom, k, k0);
    if (prefetch && k0 + atomK == k) {
      // Every read of this stage is issued: wait for the next stage, meet,
      // and fetch its first slice while this slice's mma.sync run.
      NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(prefetch->pending));
      gpu::BarrierOp::create(b, loc);
      saveSlice(ib, loadSlice(ib, op, p, lanes, prefetch->nextA, prefetch->nextB, aFrom, k, 0),
                carried);
    }
    for (int64_t i = 0; i < atomsM; ++i)
      for (int64_t j = 0; j < atomsN; ++j)
        acc[i * atomsN + j] = mma(b, loc, s.a[i], s.b[j], acc[i * atomsN + j]);
  }

  for (int64_t i = 0; i < atomsM * atomsN; ++i)
    for (int64_t r = 0; r < 4; ++r) {
      Value v = vector::ExtractOp::create(b, loc, acc[i], ArrayRef<int64_t>{r / 2, r % 2});
      memref::StoreOp::create(b, loc, v, accRegs, ValueRange{ib.c(4 * i + r)});
    }
  return success();
}

/// tile.gemm whose #tile.mma is mma.sync.
struct MmaSyncGemmLowering : TileOpLowering<GemmOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!op.getMmaAttr() || op.getMmaAttr().getKind() != MmaKind::MmaSync)
      return failure();
    FailureOr<Fragment> c = convertedFragment(op, op.getC(), adaptor.getC(), "C");
    if (failed(c))
      return failure();
    std::optional<Fragment> a = fragmentOf(op.getA(), adaptor.getA());
    std::optional<Prefetch> prefetch;
    if (!op.getPrefetch().empty()) {
      auto operand = [&](unsigned i) {
        return sharedOperand(op.getPrefetch()[i], adaptor.getPrefetch()[i]);
      };
      prefetch = Prefetch{op->getParentOp(), operand(0), operand(1), operand(2), operand(3),
                          static_cast<int32_t>(*op.getPrefetchWait())};
    }
    if (failed(lowerGemm(rewriter, op, sharedOperand(op.getA(), adaptor.getA()),
                         sharedOperand(op.getB(), adaptor.getB()), info.at(op).tid,
                         info.at(op).threads,
                         c->regs, c->layout, a ? a->regs : Value(),
                         a ? a->layout : LayoutAttr(), prefetch ? &*prefetch : nullptr)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateMmaSyncToGPUPatterns(const TypeConverter &converter,
                                              const KernelInfo &info,
                                              RewritePatternSet &patterns) {
  patterns.add<MmaSyncGemmLowering>(converter, info); // tile.gemm (mma.sync)
}
