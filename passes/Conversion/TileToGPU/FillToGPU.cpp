//===- FillToGPU.cpp - tile.fill -> per-thread stores ---------------------===//
//
// A fragment is filled register by register by each thread; a shared buffer
// by the whole block, element by element, through its layout; a local
// buffer by each thread alone.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// tile.fill.
struct FillLowering : TileOpLowering<FillOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(FillOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value value = adaptor.getValue();
    if (std::optional<Fragment> f = fragmentOf(op.getDst(), adaptor.getDst())) {
      for (int64_t r = 0; r < f->layout.getRegs(); ++r)
        memref::StoreOp::create(rewriter, loc, value, f->regs,
                                ValueRange{arith::ConstantIndexOp::create(rewriter, loc, r)});
      rewriter.eraseOp(op);
      return success();
    }
    // Shared buffers are filled by all threads together, local ones by each.
    MemRefType type = op.getDst().getType();
    Value by = getPlace(type) == Place::Shared ? info.at(op).tid : Value();
    std::optional<SharedBuffer> shared = sharedBufferOf(op.getDst(), adaptor.getDst());
    forEachVector(rewriter, loc, by, info.at(op).threads, type.getShape(), /*width=*/1,
                  [&](OpBuilder &ob, Location l, ValueRange at) {
                    auto [memref, indices] = sharedAddress(
                        ob, l, shared ? &*shared : nullptr, adaptor.getDst(), at);
                    memref::StoreOp::create(ob, l, value, memref, indices);
                  });
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateFillToGPUPatterns(const TypeConverter &converter,
                                           const KernelInfo &info,
                                           RewritePatternSet &patterns) {
  patterns.add<FillLowering>(converter, info); // tile.fill
}
