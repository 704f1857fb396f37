//===- TileDialect.cpp - The tile dialect ---------------------------------===//

#include "dialects/tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tile;

#include "dialects/tile/TileDialect.cpp.inc"
#include "dialects/tile/TileEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/tile/TileAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/tile/TileTypes.cpp.inc"

void TileDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/tile/TileTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/tile/TileAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/tile/TileOps.cpp.inc"
      >();
}

Place mlir::tile::getPlace(MemRefType type) {
  Attribute space = type.getMemorySpace();
  if (!space)
    return Place::Global;
  if (auto gpuSpace = dyn_cast<gpu::AddressSpaceAttr>(space)) {
    if (gpuSpace.getValue() == gpu::AddressSpace::Workgroup)
      return Place::Shared;
    if (gpuSpace.getValue() == gpu::AddressSpace::Global)
      return Place::Global;
    return Place::Unknown;
  }
  if (auto tileSpace = dyn_cast<MemorySpaceAttr>(space))
    return tileSpace.getValue() == MemorySpace::Fragment ? Place::Fragment
                                                         : Place::Local;
  return Place::Unknown;
}

StringRef mlir::tile::stringifyPlace(Place place) {
  switch (place) {
  case Place::Global:
    return "global";
  case Place::Shared:
    return "shared";
  case Place::Fragment:
    return "fragment";
  case Place::Local:
    return "local";
  case Place::Unknown:
    break;
  }
  return "unknown";
}

Attribute mlir::tile::getPlaceAttr(MLIRContext *ctx, Place place) {
  switch (place) {
  case Place::Shared:
    return gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  case Place::Fragment:
    return MemorySpaceAttr::get(ctx, MemorySpace::Fragment);
  case Place::Local:
    return MemorySpaceAttr::get(ctx, MemorySpace::Local);
  default:
    return {};
  }
}
