//===- TileCAPI.h - C API of tlc's registrations ------------------*- C -*-===//

#ifndef TLC_NATIVE_TILECAPI_H
#define TLC_NATIVE_TILECAPI_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers the tile dialect and every upstream dialect, interface and
/// translation tlc's pipeline uses.
MLIR_CAPI_EXPORTED void tlcRegisterDialects(MlirDialectRegistry registry);

/// Registers tlc's passes and the upstream passes of its pipeline, so that
/// textual pipelines can name them.
MLIR_CAPI_EXPORTED void tlcRegisterPasses(void);

/// The architectures #tile.target knows, comma separated ("sm_80, ...").
MLIR_CAPI_EXPORTED MlirStringRef tlcKnownTargets(void);

#ifdef __cplusplus
}
#endif

#endif // TLC_NATIVE_TILECAPI_H
