//===- StepAbi.h - The step ABI descriptor ----------------------*- C++ -*-===//
//
// The step ABI descriptor that zero-step-abi records on a bufferized module
// (`zero.step_abi`) and zero-export-step-abi writes into the lowered module
// as JSON for drivers (docs/runtime-abi.md; the symbol names and the entry
// table are declared in runtime/include/zero/step.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_STEPABI_H
#define ZERO_CONVERSION_STEPABI_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Types.h"

#include <optional>
#include <string>

namespace mlir::zero {

/// The descriptor's name of an element type ("f32", "i32", ...; index is
/// "i64"), or nothing for a type the ABI cannot describe.
std::optional<std::string> abiTypeName(Type type);

/// The descriptor as compact JSON: dictionaries become objects, arrays
/// arrays, integers, floats, booleans and strings themselves.
std::string stepAbiToJson(DictionaryAttr abi);

} // namespace mlir::zero

#endif // ZERO_CONVERSION_STEPABI_H
