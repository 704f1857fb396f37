//===- Mma.cpp - Tensor-core tiling and layouts ---------------------------===//

#include "passes/Target/Mma.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tile;

FailureOr<WarpPartition> mlir::tile::partitionWarps(int64_t m, int64_t n,
                                                    int64_t warps,
                                                    WarpPolicy policy,
                                                    std::string &why) {
  // FullRow: as many warps along M as the rows allow (all of them where
  // each gets 16 rows or a multiple), the rest splitting N; FullCol the
  // same along N; Square: the most square warp tile (fewest operand loads
  // per mma). TileLang's rules, so its programs get the same partition.
  std::optional<WarpPartition> best;
  double bestScore = 0;
  for (int64_t wm = 1; wm <= warps; ++wm) {
    if (warps % wm != 0)
      continue;
    int64_t wn = warps / wm;
    if (m % (wm * kMmaM) != 0 || n % (wn * kMmaN) != 0)
      continue;
    WarpPartition p{wm, wn, m / wm, n / wn};
    double score = policy == WarpPolicy::FullRow   ? -double(wm)
                   : policy == WarpPolicy::FullCol ? -double(wn)
                   : std::abs(std::log2(double(p.tileM) / double(p.tileN)));
    if (!best || score < bestScore) {
      best = p;
      bestScore = score;
    }
  }
  if (best)
    return *best;
  why = llvm::formatv("a {0}x{1} tile cannot be split over {2} warps with the "
                      "{3} policy into m16n8 tensor-core atoms (each warp's "
                      "share must be a multiple of 16 rows and 8 columns)",
                      m, n, warps, stringifyWarpPolicy(policy))
            .str();
  return failure();
}

std::pair<AffineExpr, AffineExpr> WarpPartition::warpAt(AffineExpr warp) const {
  if (!warpgroups || warpsN == 1)
    return {warp.floorDiv(warpsN), warp % warpsN};
  AffineExpr group = warp.floorDiv(4);
  return {group.floorDiv(warpsN) * 4 + warp % 4, group % warpsN};
}

LayoutAttr mlir::tile::getAccumulatorLayout(MLIRContext *ctx,
                                            const WarpPartition &p,
                                            int64_t threads) {
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr warp = t.floorDiv(32), lane = t % 32;
  AffineExpr atomI = r.floorDiv(4 * p.atomsN());
  AffineExpr atomJ = r.floorDiv(4) % p.atomsN();
  AffineExpr k = r % 4;
  auto [wm, wn] = p.warpAt(warp);
  // mma.sync (and wgmma with one m64 row block per warpgroup): a warp's row
  // atoms are contiguous; wgmma with several row blocks per warpgroup: the
  // warpgroup's blocks are 64 rows apart, each warp 16 rows of every block.
  AffineExpr rowBase = wm * p.tileM + atomI * kMmaM;
  if (p.warpgroups && p.tileM > kMmaM)
    rowBase = wm.floorDiv(4) * (4 * p.tileM) + (wm % 4) * kMmaM + atomI * kWgmmaM;
  AffineExpr row = rowBase + lane.floorDiv(4) + k.floorDiv(2) * 8;
  AffineExpr col = wn * p.tileN + atomJ * kMmaN +
                   (lane % 4) * 2 + r % 2;
  int64_t regs = p.tileM * p.tileN / 32;
  return LayoutAttr::get(ctx, threads, regs,
                         AffineMap::get(2, 0, {row, col}, ctx));
}

int64_t mlir::tile::mmaSyncK(Type in) {
  if (in.isF32())
    return 8; // tf32: m16n8k8
  return in.getIntOrFloatBitWidth() == 8 ? 32 : kMmaK; // int8: m16n8k32
}

