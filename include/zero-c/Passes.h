/*===- Passes.h - C API of the zero passes and pipelines ----------*- C -*-===*\
|*                                                                            *|
|* Registration and creation of every zero pass, generated from               *|
|* zero/Transforms/Passes.td by mlir-tblgen -gen-pass-capi-header, as         *|
|* upstream's mlir-c/Transforms.h does for its passes:                        *|
|*   mlirRegisterZeroPasses()              every pass, for pipeline strings   *|
|*   mlirCreateZero<Def>(), e.g.                                              *|
|*   mlirCreateZeroZeroPartitionPass()     one pass with default options      *|
|*   mlirRegisterZero<Def>()               one pass                           *|
|* Options are given through a pipeline string (mlirParsePassPipeline or      *|
|* mlirOpPassManagerAddPipeline), e.g.                                        *|
|*   "builtin.module(zero-partition{stage=3 world-size=2})".                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ZERO_C_PASSES_H
#define ZERO_C_PASSES_H

#include "mlir-c/Pass.h"

#include "zero/Transforms/Passes.capi.h.inc"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers every zero pass and the zero pipelines (zero-lower-cpu and its
/// halves) with the pass registry, so that pipeline strings can name them.
/// The C counterpart of mlir::zero::registerZeroPassesAndPipelines.
MLIR_CAPI_EXPORTED void mlirZeroRegisterPassesAndPipelines(void);

#ifdef __cplusplus
}
#endif

#endif // ZERO_C_PASSES_H
