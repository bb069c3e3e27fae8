/*===- Dialects.h - C API of the zero dialect ---------------------*- C -*-===*\
|*                                                                            *|
|* The zero dialect's registration handle, in MLIR's C API conventions        *|
|* (mlir-c/Dialect/*.h), and the dialects a training step is written in.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ZERO_C_DIALECTS_H
#define ZERO_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// mlirGetDialectHandle__zero__(): insert or load the zero dialect with
/// mlirDialectHandleInsertDialect / mlirDialectHandleLoadDialect.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Zero, zero);

/// Inserts into `registry` the zero dialect, the upstream dialects a training
/// step, its ZeRO form and its lowering use (func, linalg, tensor, arith,
/// math, shard, ...), and the interface models the zero pipelines need. The
/// C counterpart of mlir::zero::registerZeroDialects (zero/InitAll.h).
MLIR_CAPI_EXPORTED void
mlirZeroRegisterTrainingStepDialects(MlirDialectRegistry registry);

#ifdef __cplusplus
}
#endif

#endif // ZERO_C_DIALECTS_H
