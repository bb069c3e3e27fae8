//===- Passes.cpp - C API of the zero passes and pipelines ----------------===//

#include "zero-c/Passes.h"

#include "zero/InitAll.h"
#include "zero/Transforms/Passes.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::zero;

#ifdef __cplusplus
extern "C" {
#endif

#include "zero/Transforms/Passes.capi.cpp.inc"

#ifdef __cplusplus
}
#endif

void mlirZeroRegisterPassesAndPipelines(void) {
  registerZeroPassesAndPipelines();
}
