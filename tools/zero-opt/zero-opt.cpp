//===- zero-opt.cpp - zero-mlir optimizer driver ----------------*- C++ -*-===//
//
// mlir-opt with the dialects a training step, its ZeRO form and its lowering
// use, plus the zero dialect, passes and pipelines. It is MlirOptMain with
// one addition: the input is screened for text known to crash upstream
// parsers before it is parsed (zero/Support/ParserGuard.h), so malformed
// input always ends in an error.
//
//===----------------------------------------------------------------------===//

#include "zero/InitAll.h"
#include "zero/Support/ParserGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

int main(int argc, char **argv) {
  // A stack trace on a crash, as MlirOptMain(argc, argv, ...) would install.
  llvm::InitLLVM initLLVM(argc, argv);
  zero::registerZeroPassesAndPipelines();
  // Upstream passes too, so that pipelines can be taken apart and combined
  // with ours on the command line.
  registerAllPasses();
  DialectRegistry registry;
  zero::registerZeroDialects(registry);

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv,
      "zero-mlir optimizer driver: ZeRO passes over training-step IR\n",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input;
  if (config.shouldShowDialects() || config.shouldListPasses())
    input = llvm::MemoryBuffer::getMemBuffer("");
  else
    input = openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "zero-opt: error: " << errorMessage << "\n";
    return EXIT_FAILURE;
  }

  {
    llvm::SourceMgr sourceMgr;
    unsigned id = sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    if (!zero::screenForParserCrashes(sourceMgr, id))
      return EXIT_FAILURE;
  }

  // Like mlir-opt: the output file is kept only if everything succeeded.
  auto output = openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "zero-opt: error: " << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
