//===- embed-opt.cpp - An opt tool that embeds the zero passes ------------===//
//
// What another compiler does to run our passes among its own: register them
// next to upstream ones and hand both to MlirOptMain. Nothing here is
// specific to zero-opt; only installed headers and libraries are used.
//
//===----------------------------------------------------------------------===//

#include "zero/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  // Upstream's canonicalize, cse, ... and ours.
  mlir::registerTransformsPasses();
  mlir::zero::registerZeroPassesAndPipelines();
  mlir::DialectRegistry registry;
  mlir::zero::registerZeroDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "embed-opt: zero passes in another tool\n", registry));
}
