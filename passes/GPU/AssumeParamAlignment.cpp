//===- AssumeParamAlignment.cpp - Tensor parameters are 16-byte aligned ---===//
//
// The runtime launches a kernel only with tensor data pointers aligned to
// 16 bytes (tlc/runtime/args.py refuses others, naming the parameter; the
// scratch tensors it allocates are aligned further) and always passes the
// descriptor's offset as 0. Saying so in the IR lets LLVM merge the scalar
// accesses of neighbouring elements (a `T.vectorized` loop's, an unrolled
// loop's) into 4-, 8- and 16-byte vector loads and stores.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEASSUMEPARAMALIGNMENT
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-assume-param-alignment"

void mlir::tile::assumeParamAlignment(Operation *root) {
  root->walk([](gpu::GPUFuncOp func) {
    if (!func.isKernel() || func.getBody().empty())
      return;
    Block &entry = func.getBody().front();
    OpBuilder b(&entry, entry.begin());
    for (BlockArgument arg : entry.getArguments()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      // Global tensors only (no memory space), each once.
      if (!type || type.getMemorySpace() || arg.use_empty() ||
          llvm::any_of(arg.getUsers(), [](Operation *u) { return isa<memref::AssumeAlignmentOp>(u); }))
        continue;
      auto assumed = memref::AssumeAlignmentOp::create(b, func.getLoc(), arg, kParamAlignment);
      arg.replaceAllUsesExcept(assumed.getResult(), assumed);
    }
  });
}

namespace {
struct TileAssumeParamAlignment
    : mlir::tile::impl::TileAssumeParamAlignmentBase<TileAssumeParamAlignment> {
  void runOnOperation() final { assumeParamAlignment(getOperation()); }
};
} // namespace
