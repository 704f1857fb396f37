//===- PartialsToGPU.cpp - Stream-K's partial sums ------------------------===//
//
// A fragment's partial sums leave and come back in vectors of registers:
// registers 4q .. 4q + 3 of thread t are the 16 bytes at column
// (q x threads + t) x 4 of the row, so a warp's vector access is 512
// contiguous bytes and the fragment's layout never enters the address.
// Every access of a thread is issued before any is waited for (an owner
// reading several blocks' partials is latency-bound otherwise).
// tile.reduce_partials sums one slice of several such rows (a reduce-scatter
// step), which tile.add_partials with a count gathers back.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
    Value original, regs, slices;
    if constexpr (add) {
      original = op.getDst();
      regs = adaptor.getDst();
      slices = adaptor.getCount();
    } else {
      original = op.getSrc();
      regs = adaptor.getSrc();
    }
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
    // Gathered (count n): vector p of the row comes from row `row + r`, r
    // the slice holding it: r = ((p + 1) n - 1) / V for V vectors a row.
    auto rowOf = [&](Value column) -> Value {
      if (!slices)
        return row;
      Value p1 = arith::AddIOp::create(
          rewriter, loc, arith::DivUIOp::create(rewriter, loc, column, index(kVector)), index(1));
      Value r = arith::DivUIOp::create(
          rewriter, loc,
          arith::SubIOp::create(rewriter, loc, arith::MulIOp::create(rewriter, loc, p1, slices),
                                index(1)),
          index(type.getNumElements() / kVector));
      return arith::AddIOp::create(rewriter, loc, row, r);
    };
    if (add) // all loads first: one round trip for the whole row
      for (Value column : columns)
        theirs.push_back(vector::LoadOp::create(rewriter, loc, vecType, partials,
                                                ValueRange{rowOf(column), column},
                                                /*nontemporal=*/false, llvm::Align(16)));
    for (auto [q, column] : llvm::enumerate(columns)) {
      SmallVector<Value> lanes;
      for (int64_t l = 0; l < kVector && !slices; ++l)
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
        // Gathered slices are the whole sums: they replace the registers.
        Value sum = slices ? other : arith::AddFOp::create(rewriter, loc, lanes[l], other);
        memref::StoreOp::create(rewriter, loc, sum, f->regs, ValueRange{index(q * kVector + l)});
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// tile.reduce_partials: thread t sums vectors begin + t, begin + t +
/// threads, ... of its slice over the rows, eight rows' loads issued at a
/// time (the last group's rows past the count read row `first` and count
/// zero), in row order, and stores each sum into row first + slice.
struct ReducePartialsLowering : TileOpLowering<ReducePartialsOp> {
  using TileOpLowering::TileOpLowering;
  static constexpr int64_t kRowsInFlight = 8;
  LogicalResult matchAndRewrite(ReducePartialsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ThreadsAt threads = info.at(op);
    auto type = op.getPartials().getType();
    int64_t vectors = type.getDimSize(1) / kVector;
    Value partials = adaptor.getPartials(), first = adaptor.getFirst();
    Value count = adaptor.getCount(), slice = adaptor.getSlice();
    auto index = [&](OpBuilder &b, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
    auto vecType = VectorType::get({kVector}, type.getElementType());
    // Slice r: vectors [r V / n, (r + 1) V / n).
    auto bound = [&](Value r) {
      return arith::DivUIOp::create(rewriter, loc,
                                    arith::MulIOp::create(rewriter, loc, r, index(rewriter, vectors)),
                                    count);
    };
    Value begin = bound(slice);
    Value end = bound(arith::AddIOp::create(rewriter, loc, slice, index(rewriter, 1)));
    Value dstRow = arith::AddIOp::create(rewriter, loc, first, slice);
    Value zeros = arith::ConstantOp::create(
        rewriter, loc, vecType, DenseElementsAttr::get(vecType, rewriter.getF32FloatAttr(0)));
    auto vectorsLoop = scf::ForOp::create(
        rewriter, loc, arith::AddIOp::create(rewriter, loc, begin, threads.tid), end,
        index(rewriter, threads.threads));
    {
      OpBuilder b = OpBuilder::atBlockTerminator(vectorsLoop.getBody());
      Value column = arith::MulIOp::create(b, loc, vectorsLoop.getInductionVar(), index(b, kVector));
      auto rows = scf::ForOp::create(
          b, loc, index(b, 0), count, index(b, kRowsInFlight), ValueRange{zeros},
          [&](OpBuilder &rb, Location l, Value k, ValueRange sums) {
            SmallVector<Value> loaded, real;
            for (int64_t j = 0; j < kRowsInFlight; ++j) {
              Value kj = arith::AddIOp::create(rb, l, k, index(rb, j));
              Value in = arith::CmpIOp::create(rb, l, arith::CmpIPredicate::ult, kj, count);
              Value at = arith::AddIOp::create(
                  rb, l, first, arith::SelectOp::create(rb, l, in, kj, index(rb, 0)));
              loaded.push_back(vector::LoadOp::create(rb, l, vecType, partials,
                                                      ValueRange{at, column},
                                                      /*nontemporal=*/false, llvm::Align(16)));
              real.push_back(in);
            }
            Value sum = sums[0];
            for (int64_t j = 0; j < kRowsInFlight; ++j)
              sum = arith::SelectOp::create(rb, l, real[j],
                                            arith::AddFOp::create(rb, l, sum, loaded[j]), sum);
            scf::YieldOp::create(rb, l, ValueRange{sum});
          });
      vector::StoreOp::create(b, loc, rows.getResult(0), partials, ValueRange{dstRow, column},
                              /*nontemporal=*/false, llvm::Align(16));
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
  patterns.add<ReducePartialsLowering>(converter, info);            // tile.reduce_partials
}
