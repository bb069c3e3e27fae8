//===- Train.h - The training run -------------------------------*- C++ -*-===//
//
// A run of the step the program holds, as the options say: set-up, the
// steps, and the figures and files at the end.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_TRAIN_H
#define ZERO_DRIVER_TRAIN_H

#include "Options.h"

#include "zero/driver.h"

namespace zero::driver {

/// Initializes the runtime, trains `program` as `opts` say (or, with
/// --check-grads, checks its gradients instead) and returns the exit code.
int train(const zrt_driver_program &program, Options &opts);

} // namespace zero::driver

#endif // ZERO_DRIVER_TRAIN_H