LayoutAttr mlir::tile::getOperandALayout(MLIRContext *ctx, const WarpPartition &p,
                                         int64_t k, int64_t threads, int64_t elementBits) {
  AffineExpr t = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
  AffineExpr warp = t.floorDiv(32), lane = t % 32;
  if (elementBits == 32) {
    // tf32 m16k8: a0 (g, q), a1 (g + 8, q), a2 (g, q + 4), a3 (g + 8, q + 4)
    // for g = lane / 4, q = lane % 4.
    int64_t kAtoms = k / 8;
    AffineExpr atomI = r.floorDiv(4 * kAtoms), atomK = r.floorDiv(4) % kAtoms;
    AffineExpr e = r % 4;
    AffineExpr wm = p.warpAt(warp).first;
    AffineExpr row = wm * p.tileM + atomI * kMmaM + lane.floorDiv(4) + (e % 2) * 8;
    AffineExpr col = atomK * 8 + lane % 4 + e.floorDiv(2) * 4;
    return LayoutAttr::get(ctx, threads, p.atomsM() * kAtoms * 4,
                           AffineMap::get(2, 0, {row, col}, ctx));
  }
  if (elementBits == 8) {
    // int8 m16k32: four registers of four bytes along K, a0 (g, 4q..4q+3),
    // a1 (g + 8, ...), a2 (g, 16 + 4q..), a3 (g + 8, 16 + 4q..).
    int64_t kAtoms = k / 32;
    AffineExpr atomI = r.floorDiv(16 * kAtoms), atomK = r.floorDiv(16) % kAtoms;
    AffineExpr e = r % 16;
    AffineExpr wm = p.warpAt(warp).first;
    AffineExpr row = wm * p.tileM + atomI * kMmaM + lane.floorDiv(4) + (e.floorDiv(4) % 2) * 8;
    AffineExpr col = atomK * 32 + (lane % 4) * 4 + e % 4 + e.floorDiv(8) * 16;
    return LayoutAttr::get(ctx, threads, p.atomsM() * kAtoms * 16,
                           AffineMap::get(2, 0, {row, col}, ctx));
  }
  int64_t kAtoms = k / kMmaK;
  AffineExpr atomI = r.floorDiv(8 * kAtoms), atomK = r.floorDiv(8) % kAtoms;
  AffineExpr e = r % 8;
  AffineExpr wm = p.warpAt(warp).first;
  AffineExpr rowBase = wm * p.tileM + atomI * kMmaM;
  if (p.warpgroups && p.tileM > kMmaM) // several wgmma row blocks per warpgroup
    rowBase = wm.floorDiv(4) * (4 * p.tileM) + (wm % 4) * kMmaM + atomI * kWgmmaM;
  AffineExpr row = rowBase + lane.floorDiv(4) + (e.floorDiv(2) % 2) * 8;
  AffineExpr col = atomK * kMmaK + (lane % 4) * 2 + r % 2 + e.floorDiv(4) * 8;
  int64_t regs = p.atomsM() * kAtoms * 8;
  return LayoutAttr::get(ctx, threads, regs, AffineMap::get(2, 0, {row, col}, ctx));
}

FailureOr<WarpPartition> mlir::tile::partitionGemm(GemmOp op, int64_t threads,
                                                   std::string &why) {
  MemRefType c = op.getC().getType();
  if (threads % 32 != 0) {
    why = llvm::formatv("tensor-core gemm needs whole warps, but the kernel "
                        "has {0} threads",
                        threads)
              .str();
    return failure();
  }
  return partitionWarps(c.getDimSize(0), c.getDimSize(1), threads / 32,
                        op.getPolicy(), why);
}

bool mlir::tile::isWgmmaFp8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

int64_t mlir::tile::wgmmaK(Type in) { return in.getIntOrFloatBitWidth() == 8 ? 32 : kWgmmaK; }

int64_t mlir::tile::wgmmaKAtomBytes(MemRefType kMajor) {
  int64_t bits = kMajor.getElementTypeBitWidth();
  int64_t rowBytes = kMajor.getDimSize(1) * bits / 8;
  if (rowBytes > 0 && rowBytes % kWgmmaAtomBytes == 0)
    return kWgmmaAtomBytes;
  if ((bits == 16 || bits == 8) && (rowBytes == 64 || rowBytes == 32))
    return rowBytes;
  return 0;
}

int64_t mlir::tile::wgmmaKBlock(MemRefType kMajor) {
  int64_t atom = kWgmmaAtomBytes * 8 / kMajor.getElementTypeBitWidth();
  return kMajor.getDimSize(1) > atom ? atom : 0;
}

