//===- WgmmaToGPU.cpp - tile.gemm -> sm_90a wgmma, tile.wait_wgmma --------===//
//
// Each warpgroup issues one wgmma.mma_async m64nNk16 per K slice (and per
// row block, when it has several) on shared-memory descriptors of its 64
// rows of A (or A from its registers) and
// of B (128-byte swizzle, which tile-swizzle-shared-memory gave them), between
// a wgmma.fence and a commit; the wait is as deep as the gemm's #tile.mma
// says (or a tile.wait_wgmma's); the accumulator stays in the C fragment's
// registers.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"
#include "dialects/tile/Layout.h"
#include "passes/Target/Mma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// One wgmma m64nNk16 with A from registers (`a`: four b32 of f16/bf16
/// pairs in the mma A-operand order) and B through `descB`, accumulating
/// into the struct `acc`. The NVVM dialect has only the shared-A form, so
/// this is inline PTX: outputs tied to the accumulator inputs, scale-d 1.
Value wgmmaRegisterA(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> a,
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

/// Emits `op` (whose #tile.mma is wgmma) before it; A and B as converted
/// (`aShared`/`bShared`: their addressing), the accumulator in `accRegs`.
LogicalResult lowerGemmWgmma(ConversionPatternRewriter &b, GemmOp op,
                             const std::optional<SharedBuffer> &aShared,
                             const std::optional<SharedBuffer> &bShared, Value tid,
                             int64_t threads, Value accRegs, LayoutAttr accLayout, Value aRegs,
                             LayoutAttr aLayout) {
  MLIRContext *ctx = op.getContext();
  FailureOr<WarpPartition> selected = selectedPartition(op);
  if (failed(selected))
    return failure();
  WarpPartition part = *selected;
  if (!equivalentLayouts(accLayout, getAccumulatorLayout(ctx, part, threads)))
    return op.emitOpError("C's layout is not the wgmma accumulator layout; "
                          "converting layouts is not supported yet");
  Location loc = op.getLoc();
  IndexBuilder ib{b, loc};
  Type i64 = b.getI64Type();
  auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); };

  // The shared address (bytes) of element [0, 0] of an operand; its buffer
  // must carry the 128-byte swizzle the descriptors below declare.
  Type in = op.getA().getType().getElementType();
  auto address = [&](const std::optional<SharedBuffer> &shared, int64_t columnBlock,
                     int64_t atomBytes) -> FailureOr<Value> {
    if (!shared)
      return failure();
    SwizzleAttr swizzle = shared->layout.getSwizzle();
    // Column blocks as wide as the rows are the rows themselves (a 64-column
    // tile read as a K-major B and as an M-major A).
    int64_t cols = shared->type.getShape().back();
    auto blocks = [&](int64_t b) { return b >= cols ? 0 : b; };
    if (tmaSwizzleBytes(swizzle) != atomBytes ||
        blocks(shared->layout.getColumnBlock()) != blocks(columnBlock))
      return failure();
    Value at = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared->flat);
    if (Value base = shared->base) // elements -> bytes
      at = ib.add(at, ib.mul(base, shared->type.getElementTypeBitWidth() / 8));
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
  bool mMajorA = op.getTransposeA(); // A stored K x M
  int64_t aBlock = aInRegisters ? 0
                   : mMajorA    ? kWgmmaColumnBlock
                                : wgmmaKBlock(op.getA().getType());
  int64_t bBlock = nMajorB ? kWgmmaColumnBlock : wgmmaKBlock(op.getB().getType());
  // The swizzle atom of the K-major operands (A's K and a K-major B's are
  // the same K): 128 bytes, or the whole row of 64 / 32; an N-major B and an
  // M-major A are in 128-byte column blocks.
  int64_t atom = !aInRegisters && !mMajorA ? wgmmaKAtomBytes(op.getA().getType())
                 : nMajorB                 ? kWgmmaAtomBytes
                                           : wgmmaKAtomBytes(op.getB().getType());
  FailureOr<Value> aAddr =
      aInRegisters ? FailureOr<Value>(Value())
                   : address(aShared, aBlock, mMajorA ? kWgmmaAtomBytes : atom);
  FailureOr<Value> bAddr = address(bShared, bBlock, nMajorB ? kWgmmaAtomBytes : atom);
  if (failed(aAddr) || failed(bAddr))
    return op.emitOpError("needs A and B in shared memory with the swizzle of their K "
                          "rows for wgmma (128-byte, or 64 / 32 bytes for rows that "
                          "narrow; an N-major B in 64-column blocks of the 128-byte "
                          "one); run tile-select-mma and tile-swizzle-shared-memory");
  // This warpgroup's place in the grid of warpgroups (WarpPartition::warpAt):
  // its 64 rows of A (128 bytes each), and its tileN columns of B, which
  // start tileN rows further in a K-major B and tileN / 64 column blocks
  // (K rows of 128 bytes each) further in an N-major one.
  int64_t kRows = op.getB().getType().getDimSize(0);
  int64_t aKRows = op.getA().getType().getDimSize(0); // an M-major A's K
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
  // The warpgroup's row blocks of 64 (several when it has more than one:
  // consecutive blocks, 64 rows apart in each column block).
  int64_t rowBlocks = part.tileM / kMmaM;
  SmallVector<Value> aRows;
  for (int64_t mt = 0; mt < rowBlocks && !aInRegisters; ++mt) {
    Value block = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, groupM, c64(rowBlocks)), c64(mt));
    // 64 rows of the atom's bytes (128, or the row itself for 64- and
    // 32-byte rows); M-major: one column block of K rows of 128 bytes.
    int64_t blockBytes = mMajorA ? aKRows * kWgmmaAtomBytes : kWgmmaM * atom;
    aRows.push_back(arith::AddIOp::create(b, loc, *aAddr,
                                          arith::MulIOp::create(b, loc, block,
                                                                c64(blockBytes))));
  }
  if (part.warpsN > 1) {
    // Where the group's first column starts in B's #tile.shared layout
    // (whole 1024-byte swizzle periods: the descriptor's start address).
    SmallVector<int64_t> first{0, part.tileN};
    if (!nMajorB)
      std::swap(first[0], first[1]);
    int64_t columnsBytes = bShared->layout.byteOffset(op.getB().getType(), first);
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
  // Narrower K-major atoms (64- / 32-byte rows: swizzle modes 2 / 3) have
  // their 8-row groups 512 / 256 bytes apart.
  auto fields = [](int64_t leading, int64_t stride, int64_t mode = 1) {
    return ((leading >> 4) << 16) | ((stride >> 4) << 32) | (mode << 62);
  };
  int64_t kMajor = atom == kWgmmaAtomBytes ? fields(16, 1024)
                                           : fields(16, 8 * atom, atom == 64 ? 2 : 3);
  int64_t nMajor = fields(kRows * 128, 1024);
  int64_t mMajor = fields(aKRows * 128, 1024); // an M-major A, alike
  // A K slice's descriptor is its operand's first one plus the slice's
  // offset >> 4 (the 14-bit start field cannot carry: shared memory is under
  // 256 KB). The first is made where the gemm is, through an opaque move, so
  // that LLVM keeps each slice's descriptor an add beside its wgmma instead
  // of hoisting every one of them out of a loop whose stage buffers do not
  // change: dozens of live 64-bit values that ptxas then spills.
  DenseMap<std::pair<Value, int64_t>, Value> firstDescriptor;
  auto descriptor = [&](Value start, int64_t bytes, int64_t fixed) {
    Value &first = firstDescriptor[{start, fixed}];
    if (!first) {
      Value field = arith::ShRUIOp::create(
          b, loc, arith::AndIOp::create(b, loc, start, c64(0x3FFFF)), c64(4));
      Value value = arith::OrIOp::create(b, loc, field, c64(fixed));
      first = LLVM::InlineAsmOp::create(
                  b, loc, i64, ValueRange{value}, "mov.b64 $0, $1;", "=l,l",
                  /*has_side_effects=*/true, /*is_align_stack=*/false,
                  LLVM::TailCallKind::None,
                  LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), ArrayAttr())
                  .getResult(0);
    }
    if (!bytes)
      return first;
    return arith::AddIOp::create(b, loc, first, c64(bytes >> 4)).getResult();
  };

  // One accumulator struct per row block: registers [mt * regs, (mt + 1) *
  // regs) of the fragment (getAccumulatorLayout's register order).
  int64_t n = part.tileN, regs = n / 2;
  // f32 accumulators, s32 for int8 operands.
  Type accElem = op.getC().getType().getElementType();
  bool int8 = accElem.isInteger(32);
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(regs, accElem));
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(accElem));
  SmallVector<Value> accs;
  for (int64_t mt = 0; mt < rowBlocks; ++mt) {
    Value acc = LLVM::UndefOp::create(b, loc, structType);
    for (int64_t r = 0; r < regs; ++r) {
      Value v = op.getClearAccum()
                    ? zero
                    : memref::LoadOp::create(b, loc, accRegs, ValueRange{ib.c(mt * regs + r)});
      acc = LLVM::InsertValueOp::create(b, loc, acc, v, ArrayRef<int64_t>{r});
    }
    accs.push_back(acc);
  }
  auto wgType = [&](Type t) {
    NVVM::WGMMATypes kind = t.isF16()    ? NVVM::WGMMATypes::f16
                            : t.isBF16() ? NVVM::WGMMATypes::bf16
                            : t.isInteger(8) ? NVVM::WGMMATypes::s8
                            : isa<Float8E4M3FNType>(t) ? NVVM::WGMMATypes::e4m3
                                                       : NVVM::WGMMATypes::e5m2;
    return NVVM::WGMMATypesAttr::get(ctx, kind);
  };
  auto one = NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one);
  // A from registers: K slice k0's eight 16-bit values of row block mt,
  // packed in pairs (getOperandALayout's register order).
  int64_t kAtoms = op.getA().getType().getDimSize(1) / kWgmmaK;
  auto registerA = [&](int64_t mt, int64_t k0) {
    SmallVector<Value> packed;
    for (int64_t pair = 0; pair < 4; ++pair) {
      SmallVector<Value> two;
      for (int64_t e = 0; e < 2; ++e)
        two.push_back(memref::LoadOp::create(
            b, loc, aRegs,
            ValueRange{ib.c((mt * kAtoms + k0 / kWgmmaK) * 8 + pair * 2 + e)}));
      Value v = vector::FromElementsOp::create(b, loc, VectorType::get({2}, in), two);
      packed.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), v));
    }
    return packed;
  };
  // Packed before the fence, so no register the wgmmas read is written
  // between them (ptxas would otherwise fence each one).
  SmallVector<SmallVector<SmallVector<Value>>> aPacked(rowBlocks);
  if (aInRegisters)
    for (int64_t mt = 0; mt < rowBlocks; ++mt)
      for (int64_t k0 = 0; k0 < op.getA().getType().getDimSize(1); k0 += kWgmmaK)
        aPacked[mt].push_back(registerA(mt, k0));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  int64_t k = op.getA().getType().getDimSize(mMajorA ? 0 : 1), step = op.getMmaAttr().getK();
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
      for (int64_t mt = 0; mt < rowBlocks; ++mt)
        accs[mt] = wgmmaRegisterA(b, loc, accs[mt], aPacked[mt][k0 / kWgmmaK], descB, n, in,
                                  nMajorB);
      continue;
    }
    for (int64_t mt = 0; mt < rowBlocks; ++mt)
      accs[mt] = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, structType, accs[mt],
          mMajorA ? descriptor(aRows[mt], k0 * 128, mMajor)
                  : descriptor(aRows[mt], kMajorAt(k0, aBlock, aRowsAll), kMajor),
          nMajorB ? descriptor(*bAddr, k0 * 128, nMajor)
                  : descriptor(*bAddr, kMajorAt(k0, bBlock, bRowsAll), kMajor),
          NVVM::MMAShapeAttr::get(ctx, kWgmmaM, n, step), wgType(in),
          wgType(op.getB().getType().getElementType()),
          NVVM::WGMMATypesAttr::get(ctx, int8 ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32),
          NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one), one, one,
          NVVM::MMALayoutAttr::get(ctx, mMajorA ? NVVM::MMALayout::col : NVVM::MMALayout::row),
          NVVM::MMALayoutAttr::get(ctx, nMajorB ? NVVM::MMALayout::row : NVVM::MMALayout::col),
          NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // Depth -1: a tile.wait_wgmma, or the next gemm of a chain, waits.
  if (op.getMmaAttr().getDepth() >= 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, op.getMmaAttr().getDepth());
  for (auto [mt, acc] : llvm::enumerate(accs))
    for (int64_t r = 0; r < regs; ++r)
      memref::StoreOp::create(b, loc,
                              LLVM::ExtractValueOp::create(b, loc, acc, ArrayRef<int64_t>{r}),
                              accRegs, ValueRange{ib.c(mt * regs + r)});
  return success();
}

