//===- Driver.cpp - The MLIR-free training driver -------------------------===//
//
// zrt_driver_main: the training loop of zero-run and of zero-compile's
// binaries. Everything it knows about the model comes from the step ABI
// descriptor: which buffers to allocate (and in which memory category),
// how to initialize each parameter, which batch inputs to fill, which
// hyper-parameters to pass, and which entry functions to call in which order.
//
// This file holds the entry points that check arguments and run; the
// options are Options.cpp's, the run Train.cpp's and TrainReport.cpp's (a
// Trainer, Trainer.h), and the parts it uses Buffers.cpp (buffers and entry
// calls), CheckpointManager.cpp (--save, --resume), GradCheck.cpp,
// TraceWriter.cpp, Progress.cpp, Failing.cpp and TestHooks.cpp (the faults
// integration tests inject).
//
//===----------------------------------------------------------------------===//

#include "zero/driver.h"

#include "Failing.h"
#include "Options.h"
#include "Train.h"

#include <cstdio>
#include <string>

using namespace zero::driver;

extern "C" int zrt_driver_check_args(int argc, char **argv, char *error,
                                     size_t size) {
  Options opts;
  std::string message;
  if (parseOptions(argc, argv, opts, message) &&
      (opts.help ||
       (message = outputProblem(opts, zrt_world_rank())).empty()))
    return 0;
  if (error && size)
    std::snprintf(error, size, "%s", message.c_str());
  return 1;
}

extern "C" int zrt_driver_main(int argc, char **argv,
                               const zrt_driver_program *program) {
  if (!program) {
    std::fprintf(stderr, "zero-driver: error: no program given\n");
    return 1;
  }
  if (program->tool && *program->tool)
    tool = program->tool;
  Options opts;
  std::string error;
  if (!parseOptions(argc, argv, opts, error))
    failAll(error);
  if (opts.help) {
    if (program->usage)
      std::fputs(program->usage, stdout);
    else
      std::printf("%s: train a compiled training step (run it under mpirun "
                  "for more than one rank)\n\nUSAGE: %s [options]\n\n",
                  tool.c_str(), tool.c_str());
    std::fputs(zrt_driver_usage(), stdout);
    return 0;
  }
  if (std::string problem = outputProblem(opts, zrt_world_rank());
      !problem.empty())
    failAll(problem);
  return train(*program, opts);
}
