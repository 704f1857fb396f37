//===- TileCAPI.cpp - C API of tlc's registrations ------------------------===//

#include "tlc/native/TileCAPI.h"

#include "dialects/tile/TileDialect.h"
#include "passes/Registration.h"

#include "mlir/CAPI/IR.h"

void tlcRegisterDialects(MlirDialectRegistry registry) {
  mlir::tile::registerTileDialects(*unwrap(registry));
}

void tlcRegisterPasses(void) { mlir::tile::registerTilePipelinePasses(); }

MlirStringRef tlcKnownTargets(void) {
  static const std::string names = mlir::tile::TargetAttr::knownArchitectures();
  return mlirStringRefCreate(names.data(), names.size());
}
