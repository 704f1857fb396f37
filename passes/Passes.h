//===- Passes.h - tlc passes ------------------------------------*- C++ -*-===//

#ifndef TLC_PASSES_PASSES_H
#define TLC_PASSES_PASSES_H

#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tile {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Lowers the tile ops inside the outlined kernels of `module`.
LogicalResult convertTileToGPU(ModuleOp module);

/// Assigns shared-memory offsets in every kernel of `module`, failing with a
/// message when a kernel needs more than `maxBytes`.
LogicalResult allocateSharedMemory(ModuleOp module, int64_t maxBytes);

/// Assigns layouts to the fragments and parallel loops of `module`.
LogicalResult inferLayouts(ModuleOp module);

/// Outlines every tile program of `module` into a gpu.func kernel.
LogicalResult outlineKernels(ModuleOp module);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::tile

#endif // TLC_PASSES_PASSES_H
