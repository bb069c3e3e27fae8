//===- Models.cpp - Helpers shared by the model generators ----------------===//
//
// Element types and the configuration checks common to all models.
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::zero::models;

StringRef mlir::zero::models::stringifyElementType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  case ElementType::BF16:
    return "bf16";
  }
  llvm_unreachable("unknown element type");
}

std::optional<ElementType>
mlir::zero::models::parseElementType(StringRef name) {
  return llvm::StringSwitch<std::optional<ElementType>>(name)
      .Case("f32", ElementType::F32)
      .Case("f64", ElementType::F64)
      .Case("bf16", ElementType::BF16)
      .Default(std::nullopt);
}

FloatType mlir::zero::models::detail::getFloatType(MLIRContext &ctx,
                                                   ElementType type) {
  switch (type) {
  case ElementType::F32:
    return Float32Type::get(&ctx);
  case ElementType::F64:
    return Float64Type::get(&ctx);
  case ElementType::BF16:
    return BFloat16Type::get(&ctx);
  }
  llvm_unreachable("unknown element type");
}

llvm::Error mlir::zero::models::detail::checkPositive(StringRef what,
                                                      int64_t value) {
  if (value >= 1)
    return llvm::Error::success();
  return llvm::createStringError("%s must be at least 1, got %lld",
                                 what.str().c_str(),
                                 static_cast<long long>(value));
}

llvm::Error
mlir::zero::models::detail::checkElementCount(StringRef what,
                                              ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    if (llvm::MulOverflow(count, size, count))
      return llvm::createStringError(
          "model too large: the %s tensor has more than 2^63 elements",
          what.str().c_str());
  return llvm::Error::success();
}
