//===- ParserGuard.h - Screen input for upstream parser crashes -*- C++ -*-===//
//
// Some upstream custom-op parsers in MLIR 22 crash instead of reporting an
// error on certain malformed text. Our tools promise that bad input never
// crashes them, so they screen their input with this check before handing it
// to the MLIR parser.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_SUPPORT_PARSERGUARD_H
#define ZERO_SUPPORT_PARSERGUARD_H

#include "llvm/Support/SourceMgr.h"

namespace mlir::zero {

/// Reports (through `sourceMgr`, as located errors) every spot in buffer
/// `bufferId` that is known to crash the MLIR 22 parser, and returns true if
/// there was none.
///
/// Covered today: `linalg.transpose`, `linalg.broadcast` and `linalg.reduce`
/// parse `permutation = [...]` / `dimensions = [...]` with a helper that
/// stores the result of DenseI64ArrayAttr::parse without checking it, so any
/// malformed list (`[1= 0]`, `[#1, 0]`, `1`) dereferences a null attribute.
/// `linalg.generic {... iterator_types = [...]}` with an entry that is not a
/// string (`[f32]`, `[1]`) and `array<index: ...>` crash too, and so does
/// `tensor.concat` with a negative `dim` (its verifier indexes the shape
/// with it).
bool screenForParserCrashes(llvm::SourceMgr &sourceMgr, unsigned bufferId);

} // namespace mlir::zero

#endif // ZERO_SUPPORT_PARSERGUARD_H
