//===- PartialsToGPU.cpp - tile.store_partials / tile.add_partials --------===//
//
// A fragment's partial sums leave and come back in vectors of registers:
// registers 4q .. 4q + 3 of thread t are the 16 bytes at column
// (q x threads + t) x 4 of the row, so a warp's vector access is 512
// contiguous bytes and the fragment's layout never enters the address.
// Every access of a thread is issued before any is waited for (an owner
// reading several blocks' partials is latency-bound otherwise).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Registers a vector access moves (16 bytes of f32).
constexpr int64_t kVector = 4;

/// tile.store_partials (each vector of registers to its columns) and
/// tile.add_partials (each vector of registers plus its columns).
template <typename Op>
struct PartialsLowering : TileOpLowering<Op> {
  using TileOpLowering<Op>::TileOpLowering;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    constexpr bool add = std::is_same_v<Op, AddPartialsOp>;
    Value original = add ? op->getOperand(2) : op->getOperand(0);
    Value regs = add ? adaptor.getOperands()[2] : adaptor.getOperands()[0];
    FailureOr<Fragment> f =
        convertedFragment(op, original, regs, add ? "its destination" : "its source");
    if (failed(f))
      return failure();
    auto type = cast<MemRefType>(original.getType());
    int64_t count = f->layout.getRegs(), threads = this->info.at(op).threads;
    // (The verifier made the elements fp32: a vector of kVector is 16 bytes.)
    if (count * threads != type.getNumElements() || count % kVector)
      return op.emitOpError("needs a fragment layout that holds each element once, in a "
                            "multiple of ")
             << kVector << " registers (" << count << " registers x " << threads
             << " threads for " << type.getNumElements() << " elements)";
    Location loc = op.getLoc();
    Value partials = adaptor.getPartials(), row = adaptor.getRow();
    auto vecType = VectorType::get({kVector}, type.getElementType());
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v); };
    Value first = arith::MulIOp::create(rewriter, loc, this->info.at(op).tid, index(kVector));
    SmallVector<Value> columns, theirs;
    for (int64_t q = 0; q < count / kVector; ++q)
      columns.push_back(
          arith::AddIOp::create(rewriter, loc, first, index(q * threads * kVector)));
    if (add) // all loads first: one round trip for the whole row
      for (Value column : columns)
        theirs.push_back(vector::LoadOp::create(rewriter, loc, vecType, partials,
                                                ValueRange{row, column},
                                                /*nontemporal=*/false, llvm::Align(16)));
    for (auto [q, column] : llvm::enumerate(columns)) {
      SmallVector<Value> lanes;
      for (int64_t l = 0; l < kVector; ++l)
        lanes.push_back(memref::LoadOp::create(rewriter, loc, f->regs,
                                               ValueRange{index(q * kVector + l)}));
      if (!add) {
        Value v = vector::FromElementsOp::create(rewriter, loc, vecType, lanes);
        vector::StoreOp::create(rewriter, loc, v, partials, ValueRange{row, column},
                                /*nontemporal=*/false, llvm::Align(16));
        continue;
      }
      for (int64_t l = 0; l < kVector; ++l) {
        Value other = vector::ExtractOp::create(rewriter, loc, theirs[q], l);
        Value sum = arith::AddFOp::create(rewriter, loc, lanes[l], other);
        memref::StoreOp::create(rewriter, loc, sum, f->regs, ValueRange{index(q * kVector + l)});
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populatePartialsToGPUPatterns(const TypeConverter &converter,
                                               const KernelInfo &info,
                                               RewritePatternSet &patterns) {
  patterns.add<PartialsLowering<StorePartialsOp>>(converter, info); // tile.store_partials
  patterns.add<PartialsLowering<AddPartialsOp>>(converter, info);   // tile.add_partials
}
