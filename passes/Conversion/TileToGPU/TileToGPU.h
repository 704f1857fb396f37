//===- TileToGPU.h - The tile -> GPU dialect conversion ---------*- C++ -*-===//
//
// convert-tile-to-gpu is a dialect conversion of each outlined kernel: a type
// converter gives every buffer its per-thread form, and one pattern per tile
// op rewrites the op into per-thread gpu/nvgpu/nvvm code. The patterns read
// only what earlier passes recorded (layouts, #tile.mma, #tile.shared,
// offsets); they decide nothing. One file per op family:
//
//   AllocToGPU.cpp     the type converter; tile.alloc_fragment/local/shared,
//                      tile.stage, tile.shared_ptr, element accesses of
//                      local and laid-out shared buffers
//   CopyToGPU.cpp      tile.copy, tile.tma_store
//   FillToGPU.cpp      tile.fill
//   PartialsToGPU.cpp  tile.store_partials, tile.add_partials
//   ParallelToGPU.cpp  tile.parallel, tile.pipelined
//   ReduceToGPU.cpp    tile.reduce
//   MmaSyncToGPU.cpp   tile.gemm on mma.sync
//   WgmmaToGPU.cpp     tile.gemm on wgmma, tile.wait_wgmma
//   BarrierToGPU.cpp   gpu.barrier among a warp-specialized kernel's consumers,
//                      tile.semaphore_signal/wait
//
//===----------------------------------------------------------------------===//

#ifndef TLC_PASSES_CONVERSION_TILETOGPU_TILETOGPU_H
#define TLC_PASSES_CONVERSION_TILETOGPU_TILETOGPU_H

#include "passes/Conversion/TileToGPU/TileAccess.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tile {

/// The named barrier the consumer warps of a warp-specialized kernel meet at
/// (0 is the whole block's); a tile.ws body's warpgroups meet at 1 + the
/// index of their first warpgroup (a kernel has one or the other), bodies
/// of warps at 1 to kLastBodyBarrier (the program's named barriers take the
/// others).
constexpr int32_t kConsumerBarrier = 1;
constexpr int32_t kLastBodyBarrier = 8;

/// The threads a tile op runs on: the kernel's tile-program threads, or a
/// tile.ws body's warpgroups (their thread index counted from their first).
struct ThreadsAt {
  Value tid;           ///< the thread's index among them
  int64_t threads = 0; ///< how many
  /// The named barrier they meet at (0: the whole block's __syncthreads).
  int32_t barrier = 0;
};

/// What the patterns converting one kernel share.
struct KernelInfo {
  Value tid;           ///< gpu.thread_id x
  int64_t threads = 0; ///< the threads that run the tile program (the consumers)
  /// The barrier the tile program's threads meet at: 0, or a named barrier
  /// of the consumers in a warp-specialized kernel.
  int32_t barrier = 0;
  /// The scf.if each tile.ws body became, and the threads that run it.
  DenseMap<Operation *, ThreadsAt> groups;
  /// The threads running `op`: those of the innermost tile.ws body it is in,
  /// else the tile program's.
  ThreadsAt at(Operation *op) const {
    for (Operation *p = groups.empty() ? nullptr : op->getParentOp(); p; p = p->getParentOp())
      if (auto it = groups.find(p); it != groups.end())
        return it->second;
    return ThreadsAt{tid, threads, barrier};
  }
  Value smem;          ///< the block's dynamic shared memory as bytes (null: none)
  /// Per-thread register arrays (fragments, locals) are allocated before it,
  /// in the kernel's entry block.
  Operation *entry = nullptr;
  bool usesWgmma = false; ///< some gemm of the kernel runs on wgmma
};

/// The per-thread form of each buffer: a fragment becomes each thread's
/// registers (memref<R x T>, R from its allocation's layout), a local buffer a
/// plain memref, a shared buffer with a non-plain #tile.shared layout a flat
/// view of its elements (one stage: a subview from the stage's first
/// element); plain shared buffers and global tensors stay as they are.
class TileTypeConverter : public TypeConverter {
public:
  TileTypeConverter();
};

/// The base of the patterns: each knows its kernel.
template <typename Op>
struct TileOpLowering : OpConversionPattern<Op> {
  TileOpLowering(const TypeConverter &converter, const KernelInfo &info)
      : OpConversionPattern<Op>(converter, info.tid.getContext()),
        info(info) {}
  const KernelInfo &info;
};

void populateAllocToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                                RewritePatternSet &patterns);
void populateCopyToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                               RewritePatternSet &patterns);
void populateFillToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                               RewritePatternSet &patterns);
void populateParallelToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                                   RewritePatternSet &patterns);
void populateReduceToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                                 RewritePatternSet &patterns);
void populateMmaSyncToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                                  RewritePatternSet &patterns);
void populateWgmmaToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                                RewritePatternSet &patterns);
void populatePartialsToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                                   RewritePatternSet &patterns);
void populateBarrierToGPUPatterns(const TypeConverter &converter, const KernelInfo &info,
                                  RewritePatternSet &patterns);

/// The shared-memory address (!llvm.ptr<3>) of element `indices` of the
/// shared buffer `original` (converted: `converted`), its #tile.shared layout
/// applied; an error on `op` for a buffer of dynamic shape.
FailureOr<Value> sharedElementPointer(OpBuilder &b, Operation *op, Value original,
                                      Value converted, ValueRange indices);

/// The fragment operand `original` of an op being converted, with its
/// converted registers (adaptor value); an error on `op` when it is not one.
FailureOr<Fragment> convertedFragment(Operation *op, Value original, Value regs,
                                      StringRef what);

} // namespace mlir::tile

#endif // TLC_PASSES_CONVERSION_TILETOGPU_TILETOGPU_H
