//===- InitAll.h - Dialects and interfaces zero-mlir uses -------*- C++ -*-===//
//
// One place that lists the dialects a training step, its ZeRO form and its
// lowering use, with the external interface models (bufferization,
// deallocation) the lowering needs. zero-opt, zero-run and anything that
// embeds our passes call this instead of keeping their own lists.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_INITALL_H
#define ZERO_INITALL_H

namespace mlir {
class DialectRegistry;
namespace zero {

/// Adds our dialect, the upstream dialects we read and produce, and the
/// external models of the interfaces our pipelines rely on.
void registerZeroDialects(DialectRegistry &registry);

/// Registers every zero pass and pipeline with the command-line parser.
void registerZeroPassesAndPipelines();

} // namespace zero
} // namespace mlir

#endif // ZERO_INITALL_H
