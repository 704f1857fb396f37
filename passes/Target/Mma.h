//===- Mma.h - Tensor-core (mma.sync m16n8k16) tiling and layouts -*- C++ -*-===//
//
// The one place that knows how a block's gemm is split over warps and which
// thread holds which accumulator element; layout inference and the gemm
// lowering both ask it.
//
//===----------------------------------------------------------------------===//

#ifndef TLC_PASSES_MMA_H
#define TLC_PASSES_MMA_H

#include "dialects/tile/TileDialect.h"

#include <string>

namespace mlir::tile {

/// The mma.sync atom: m16n8k16.
constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;

/// How a block's M x N output tile is split over its warps.
struct WarpPartition {
  int64_t warpsM = 1, warpsN = 1; ///< warps along M and N
  int64_t tileM = 0, tileN = 0;   ///< each warp's sub-tile
  /// Warp order. mma.sync: warp w is row block w / warpsN, column block
  /// w % warpsN. wgmma (whole warpgroups): the four warps of warpgroup g are
  /// consecutive row blocks, g's place in the grid of warpgroups is row
  /// g / warpsN, column g % warpsN, so warp w is row block
  /// 4 (w / 4 / warpsN) + w % 4, column block w / 4 % warpsN. The two orders
  /// agree when warpsN = 1.
  bool warpgroups = false;
  int64_t atomsM() const { return tileM / kMmaM; }
  int64_t atomsN() const { return tileN / kMmaN; }
  /// The row block and column block of warp `warp` (an index expression).
  std::pair<AffineExpr, AffineExpr> warpAt(AffineExpr warp) const;
};

/// Splits an M x N tile over `warps` warps by `policy`; fails with the reason
/// when the tile cannot be covered by m16n8 atoms that way.
FailureOr<WarpPartition> partitionWarps(int64_t m, int64_t n, int64_t warps,
                                        WarpPolicy policy, std::string &why);

/// The layout of an mma.sync accumulator tile: for thread t = 32 w + l and
/// register r = 4 (i n_atoms + j) + k, the element of atom (i, j) of warp w
/// that PTX's m16n8 C fragment gives lane l as its k-th value.
LayoutAttr getAccumulatorLayout(MLIRContext *ctx, const WarpPartition &p,
                                int64_t threads);

/// The layout of an mma.sync A operand held in registers (M x K, not
/// transposed): for atom (i, kk) of warp w, lane l holds 8 values
/// r = 8 (i K/16 + kk) + e as PTX's m16k16 A fragment gives them; with
/// 32-bit elements (tf32, m16k8 atoms) 4 values r = 4 (i K/8 + kk) + e. Warps
/// that share a row block (warpsN > 1) hold the same values (replicated).
LayoutAttr getOperandALayout(MLIRContext *ctx, const WarpPartition &p, int64_t k,
                             int64_t threads, int64_t elementBits = 16);

/// The K of an mma.sync atom for operands of `in`: 8 for f32 (tf32), else 16.
int64_t mmaSyncK(Type in);

/// The partition of a gemm op, from its shapes, policy and the thread count.
FailureOr<WarpPartition> partitionGemm(GemmOp op, int64_t threads,
                                       std::string &why);

/// The sm_90a wgmma atom: m64nNk16 per warpgroup (4 warps).
constexpr int64_t kWgmmaM = 64, kWgmmaK = 16, kWgmmaMaxN = 256;
/// Columns per block of an N-major B operand: 64 16-bit elements, the
/// 128-byte rows of its swizzle atoms.
constexpr int64_t kWgmmaColumnBlock = 64;

/// The bytes of K a wgmma K-major operand row holds per swizzle atom.
constexpr int64_t kWgmmaAtomBytes = 128;

/// The swizzle atom (bytes of K per row) of a K-major wgmma operand stored
/// as `kMajor` (rows x K): 128 for K rows of whole 128-byte atoms, the row
/// itself for K rows of 64 or 32 bytes (16-bit K tiles of 32 or 16, 8-bit
/// ones of 64 or 32: the 64- and 32-byte swizzles), else 0 (wgmma cannot
/// read it).
int64_t wgmmaKAtomBytes(MemRefType kMajor);

/// The column block (in elements) of a K-major wgmma operand stored as
/// `kMajor` (rows x K): one 128-byte swizzle atom of K per block when K
/// spans several, else 0 (one atom, no blocks).
int64_t wgmmaKBlock(MemRefType kMajor);

/// Whether `type` is an 8-bit float wgmma multiplies (e4m3, e5m2).
bool isWgmmaFp8(Type type);

/// The K extent of one wgmma instruction for inputs of `in`: 32 bytes of
/// them (16 for 16-bit types, 32 for 8-bit ones).
int64_t wgmmaK(Type in);

/// The partition of a gemm that wgmma can run, or failure: A and B in shared
/// memory, A stored M x K (K-major) with K rows of whole 128-byte swizzle
/// atoms (several: stored as column blocks of one atom) or of one 64- or
/// 32-byte atom (wgmmaKAtomBytes), B stored N x K
/// (K-major, likewise) or K x N (N-major, N a
/// multiple of 64, its buffer then stored as 64-column blocks), f16 or bf16
/// in with an f32 accumulator (fp8 with f32, int8 with s32: both K-major,
/// from shared memory), and one m64 row block per warpgroup: the
/// M / 64 row blocks each get G / (M / 64) of the G warpgroups, which split N
/// (each a multiple of 8 up to 256 columns, of 64 when B is N-major; under
/// the FullRow policy only where mma.sync could not give every warp whole
/// rows, which it then does instead). Each warp then holds 16 rows of its
/// warpgroup's columns, which is both the wgmma accumulator fragment and the
/// mma.sync layout of that partition in warpgroup order (tileM = 16). With
/// fewer warpgroups than row blocks (block M 128 on one warpgroup, 256 on
/// two), each warpgroup takes M / 64 / G consecutive row blocks (N up to
/// 256): tileM = 16 per block, each warp holding 16 rows of every block of
/// its warpgroup (getAccumulatorLayout, getOperandALayout).
FailureOr<WarpPartition> wgmmaPartition(GemmOp op, int64_t threads);

/// The partition the gemm's #tile.mma records, or an error on the gemm
/// (naming tile-select-mma) when it has none.
FailureOr<WarpPartition> selectedPartition(GemmOp op);

/// The warpgroup partition of an M x `n` tile over `threads` threads with
/// `groupsN` warpgroups side by side along N: each warp holds 16 rows of its
/// warpgroup's n / groupsN columns.
WarpPartition warpgroupPartition(int64_t threads, int64_t n, int64_t groupsN = 1);

} // namespace mlir::tile

#endif // TLC_PASSES_MMA_H
