//===- BarrierToGPU.cpp - Barriers and semaphores -------------------------===//
//
// In a warp-specialized kernel the tile program runs on the consumer warps
// only: its barriers (tile-insert-barriers', and the ones the lowerings of
// staged copies and cross-warp reductions put between their writes and
// reads) are a named barrier of those threads, which the producer warps
// never reach. In a tile.ws body likewise: a named barrier of its
// warpgroups (1 + the first one's index).
//
// tile.semaphore_signal / tile.semaphore_wait synchronise blocks through a
// flag in global memory: the block's barrier, then its first thread alone
// fences and raises the flag, or spins on it and fences.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/TileToGPU/TileToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// gpu.barrier where the tile program's threads are not the whole block (a
/// warp-specialized kernel's consumers, a tile.ws body's warpgroups): their
/// named barrier.
struct NamedBarrierLowering : TileOpLowering<gpu::BarrierOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(gpu::BarrierOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type();
    ThreadsAt threads = info.at(op);
    NVVM::BarrierOp::create(rewriter, loc, Type(),
                            arith::ConstantIntOp::create(rewriter, loc, i32, threads.barrier),
                            arith::ConstantIntOp::create(rewriter, loc, i32, threads.threads),
                            NVVM::BarrierReductionAttr(), Value());
    rewriter.eraseOp(op);
    return success();
  }
};

/// An `scf.if` on the block's first (consumer) thread; returns a builder in
/// its body.
OpBuilder onFirstThread(OpBuilder &b, Location loc, Value tid) {
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                      arith::ConstantIndexOp::create(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  return OpBuilder::atBlockTerminator(ifOp.thenBlock());
}

/// tile.semaphore_signal: barrier; thread 0: fence (the block's writes,
/// ordered before it by the barrier, become visible at GPU scope first),
/// then the flag set by an atomic exchange.
struct SemaphoreSignalLowering : TileOpLowering<SemaphoreSignalOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(SemaphoreSignalOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    gpu::BarrierOp::create(rewriter, loc);
    OpBuilder b = onFirstThread(rewriter, loc, info.at(op).tid);
    NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
    Value level = arith::ConstantIntOp::create(b, loc, b.getI32Type(), op.getLevel());
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign, level, adaptor.getFlags(),
                                ValueRange{adaptor.getIndex()});
    rewriter.eraseOp(op);
    return success();
  }
};

/// tile.semaphore_wait: thread 0 (with a count, each of the first `count`
/// threads, one flag each) spins on an atomic read of its flag (an add of
/// 0: it reads the flag where every block's atomics meet, never a stale
/// cached copy) until it reaches the level, then fences; the barrier after
/// lets the block on.
struct SemaphoreWaitLowering : TileOpLowering<SemaphoreWaitOp> {
  using TileOpLowering::TileOpLowering;
  LogicalResult matchAndRewrite(SemaphoreWaitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ThreadsAt threads = info.at(op);
    auto spinOn = [&](OpBuilder &b, Value index) {
      Type i32 = b.getI32Type();
      auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
      b.createBlock(&spin.getBefore());
      Value zero = arith::ConstantIntOp::create(b, loc, i32, 0);
      Value level = arith::ConstantIntOp::create(b, loc, i32, op.getLevel());
      Value flag = memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi, zero,
                                               adaptor.getFlags(), ValueRange{index});
      Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, flag, level);
      scf::ConditionOp::create(b, loc, below, ValueRange{});
      b.createBlock(&spin.getAfter());
      scf::YieldOp::create(b, loc);
      b.setInsertionPointAfter(spin);
    };
    if (!adaptor.getCount()) {
      OpBuilder b = onFirstThread(rewriter, loc, threads.tid);
      spinOn(b, adaptor.getIndex());
      NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
    } else {
      // Thread t polls flags index + t, index + t + threads, ... below count.
      Value step = arith::ConstantIndexOp::create(rewriter, loc, threads.threads);
      auto loop = scf::ForOp::create(rewriter, loc, threads.tid, adaptor.getCount(), step);
      {
        OpBuilder b = OpBuilder::atBlockTerminator(loop.getBody());
        spinOn(b, arith::AddIOp::create(b, loc, adaptor.getIndex(), loop.getInductionVar()));
      }
      NVVM::MembarOp::create(rewriter, loc, NVVM::MemScopeKind::GPU);
    }
    gpu::BarrierOp::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateBarrierToGPUPatterns(const TypeConverter &converter,
                                              const KernelInfo &info,
                                              RewritePatternSet &patterns) {
  patterns.add<NamedBarrierLowering>(converter, info);    // gpu.barrier
  patterns.add<SemaphoreSignalLowering>(converter, info); // tile.semaphore_signal
  patterns.add<SemaphoreWaitLowering>(converter, info);   // tile.semaphore_wait
}
