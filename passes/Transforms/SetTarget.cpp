//===- SetTarget.cpp - Put a #tile.target on the module -------------------===//

#include "passes/Passes.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESETTARGET
#include "passes/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

struct TileSetTarget : mlir::tile::impl::TileSetTargetBase<TileSetTarget> {
  using Base::Base;
  void runOnOperation() final {
    if (failed(setTarget(getOperation(), arch)))
      signalPassFailure();
  }
};

} // namespace

LogicalResult mlir::tile::setTarget(ModuleOp module, StringRef arch) {
  TargetAttr target = TargetAttr::getKnown(module.getContext(), arch);
  if (!target)
    return module.emitError() << "unknown target architecture '" << arch
                              << "' (known: " << TargetAttr::knownArchitectures() << ")";
  if (TargetAttr existing = module->getAttrOfType<TargetAttr>(TargetAttr::kAttrName)) {
    if (existing.getArch() == arch)
      return success(); // keep its narrowed features or limits
    return module.emitError() << "the module is for " << existing.getArch()
                              << " but the target asked for is " << arch;
  }
  module->setAttr(TargetAttr::kAttrName, target);
  return success();
}
