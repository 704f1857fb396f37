//===- LowerGemm.cpp - tile.gemm -> ldmatrix + mma.sync -------------------===//
//
// Each warp computes its sub-tile of C (see Mma.h) as a grid of m16n8k16
// atoms: per 16-deep slice of K it loads its A rows with ldmatrix.x4 (one
// per 16-row atom) and its B columns with ldmatrix.x4/x2 (two or one 8-column
// atoms), then issues one mma.sync per (row atom, column atom). f16 goes
// through nvgpu.mma.sync; bf16, which nvgpu's lowering does not type, through
// nvvm.mma.sync on the same registers.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/LowerGemm.h"
#include "dialects/tile/LayoutMath.h"
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

/// One ldmatrix of `tiles` 8x8 matrices; each lane gives the address of one
/// row (element [row, col] of the shared buffer).
Value ldmatrix(OpBuilder &b, Location loc, const SharedBuffers &shared,
               Value buffer, Value row, Value col, int64_t tiles, bool transpose) {
  Type elem = cast<MemRefType>(buffer.getType()).getElementType();
  auto type = VectorType::get({tiles, 2}, elem);
  auto [memref, at] = sharedAddress(b, loc, &shared, buffer, ValueRange{row, col});
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

/// Rows [first, first + 2) of a vector<4x2xT> as a vector<2x2xT>.
Value twoRows(OpBuilder &b, Location loc, Value v, int64_t first) {
  auto src = cast<VectorType>(v.getType());
  auto type = VectorType::get({2, 2}, src.getElementType());
  Value out = arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
  for (int64_t i = 0; i < 2; ++i)
    out = vector::InsertOp::create(
        b, loc, vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{first + i}), out,
        ArrayRef<int64_t>{i});
  return out;
}

/// acc += a x b for one m16n8k16 atom.
Value mma(OpBuilder &b, Location loc, Value a, Value bFrag, Value acc) {
  Type elem = cast<VectorType>(a.getType()).getElementType();
  if (elem.isF16())
    return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, acc,
                                    b.getI64ArrayAttr({kMmaM, kMmaN, kMmaK}));
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

/// One 16-deep K slice of a warp's operands: per row atom a vector<4x2xT>
/// (A), per column atom a vector<2x2xT> (B).
struct Slice {
  SmallVector<Value> a, b;
};

/// Loads the K slice at `k0` of the operands `A` and `B` (shared buffers, or
/// A from the registers `aRegs`).
Slice loadSlice(IndexBuilder &ib, const SharedBuffers &shared, GemmOp op,
                const WarpPartition &p, const Lanes &l, Value A, Value B,
                Value aRegs, int64_t k, int64_t k0) {
  OpBuilder &b = ib.b;
  Location loc = ib.loc;
  Type in = op.getA().getType().getElementType();
  Slice s;
  for (int64_t i = 0; i < p.atomsM(); ++i) {
    if (aRegs) { // the 8 registers of atom (i, k0 / 16)
      int64_t first = (i * (k / kMmaK) + k0 / kMmaK) * 8;
      SmallVector<Value> values;
      for (int64_t e = 0; e < 8; ++e)
        values.push_back(memref::LoadOp::create(b, loc, aRegs, ValueRange{ib.c(first + e)}));
      s.a.push_back(fromScalars(b, loc, VectorType::get({4, 2}, in), values));
      continue;
    }
    Value m0 = ib.add(l.rowBase, i * kMmaM);
    if (!op.getTransposeA()) // A[M, K]: lanes 0-15 rows at k0, 16-31 at k0+8
      s.a.push_back(ldmatrix(b, loc, shared, A, ib.add(m0, l.lane16),
                             ib.add(ib.mul(ib.div(l.lane, 16), 8), k0), 4, false));
    else // A[K, M]: transposed 8x8 loads, rows are k
      s.a.push_back(ldmatrix(b, loc, shared, A,
                             ib.add(ib.add(ib.mul(ib.div(l.quad, 2), 8), l.lane8), k0),
                             ib.add(m0, ib.mul(ib.rem(l.quad, 2), 8)), 4, true));
  }
  for (int64_t j = 0; j < p.atomsN();) {
    bool pair = j + 1 < p.atomsN();
    Value n0 = ib.add(l.colBase, j * kMmaN);
    Value frag;
    if (!op.getTransposeB()) // B[K, N]: transposed loads, rows are k
      frag = ldmatrix(b, loc, shared, B, ib.add(l.lane16, k0),
                      pair ? ib.add(n0, ib.mul(ib.div(l.lane, 16), 8)) : n0,
                      pair ? 4 : 2, true);
    else // B[N, K]: rows are n
      frag = ldmatrix(b, loc, shared, B,
                      pair ? ib.add(n0, ib.add(ib.mul(ib.div(l.quad, 2), 8), l.lane8))
                           : ib.add(n0, l.lane8),
                      ib.add(ib.mul(ib.rem(l.quad, 2), 8), k0), pair ? 4 : 2, false);
    for (int64_t h = 0; h < (pair ? 2 : 1); ++h)
      s.b.push_back(pair ? twoRows(b, loc, frag, 2 * h) : frag);
    j += pair ? 2 : 1;
  }
  return s;
}

