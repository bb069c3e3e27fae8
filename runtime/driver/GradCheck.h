//===- GradCheck.h - --check-grads: gradients checked -----------*- C++ -*-===//
//
// forward_backward's gradients compared with finite differences of its
// loss, parameter by parameter, at the initial parameters.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_GRADCHECK_H
#define ZERO_DRIVER_GRADCHECK_H

#include "Abi.h"
#include "Buffers.h"
#include "Options.h"

namespace zero::driver {

/// Prints a line per parameter and a JSON summary; returns the exit code
/// (1 if a gradient's relative error exceeds --check-grads-tol).
int checkGradients(const Abi &abi, const Entry &fb, Buffers &b,
                   const Options &opts);

} // namespace zero::driver

#endif // ZERO_DRIVER_GRADCHECK_H
