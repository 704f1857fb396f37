//===- GridConstantParams.cpp - Tensor maps as __grid_constant__ params ---===//

#include "passes/Passes.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEGRIDCONSTANTPARAMS
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

#define DEBUG_TYPE "tile-grid-constant-params"

/// The size of a CUtensorMap, and its alignment (CUDA 13's cuda.h, and
/// nvcc's parameters, align it to 128 bytes; the driver needs 64).
static constexpr int64_t kTensorMapBytes = 128, kTensorMapAlign = 128;

void mlir::tile::markGridConstantParams(Operation *root) {
  root->walk([](LLVM::LLVMFuncOp func) {
    auto count = func->getAttrOfType<IntegerAttr>(kTensorMapsAttr);
    if (!count)
      return;
    MLIRContext *ctx = func.getContext();
    Builder b(ctx);
    unsigned n = func.getNumArguments();
    auto bytes = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), kTensorMapBytes);
    for (unsigned i = n - count.getInt(); i < n; ++i) {
      func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(), TypeAttr::get(bytes));
      func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(kTensorMapAlign));
      func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(), b.getUnitAttr());
    }
    func->removeAttr(kTensorMapsAttr);
  });
}

namespace {
struct TileGridConstantParams
    : mlir::tile::impl::TileGridConstantParamsBase<TileGridConstantParams> {
  void runOnOperation() final { markGridConstantParams(getOperation()); }
};
} // namespace
