//===- TileExtension.cpp - tlc's site-initialization module ---------------===//
//
// Loaded by tlc._mlir_libs at import: registers the dialects every tlc
// context needs and the passes of tlc's pipeline.
//
//===----------------------------------------------------------------------===//

#include "tlc/native/TileCAPI.h"

#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "tlc dialect and pass registration";
  tlcRegisterPasses();
  m.def("register_dialects", [](MlirDialectRegistry registry) {
    tlcRegisterDialects(registry);
  });
  m.def("known_targets", [] {
    MlirStringRef names = tlcKnownTargets();
    return std::string(names.data, names.length);
  });
}