/// Keeps a slice in `mem` (a 1-d register array of the element type) across
/// the loop's back edge, a 2-element row at a time; LLVM promotes it to
/// registers.
void saveSlice(IndexBuilder &ib, const Slice &s, Value mem) {
  int64_t at = 0;
  for (Value v : llvm::concat<const Value>(s.a, s.b))
    for (int64_t r = 0; r < cast<VectorType>(v.getType()).getDimSize(0); ++r, at += 2)
      vector::StoreOp::create(ib.b, ib.loc,
                              vector::ExtractOp::create(ib.b, ib.loc, v, ArrayRef<int64_t>{r}),
                              mem, ValueRange{ib.c(at)});
}

Slice restoreSlice(IndexBuilder &ib, const WarpPartition &p, Type elem, Value mem) {
  Slice s;
  int64_t at = 0;
  auto get = [&](int64_t rows) {
    auto type = VectorType::get({rows, 2}, elem);
    Value v = arith::ConstantOp::create(ib.b, ib.loc, type, ib.b.getZeroAttr(type));
    for (int64_t r = 0; r < rows; ++r, at += 2) {
      Value row = vector::LoadOp::create(ib.b, ib.loc, VectorType::get({2}, elem), mem,
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

} // namespace

LogicalResult mlir::tile::lowerGemm(GemmOp op, const SharedBuffers &shared,
                                    Value tid, int64_t threads, Value accRegs,
                                    LayoutAttr accLayout, Value aRegs,
                                    LayoutAttr aLayout, const GemmPrefetch *prefetch) {
  FailureOr<WarpPartition> part = selectedPartition(op);
  if (failed(part))
    return failure();
  if (!equivalentLayouts(accLayout, getAccumulatorLayout(op.getContext(), *part, threads)))
    return op.emitOpError("C's layout is not the tensor-core accumulator "
                          "layout; converting layouts is not supported yet");
  MemRefType aType = op.getA().getType(), bType = op.getB().getType();
  bool aInRegisters = getPlace(aType) == Place::Fragment;
  if (aInRegisters &&
      (!aRegs || !equivalentLayouts(aLayout, getOperandALayout(op.getContext(), *part,
                                                               aType.getDimSize(1), threads))))
    return op.emitOpError("A in registers must be in the tensor-core operand "
                          "layout; converting layouts is not supported yet");
  Type in = aType.getElementType();
  Type accElem = op.getC().getType().getElementType();
  if (isWgmmaFp8(in))
    return op.emitOpError("fp8 gemms run on sm_90a's wgmma only, which reads both operands "
                          "K-major: A M x K and B N x K (transpose_B=True) in shared memory, "
                          "K tiles of 128, an f32 accumulator and M = 16 x warps");
  if (!(in.isF16() || in.isBF16()) || !(accElem.isF32() || (in.isF16() && accElem.isF16())))
    return op.emitOpError("this version of tlc lowers f16 x f16 -> f32|f16, "
                          "bf16 x bf16 -> f32 and (on sm_90a) fp8 -> f32 gemms, got ")
           << in << " -> " << accElem;
  int64_t k = op.getTransposeA() ? aType.getDimSize(0) : aType.getDimSize(1);
  if (k % kMmaK != 0)
    return op.emitOpError("K = ") << k << " must be a multiple of " << kMmaK
                                  << " for m16n8k16 tensor-core atoms";
  // ldmatrix reads 16-byte rows: every row of A and B starts 16-byte aligned.
  for (MemRefType t : {aType, bType})
    if (getPlace(t) == Place::Shared &&
        t.getDimSize(1) * t.getElementTypeBitWidth() / 8 % 16 != 0)
      return op.emitOpError("rows of a ")
             << t << " operand are not a multiple of 16 bytes, which ldmatrix needs";

  OpBuilder b(op);
  Location loc = op.getLoc();
  IndexBuilder ib{b, loc};
  const WarpPartition &p = *part;
  Lanes lanes = lanesOf(ib, tid, p);
  Value aFrom = aInRegisters ? aRegs : Value();

  // With prefetch: a register array carries the next slice over the back
  // edge, filled first before the loop (after the wait and barrier that used
  // to open each iteration).
  Value carried;
  if (prefetch) {
    Block &entry = op->getParentOfType<FunctionOpInterface>().getFunctionBody().front();
    OpBuilder eb(&entry, entry.begin());
    int64_t n = p.atomsM() * 8 + p.atomsN() * 4;
    carried = memref::AllocaOp::create(eb, loc, MemRefType::get({n}, in));
    OpBuilder pb(prefetch->loop);
    IndexBuilder pib{pb, loc};
    NVVM::CpAsyncWaitGroupOp::create(pb, loc, pb.getI32IntegerAttr(prefetch->pending));
    gpu::BarrierOp::create(pb, loc);
    saveSlice(pib, loadSlice(pib, shared, op, p, lanesOf(pib, tid, p), prefetch->firstA,
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

  for (int64_t k0 = 0; k0 < k; k0 += kMmaK) {
    Slice s = prefetch && k0 == 0
                  ? restoreSlice(ib, p, in, carried)
                  : loadSlice(ib, shared, op, p, lanes, op.getA(), op.getB(), aFrom, k, k0);
    if (prefetch && k0 + kMmaK == k) {
      // Every read of this stage is issued: wait for the next stage, meet,
      // and fetch its first slice while this slice's mma.sync run.
      NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(prefetch->pending));
      gpu::BarrierOp::create(b, loc);
      saveSlice(ib, loadSlice(ib, shared, op, p, lanes, prefetch->nextA, prefetch->nextB,
                              aFrom, k, 0),
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
  op.erase();
  return success();
}

/// One wgmma m64nNk16 with A from registers (`a`: four b32 of f16/bf16
/// pairs in the mma A-operand order) and B through `descB`, accumulating
/// into the struct `acc`. The NVVM dialect has only the shared-A form, so
/// this is inline PTX: outputs tied to the accumulator inputs, scale-d 1.
static Value wgmmaRegisterA(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> a,
                            Value descB, int64_t n, Type in, bool nMajorB) {
  auto structType = cast<LLVM::LLVMStructType>(acc.getType());
  int64_t regs = structType.getBody().size();
  std::string type = in.isF16() ? "f16" : "bf16";
  // Operands: the outputs $0..regs-1, the tied accumulator inputs after
  // them, then A's four registers, B's descriptor and the constant 1.
  int64_t in0 = 2 * regs;
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(in0 + 5) +
                    ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) +
                    "k16.f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t r = 0; r < regs; ++r) {
    ptx += (r ? ", $" : "$") + std::to_string(r);
    constraints += (r ? ",=f" : "=f");
  }
  ptx += "}, {$" + std::to_string(in0) + ", $" + std::to_string(in0 + 1) + ", $" +
         std::to_string(in0 + 2) + ", $" + std::to_string(in0 + 3) + "}, $" +
         std::to_string(in0 + 4) + ", p, 1, 1, " + (nMajorB ? "1" : "0") + ";\n}";
  SmallVector<Value> operands;
  for (int64_t r = 0; r < regs; ++r) {
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{r}));
    constraints += "," + std::to_string(r); // tied to output r
  }
  llvm::append_range(operands, a);
  operands.push_back(descB);
  operands.push_back(arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1));
  constraints += ",r,r,r,r,l,r";
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, structType, operands, ptx, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT), ArrayAttr());
  return asmOp.getResult(0);
}

LogicalResult mlir::tile::lowerGemmWgmma(GemmOp op, const SharedBuffers &shared, Value tid,
                                         int64_t threads, Value accRegs,
                                         LayoutAttr accLayout, Value aRegs,
                                         LayoutAttr aLayout) {
  MLIRContext *ctx = op.getContext();
  FailureOr<WarpPartition> selected = selectedPartition(op);
  if (failed(selected))
    return failure();
  WarpPartition part = *selected;
  if (!equivalentLayouts(accLayout, getAccumulatorLayout(ctx, part, threads)))
    return op.emitOpError("C's layout is not the wgmma accumulator layout; "
                          "converting layouts is not supported yet");
  OpBuilder b(op);
  Location loc = op.getLoc();
  IndexBuilder ib{b, loc};
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); };

  // The shared address (bytes) of element [0, 0] of an operand; its buffer
  // must carry the 128-byte swizzle the descriptors below declare.
  Type in = op.getA().getType().getElementType();
  auto address = [&](Value buffer, int64_t columnBlock) -> FailureOr<Value> {
    auto it = shared.find(buffer);
    if (it == shared.end())
      return failure();
    SwizzleAttr swizzle = it->second.layout.getSwizzle();
    if (!swizzle || swizzle.getBits() != 3 || swizzle.getBase() != 4 || swizzle.getShift() != 3 ||
        it->second.layout.getColumnBlock() != columnBlock)
      return failure();
    Value at = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, it->second.flat);
    if (Value base = it->second.base) // elements -> bytes
      at = ib.add(at, ib.mul(base, cast<MemRefType>(buffer.getType()).getElementTypeBitWidth() / 8));
    return arith::IndexCastUIOp::create(b, loc, i64, at).getResult();
  };
  bool nMajorB = !op.getTransposeB();
  bool aInRegisters = op.getMmaAttr().getA() == OperandPlace::Registers;
  if (aInRegisters &&
      (!aRegs || !equivalentLayouts(aLayout, getOperandALayout(ctx, part,
                                                             op.getA().getType().getDimSize(1),
                                                             threads))))
    return op.emitOpError("needs A in registers in the mma operand layout for wgmma; "
                          "converting layouts is not supported yet");
  int64_t aBlock = aInRegisters ? 0 : wgmmaKBlock(op.getA().getType());
  int64_t bBlock = nMajorB ? kWgmmaColumnBlock : wgmmaKBlock(op.getB().getType());
  FailureOr<Value> aAddr =
      aInRegisters ? FailureOr<Value>(Value()) : address(op.getA(), aBlock);
  FailureOr<Value> bAddr = address(op.getB(), bBlock);
  if (failed(aAddr) || failed(bAddr))
    return op.emitOpError("needs A and B in shared memory with the 128-byte "
                          "swizzle for wgmma (and an N-major B in 64-column "
                          "blocks); run tile-select-mma and "
                          "tile-swizzle-shared-memory");
  // This warpgroup's place in the grid of warpgroups (WarpPartition::warpAt):
  // its 64 rows of A (128 bytes each), and its tileN columns of B, which
  // start tileN rows further in a K-major B and tileN / 64 column blocks
  // (K rows of 128 bytes each) further in an N-major one.
  int64_t kRows = op.getB().getType().getDimSize(0);
  // The warpgroup index, broadcast from lane 0: ptxas then knows it is the
  // same in every lane of the warp and keeps the descriptors computed from
  // it in uniform registers (from tid / 128 itself it built each of them in
  // ordinary registers: two per descriptor, up to 128 for a 512-deep K).
  Type i32 = b.getI32Type();
  Value group = arith::IndexCastUIOp::create(b, loc, i32, ib.div(tid, 128));
  group = gpu::ShuffleOp::create(b, loc, group, arith::ConstantIntOp::create(b, loc, i32, 0),
                                 arith::ConstantIntOp::create(b, loc, i32, 32),
                                 gpu::ShuffleMode::IDX)
              .getShuffleResult();
  group = arith::ExtUIOp::create(b, loc, i64, group);
  Value groupsN = c64(part.warpsN);
  Value groupM = arith::DivUIOp::create(b, loc, group, groupsN);
  Value groupN = arith::RemUIOp::create(b, loc, group, groupsN);
  Value aRows = aInRegisters ? Value()
                             : arith::AddIOp::create(
                                   b, loc, *aAddr,
                                   arith::MulIOp::create(b, loc, groupM, c64(kWgmmaM * 128)))
                                   .getResult();
  if (part.warpsN > 1) {
    // Where the group's first column starts in B's #tile.shared layout
    // (whole 1024-byte swizzle periods: the descriptor's start address).
    SmallVector<int64_t> first{0, part.tileN};
    if (!nMajorB)
      std::swap(first[0], first[1]);
    int64_t columnsBytes =
        shared.find(op.getB())->second.layout.byteOffset(op.getB().getType(), first);
    bAddr = arith::AddIOp::create(b, loc, *bAddr,
                                  arith::MulIOp::create(b, loc, groupN, c64(columnsBytes)))
                .getResult();
  }
  // Descriptors, 128-byte swizzle (mode 1 in bits 62-63), start address >> 4
  // in bits 0-13, leading byte offset >> 4 in bits 16-29, stride byte offset
  // >> 4 in bits 32-45. K-major: the leading offset is unused when swizzled
  // (1), the stride is between 8-row groups (1024 bytes), and a K slice
  // starts 32 bytes further along the row. N-major (B in 64-column blocks
  // of K rows): the leading offset is between column blocks (K x 128
  // bytes), the stride between groups of 8 K rows (1024 bytes), and a K
  // slice starts 16 rows (2048 bytes) further.
  auto fields = [](int64_t leading, int64_t stride) {
    return ((leading >> 4) << 16) | ((stride >> 4) << 32) | (int64_t(1) << 62);
  };
  int64_t kMajor = fields(16, 1024);
  int64_t nMajor = fields(kRows * 128, 1024);
  auto descriptor = [&](Value start, int64_t bytes, int64_t fixed) {
    Value at = arith::AddIOp::create(b, loc, start, c64(bytes));
    Value field = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, at, c64(0x3FFFF)), c64(4));
    return arith::OrIOp::create(b, loc, field, c64(fixed)).getResult();
  };

  int64_t n = part.tileN, regs = n / 2;
  Type f32 = b.getF32Type();
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(regs, f32));
  Value acc = LLVM::UndefOp::create(b, loc, structType);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  for (int64_t r = 0; r < regs; ++r) {
    Value v = op.getClearAccum() ? zero
                                 : memref::LoadOp::create(b, loc, accRegs, ValueRange{ib.c(r)});
    acc = LLVM::InsertValueOp::create(b, loc, acc, v, ArrayRef<int64_t>{r});
  }
  auto wgType = [&](Type t) {
    NVVM::WGMMATypes kind = t.isF16()    ? NVVM::WGMMATypes::f16
                            : t.isBF16() ? NVVM::WGMMATypes::bf16
                            : isa<Float8E4M3FNType>(t) ? NVVM::WGMMATypes::e4m3
                                                       : NVVM::WGMMATypes::e5m2;
    return NVVM::WGMMATypesAttr::get(ctx, kind);
  };
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  // A from registers: K slice k0's eight 16-bit values, packed in pairs.
  auto registerA = [&](int64_t k0) {
    SmallVector<Value> packed;
    for (int64_t pair = 0; pair < 4; ++pair) {
      SmallVector<Value> two;
      for (int64_t e = 0; e < 2; ++e)
        two.push_back(memref::LoadOp::create(
            b, loc, aRegs, ValueRange{ib.c((k0 / kWgmmaK) * 8 + pair * 2 + e)}));
      Value v = vector::FromElementsOp::create(b, loc, VectorType::get({2}, in), two);
      packed.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), v));
    }
    return packed;
  };
  // Packed before the fence, so no register the wgmmas read is written
  // between them (ptxas would otherwise fence each one).
  SmallVector<SmallVector<Value>> aPacked;
  if (aInRegisters)
    for (int64_t k0 = 0; k0 < op.getA().getType().getDimSize(1); k0 += kWgmmaK)
      aPacked.push_back(registerA(k0));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  int64_t k = op.getA().getType().getDimSize(1), step = op.getMmaAttr().getK();
  int64_t bytes = op.getA().getType().getElementTypeBitWidth() / 8;
  // Where K slice k0 starts in a K-major operand of `rows` rows: its column
  // block (rows x 128 bytes each), then k0's bytes within the block's rows.
  auto kMajorAt = [&](int64_t k0, int64_t block, int64_t rows) {
    if (!block)
      return k0 * bytes;
    return (k0 / block) * rows * kWgmmaAtomBytes + (k0 % block) * bytes;
  };
  int64_t aRowsAll = op.getA().getType().getDimSize(0);
  int64_t bRowsAll = op.getB().getType().getDimSize(0);
  for (int64_t k0 = 0; k0 < k; k0 += step) {
    if (aInRegisters) {
      Value descB = nMajorB ? descriptor(*bAddr, k0 * 128, nMajor)
                            : descriptor(*bAddr, kMajorAt(k0, bBlock, bRowsAll), kMajor);
      acc = wgmmaRegisterA(b, loc, acc, aPacked[k0 / kWgmmaK], descB, n, in, nMajorB);
      continue;
    }
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, structType, acc, descriptor(aRows, kMajorAt(k0, aBlock, aRowsAll), kMajor),
        nMajorB ? descriptor(*bAddr, k0 * 128, nMajor)
                : descriptor(*bAddr, kMajorAt(k0, bBlock, bRowsAll), kMajor),
        NVVM::MMAShapeAttr::get(ctx, kWgmmaM, n, step), wgType(in),
        wgType(op.getB().getType().getElementType()),
        NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one), one, one,
        NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(ctx, nMajorB ? NVVM::MMALayout::row : NVVM::MMALayout::col),
        NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // A gemm accumulating onto the same registers right after this one (MLA's
  // rope part after its latent part) waits for both groups: the wgmmas run
  // back to back instead of the tensor cores draining in between.
  auto next = dyn_cast_or_null<GemmOp>(op->getNextNode());
  bool chained = next && next.getC() == op.getC() && !next.getClearAccum() &&
                 next.getMmaAttr() && next.getMmaAttr().getKind() == MmaKind::Wgmma &&
                 next.getMmaAttr().getN() == op.getMmaAttr().getN() &&
                 next.getMmaAttr().getK() == op.getMmaAttr().getK();
  if (!chained && op.getMmaAttr().getDepth() >= 0) // -1: a tile.wait_wgmma waits
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, op.getMmaAttr().getDepth());
  for (int64_t r = 0; r < regs; ++r)
    memref::StoreOp::create(b, loc,
                            LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{r}),
                            accRegs, ValueRange{ib.c(r)});
  op.erase();
  return success();
}

