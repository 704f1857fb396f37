//===- BarrierToGPU.cpp - Block barriers of a warp-specialized kernel -----===//
//
// In a warp-specialized kernel the tile program runs on the consumer warps
// only: its barriers (tile-insert-barriers', and the ones the lowerings of
// staged copies and cross-warp reductions put between their writes and
// reads) are a named barrier of those threads, which the producer warps
// never reach.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The named barrier the consumer warps of a warp-specialized kernel meet at
/// (0 is the whole block's).
constexpr int32_t kConsumerBarrier = 1;

/// gpu.barrier in a kernel with a producer warpgroup.
struct ConsumerBarrierLowering : TileOpLowering<gpu::BarrierOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(gpu::BarrierOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    NVVM::BarrierOp::create(rewriter, loc, Type(),
                            arith::ConstantIntOp::create(rewriter, loc, i32, kConsumerBarrier),
                            arith::ConstantIntOp::create(rewriter, loc, i32, info.threads),
                            NVVM::BarrierReductionAttr(), Value());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateBarrierToGPUPatterns(const TypeConverter &converter,
                                              const KernelInfo &info,
                                              RewritePatternSet &patterns) {
  patterns.add<ConsumerBarrierLowering>(converter, info); // gpu.barrier
}
