//===- Registration.h - What tlc's tools and bindings register --*- C++ -*-===//

#ifndef TLC_PASSES_REGISTRATION_H
#define TLC_PASSES_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::tile {

/// Registers the tile dialect, the upstream dialects tlc's pipeline emits,
/// their LLVM conversion and translation interfaces, and the NVVM target.
void registerTileDialects(DialectRegistry &registry);

/// Registers the tlc passes and the upstream passes of tlc's pipeline.
void registerTilePipelinePasses();

} // namespace mlir::tile

#endif // TLC_PASSES_REGISTRATION_H