/// Emits the wait `op` before it: `wgmma.wait_group pending`, pinning the
/// registers `regs` (the completed accumulators' register memrefs) at it.
void lowerWaitWgmma(ConversionPatternRewriter &b, WaitWgmmaOp op, ArrayRef<Value> regs) {
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
}

/// tile.gemm whose #tile.mma is wgmma.
struct WgmmaGemmLowering : TileOpLowering<GemmOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (!op.getMmaAttr() || op.getMmaAttr().getKind() != MmaKind::Wgmma)
      return failure();
    FailureOr<Fragment> c = convertedFragment(op, op.getC(), adaptor.getC(), "C");
    if (failed(c))
      return failure();
    std::optional<Fragment> a = fragmentOf(op.getA(), adaptor.getA());
    if (failed(lowerGemmWgmma(rewriter, op, sharedBufferOf(op.getA(), adaptor.getA()),
                              sharedBufferOf(op.getB(), adaptor.getB()), info.at(op).tid,
                              info.at(op).threads, c->regs, c->layout, a ? a->regs : Value(),
                              a ? a->layout : LayoutAttr())))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// tile.wait_wgmma: nothing to wait for in a kernel without wgmma gemms
/// (mma.sync gemms complete in program order).
struct WaitWgmmaLowering : TileOpLowering<WaitWgmmaOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(WaitWgmmaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    if (info.usesWgmma) {
      SmallVector<Value> regs;
      for (auto [original, converted] : llvm::zip(op.getFragments(), adaptor.getFragments())) {
        if (!fragmentOf(original, converted))
          return op.emitOpError("waits for fragments of this kernel only");
        regs.push_back(converted);
      }
      lowerWaitWgmma(rewriter, op, regs);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateWgmmaToGPUPatterns(const TypeConverter &converter,
                                            const KernelInfo &info,
                                            RewritePatternSet &patterns) {
  patterns.add<WgmmaGemmLowering, // tile.gemm (wgmma)
               WaitWgmmaLowering  // tile.wait_wgmma
               >(converter, info);
}
