//===- TileCAPI.cpp - C API of tlc's registrations ------------------------===//

#include "tlc/native/TileCAPI.h"

#include "passes/Registration.h"

#include "mlir/CAPI/IR.h"

void tlcRegisterDialects(MlirDialectRegistry registry) {
  mlir::tile::registerTileDialects(*unwrap(registry));
}

void tlcRegisterPasses(void) { mlir::tile::registerTilePipelinePasses(); }
