//===- Dialects.cpp - C API of the zero dialect ---------------------------===//

#include "zero-c/Dialects.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Zero, zero, mlir::zero::ZeroDialect)

void mlirZeroRegisterTrainingStepDialects(MlirDialectRegistry registry) {
  mlir::zero::registerZeroDialects(*unwrap(registry));
}
