//===- LowerGemm.h - tile.gemm -> ldmatrix + mma.sync -----------*- C++ -*-===//

#ifndef TLC_PASSES_LOWERGEMM_H
#define TLC_PASSES_LOWERGEMM_H

#include "dialects/tile/TileDialect.h"
#include "passes/Conversion/TileToGPU/TileAccess.h"

namespace mlir::tile {

/// Fragment prefetch for a gemm that is all a software-pipelined loop
/// computes. Without it each iteration starts with the pipeliner's wait and
/// barrier and then waits again for its first ldmatrix before any mma.sync
/// can issue. With it the wait and barrier move to just before the mma.sync
/// of the last 16-deep K slice, and right after them each warp loads the
/// first slice of the next iteration's stage, whose latency that last slice's
/// mma.sync hide; the first iteration's first slice is loaded before the loop.
/// All reads of a stage still precede the barrier that lets it be refilled.
struct GemmPrefetch {
  Operation *loop;      ///< the pipelined scf.for
  Value firstA, firstB; ///< views of the first iteration's stage (before the loop)
  Value nextA, nextB;   ///< views of the next iteration's stage (in the loop)
  int32_t pending;      ///< the pipeliner's cp.async wait count
};

/// Lowers `op` in place: each warp loads its A and B sub-tiles from shared
/// memory with ldmatrix and accumulates with mma.sync m16n8k16 into the
/// registers `accRegs` of the C fragment (laid out as `accLayout`). When A is
/// a fragment, its registers `aRegs` (laid out as `aLayout`) are the operand.
/// With `prefetch`, operands are loaded one K slice ahead across iterations.
LogicalResult lowerGemm(GemmOp op, const SharedBuffers &shared, Value tid,
                        int64_t threads, Value accRegs, LayoutAttr accLayout,
                        Value aRegs, LayoutAttr aLayout,
                        const GemmPrefetch *prefetch = nullptr);

/// Lowers `op`, for which wgmmaPartition held (the caller checks it before
/// shared allocations become views), to sm_90a wgmma (with A from the
/// registers `aRegs`, laid out as `aLayout`, when its #tile.mma says so): each
/// warpgroup issues one wgmma.mma_async m64nNk16 per 16-deep K slice on
/// shared-memory descriptors of its 64 rows of A and of B (K-major, 128-byte
/// swizzle, which tile-swizzle-shared-memory gives 128-byte rows), between a
/// wgmma.fence and a commit + wait (the wait left to the next op when that is
/// a wgmma gemm onto the same accumulator); the accumulator stays in `accRegs`. The
/// caller puts a fence.proxy.async before the barriers that publish the
/// operands (see convert-tile-to-gpu).
LogicalResult lowerGemmWgmma(GemmOp op, const SharedBuffers &shared, Value tid,
                             int64_t threads, Value accRegs, LayoutAttr accLayout,
                             Value aRegs = Value(), LayoutAttr aLayout = LayoutAttr());

/// Lowers a wgmma wait: `wgmma.wait_group pending`, pinning the registers
/// `regs` (the completed accumulators' register memrefs) at it.
void lowerWaitWgmma(WaitWgmmaOp op, ArrayRef<Value> regs);

} // namespace mlir::tile

#endif // TLC_PASSES_LOWERGEMM_H