void mlir::tile::lowerWaitWgmma(WaitWgmmaOp op, ArrayRef<Value> regs) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // One inline PTX wait whose operands are every register of the completed
  // accumulators, tied in and out: their reads after the wait read its
  // outputs, so none moves above it.
  std::string ptx = "wgmma.wait_group.sync.aligned " + std::to_string(op.getPending()) + ";";
  SmallVector<Value> values;
  SmallVector<Type> types;
  std::string outs, ins;
  IndexBuilder ib{b, loc};
  for (Value memref : regs) {
    auto type = cast<MemRefType>(memref.getType());
    for (int64_t r = 0; r < type.getNumElements(); ++r) {
      Value v = memref::LoadOp::create(b, loc, memref, ValueRange{ib.c(r)});
      Type t = v.getType();
      StringRef c = t.isF32() ? "f" : t.isF16() || t.isBF16() ? "h" : t.isInteger(32) ? "r"
                                                                                      : "";
      if (c.empty()) { // not a register class inline PTX ties: wait only
        values.clear();
        break;
      }
      outs += (values.empty() ? "=" : ",=") + c.str();
      ins += "," + std::to_string(values.size());
      values.push_back(v);
      types.push_back(t);
    }
  }
  if (values.empty()) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, op.getPending());
    op.erase();
    return;
  }
  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(), types);
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, structType, values, ptx, outs + ins, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT), ArrayAttr());
  int64_t i = 0;
  for (Value memref : regs) {
    auto type = cast<MemRefType>(memref.getType());
    for (int64_t r = 0; r < type.getNumElements(); ++r, ++i)
      memref::StoreOp::create(
          b, loc, LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), ArrayRef<int64_t>{i}),
          memref, ValueRange{ib.c(r)});
  }
  op.erase();
}
