//===- tlc-opt.cpp - The tlc optimizer driver -----------------------------===//
//
// MlirOptMain with the tile dialect, every tlc pass, and the upstream
// dialects and passes that tlc's pipeline emits and runs.
//
//===----------------------------------------------------------------------===//

#include "passes/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tile::registerTileDialects(registry);
  mlir::tile::registerTilePipelinePasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tlc optimizer driver\n", registry));
}