FailureOr<WarpPartition> mlir::tile::wgmmaPartition(GemmOp op, int64_t threads) {
  MemRefType a = op.getA().getType(), b = op.getB().getType(), c = op.getC().getType();
  Type in = a.getElementType();
  // 8-bit operands (fp8, or int8 with an int32 accumulator) are read
  // K-major from shared memory only, as `fp8` says below.
  bool int8 = in.isInteger(8);
  bool fp8 = isWgmmaFp8(in) || int8;
  // A from registers (16-bit, M x K in the mma operand layout), or shared.
  bool aRegisters = getPlace(a) == Place::Fragment;
  if (aRegisters && (fp8 || a.getDimSize(1) % kWgmmaK != 0))
    return failure();
  if ((!aRegisters && getPlace(a) != Place::Shared) || getPlace(b) != Place::Shared ||
      !(in.isF16() || in.isBF16() || fp8) ||
      (int8 ? b.getElementType() != in
            : fp8 ? !isWgmmaFp8(b.getElementType()) : b.getElementType() != in) ||
      !(int8 ? c.getElementType().isInteger(32) : c.getElementType().isF32()))
    return failure();
  // K rows of whole 128-byte swizzle atoms; more than one atom is stored as
  // column blocks of one atom each, which needs the buffer itself (a stage
  // view or the allocation) for A, and for a K-major B.
  auto isBuffer = [](Value v) { return static_cast<bool>(sharedAllocation(v)); };
  // An M-major A (stored K x M, 16-bit): 64-column blocks of 128-byte rows,
  // as an N-major B (wgmma's transposed A).
  bool mMajorA = op.getTransposeA();
  if (mMajorA && (aRegisters || fp8 || !isBuffer(op.getA()) ||
                  a.getDimSize(1) % kWgmmaColumnBlock != 0))
    return failure();
  int64_t kBytes = a.getDimSize(mMajorA ? 0 : 1) * a.getElementTypeBitWidth() / 8;
  if (!aRegisters && !mMajorA &&
      (!wgmmaKAtomBytes(a) || (kBytes > kWgmmaAtomBytes && !isBuffer(op.getA()))))
    return failure();
  if ((aRegisters || mMajorA) && op.getTransposeB() && !wgmmaKAtomBytes(b))
    return failure(); // a K-major B still has K rows of whole atoms
  if (fp8 && !op.getTransposeB())
    return failure(); // 8-bit wgmma reads K-major operands only
  if (op.getTransposeB() && kBytes > kWgmmaAtomBytes && !isBuffer(op.getB()))
    return failure();
  if (!op.getTransposeB()) {
    // B stored K x N (N-major): kept as column blocks of 64 (128-byte rows),
    // which needs the buffer itself (a stage view or the allocation).
    if (!isBuffer(op.getB()) || b.getDimSize(1) % kWgmmaColumnBlock != 0)
      return failure();
  }
  // One m64 row block per warpgroup, the warpgroups of a row block
  // splitting N; or, with fewer warpgroups than row blocks, as many row
  // blocks per warpgroup as divide them evenly (A from shared memory).
  int64_t groups = threads / 128, m = c.getDimSize(0), n = c.getDimSize(1);
  if (threads % 128 != 0 || m % kWgmmaM != 0)
    return failure();
  int64_t rowBlocks = m / kWgmmaM;
  if (groups < rowBlocks) {
    if (rowBlocks % groups != 0 || n > kWgmmaMaxN)
      return failure();
    WarpPartition p = warpgroupPartition(threads, n, 1);
    p.tileM = kMmaM * (rowBlocks / groups);
    return p;
  }
  if (groups % rowBlocks != 0)
    return failure();
  int64_t groupsN = groups / (m / kWgmmaM);
  // FullRow with warpgroups sharing a row block: mma.sync where every warp
  // can take whole rows, else (as TileLang) the warpgroups split N.
  if (groupsN > 1 && op.getPolicy() == WarpPolicy::FullRow &&
      m % (threads / 32 * kMmaM) == 0)
    return failure();
  if (n % (groupsN * 8) != 0 || n / groupsN > kWgmmaMaxN ||
      (!op.getTransposeB() && groupsN > 1 && (n / groupsN) % kWgmmaColumnBlock != 0))
    return failure();
  return warpgroupPartition(threads, n, groupsN);
}

FailureOr<WarpPartition> mlir::tile::selectedPartition(GemmOp op) {
  MmaAttr mma = op.getMmaAttr();
  if (!mma)
    return op.emitOpError("has no #tile.mma: run tile-select-mma first");
  MemRefType c = op.getC().getType();
  WarpPartition p;
  p.warpsM = mma.getWarpsM();
  p.warpsN = mma.getWarpsN();
  p.tileM = c.getDimSize(0) / p.warpsM;
  p.tileN = c.getDimSize(1) / p.warpsN;
  p.warpgroups = mma.getKind() == MmaKind::Wgmma;
  return p;
}

WarpPartition mlir::tile::warpgroupPartition(int64_t threads, int64_t n, int64_t groupsN) {
  WarpPartition p;
  p.warpsM = threads / 32 / groupsN;
  p.warpsN = groupsN;
  p.tileM = kMmaM;
  p.tileN = n / groupsN;
  p.warpgroups = true;
  return p;
}
