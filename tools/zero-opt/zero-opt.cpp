//===- zero-opt.cpp - zero-mlir optimizer driver ----------------*- C++ -*-===//
//
// mlir-opt with the dialects a training step, its ZeRO form and its lowering
// use, plus the zero dialect, passes and pipelines. It is MlirOptMain with
// three additions:
// - the input is read up to a size limit (zero/Support/InputFile.h), so
//   /dev/zero or a pipe that never ends stops with one line;
// - it is screened for text known to crash upstream parsers before it is
//   parsed (zero/Support/ParserGuard.h), so malformed input always ends in
//   an error;
// - the output is written all or nothing (zero/Support/OutputFile.h): a
//   full disk ends in one line and leaves the `-o` file as it was.
//
//===----------------------------------------------------------------------===//

#include "zero/InitAll.h"
#include "zero/Support/InputFile.h"
#include "zero/Support/OutputFile.h"
#include "zero/Support/ParserGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

int main(int argc, char **argv) {
  // A crash prints a stack trace (symbolized where llvm-symbolizer is on
  // PATH), as MlirOptMain's own entry point does.
  llvm::InitLLVM initLLVM(argc, argv);
  zero::ignoreFileSizeSignal();
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

  std::unique_ptr<llvm::MemoryBuffer> input;
  if (config.shouldShowDialects() || config.shouldListPasses()) {
    input = llvm::MemoryBuffer::getMemBuffer("");
  } else {
    auto read = zero::readInputFile(inputFilename);
    if (!read) {
      llvm::errs() << "zero-opt: error: " << toString(read.takeError())
                   << "\n";
      return EXIT_FAILURE;
    }
    input = std::move(*read);
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

  // Like mlir-opt, nothing is written unless everything succeeded; unlike
  // it, the output is held until then and written in one go.
  std::string result;
  llvm::raw_string_ostream os(result);
  if (failed(MlirOptMain(os, std::move(input), registry, config)))
    return EXIT_FAILURE;
  if (llvm::Error e = zero::writeOutputFile(
          outputFilename, [&](llvm::raw_ostream &out) { out << result; })) {
    llvm::errs() << "zero-opt: error: " << toString(std::move(e)) << "\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
