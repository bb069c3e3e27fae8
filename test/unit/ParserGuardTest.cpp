//===- ParserGuardTest.cpp - ParserGuard unit tests -----------------------===//
//
// The guard must flag exactly the text that crashes the MLIR 22 parsers and
// nothing that parses fine.
//
//===----------------------------------------------------------------------===//

#include "zero/Support/ParserGuard.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace {

/// Runs the guard on `text`; returns the diagnostics it printed ("" if none).
std::string screen(llvm::StringRef text, bool &ok) {
  llvm::SourceMgr sourceMgr;
  std::string out;
  llvm::raw_string_ostream os(out);
  sourceMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &diag, void *ctx) {
        diag.print(nullptr, *static_cast<llvm::raw_string_ostream *>(ctx),
                   /*ShowColors=*/false);
      },
      &os);
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "input"), llvm::SMLoc());
  ok = mlir::zero::screenForParserCrashes(sourceMgr, id);
  return out;
}

TEST(ParserGuardTest, AcceptsWellFormedLists) {
  bool ok;
  for (const char *text : {
           "%t = linalg.transpose ins(%a : tensor<2x4xf32>) outs(%b : "
           "tensor<4x2xf32>) permutation = [1, 0]",
           "linalg.broadcast ins(%a : tensor<4xf32>) outs(%b : "
           "tensor<2x4xf32>) dimensions = [0]",
           "linalg.reduce ins(%a : tensor<4xf32>) outs(%b : tensor<f32>) "
           "dimensions = []",
           "x) dimensions = [ 0x1 , -2 ]",
           // Keys of generic attribute dictionaries go through the safe
           // attribute parser: not checked.
           "\"linalg.transpose\"(%a, %b) <{permutation = array<i64: 1, 0>}>",
           "{dimensions = 7 : i64}",
           // Comments and strings are skipped.
           "// ) permutation = [#]\n\") permutation = 1\"",
           "linalg.generic {indexing_maps = [#map, #map], iterator_types = "
           "[\"parallel\", \"reduction\"]} ins(%a : tensor<2xf32>)",
           "linalg.generic {iterator_types = []}",
           // A list of anything else is reported by the upstream parser.
           "linalg.generic {iterator_types = \"parallel\"}",
           // The generic form goes through the safe attribute parser.
           "\"linalg.generic\"(%a) <{iterator_types = "
           "[#linalg.iterator_type<parallel>]}>",
           "{a = array<i64: 1, 2>, b = array<f32>, c = array<indexed: 1>}",
       }) {
    EXPECT_EQ(screen(text, ok), "") << text;
    EXPECT_TRUE(ok) << text;
  }
}

TEST(ParserGuardTest, FlagsListsThatCrashUpstream) {
  bool ok;
  for (const char *text : {
           "outs(%b : tensor<4x2xf32>) permutation = [1= 0]",
           "outs(%b : tensor<4x2xf32>) permutation = [#1, 0]",
           "outs(%b : tensor<4x2xf32>) dimensions = 1",
           "outs(%b : tensor<f32>) dimensions = [0, 1",
           "outs(%b : tensor<f32>) dimensions = [1.5]",
           "outs(%b : tensor<f32>) dimensions = [99999999999999999999]",
           "outs(%b : tensor<f32>) dimensions = [0,]",
       }) {
    std::string diag = screen(text, ok);
    EXPECT_FALSE(ok) << text;
    EXPECT_NE(diag.find("error: malformed '"), std::string::npos) << diag;
  }
}

TEST(ParserGuardTest, FlagsIteratorTypesThatAreNotStrings) {
  bool ok;
  for (const char *text : {
           "linalg.generic {indexing_maps = [#map], iterator_types = [f32]}",
           "linalg.generic {iterator_types = [\"parallel\", 1]}",
           "linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], "
           "iterator_types = [#linalg.iterator_type<parallel>]}",
           "linalg.generic {iterator_types = [\"parallel\",]}",
       }) {
    std::string diag = screen(text, ok);
    EXPECT_FALSE(ok) << text;
    EXPECT_NE(diag.find("error: malformed 'iterator_types' list"),
              std::string::npos)
        << diag;
  }
}

TEST(ParserGuardTest, FlagsIndexDenseArrays) {
  bool ok;
  for (const char *text : {"{a = array<index: 1, 2>}", "{a = array< index>}"}) {
    std::string diag = screen(text, ok);
    EXPECT_FALSE(ok) << text;
    EXPECT_NE(diag.find("error: dense array of 'index' is not supported"),
              std::string::npos)
        << diag;
  }
}

TEST(ParserGuardTest, FlagsNegativeConcatDims) {
  bool ok;
  EXPECT_EQ(screen("%c = tensor.concat dim(1) %a, %b : (tensor<2x2xf32>, "
                   "tensor<2x2xf32>) -> tensor<2x4xf32>",
                   ok),
            "");
  EXPECT_TRUE(ok);
  for (const char *text :
       {"%c = tensor.concat dim(-1) %a, %b : (tensor<2x2xf32>, "
        "tensor<2x2xf32>) -> tensor<2x4xf32>",
        "%c = \"tensor.concat\"(%a, %b) <{dim = -9 : i64}> : "
        "(tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>"}) {
    std::string out = screen(text, ok);
    EXPECT_FALSE(ok) << text;
    EXPECT_NE(out.find("tensor.concat's dim must be a dimension of the "
                       "operands"),
              std::string::npos)
        << out;
  }
}

TEST(ParserGuardTest, ReportsEveryOccurrenceWithItsLine) {
  bool ok;
  std::string diag = screen("outs(%b) permutation = [x]\n"
                            "ok) permutation = [0]\n"
                            "outs(%c) dimensions = [=]\n",
                            ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(diag.find("input:1:10: error: malformed 'permutation'"),
            std::string::npos)
      << diag;
  EXPECT_NE(diag.find("input:3:10: error: malformed 'dimensions'"),
            std::string::npos)
      << diag;
  EXPECT_EQ(diag.find("input:2:"), std::string::npos) << diag;
}

} // namespace
