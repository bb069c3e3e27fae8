/*===- driver.h - The MLIR-free training driver --------------------*- C -*-===*
 *
 * The training loop that zero-run and zero-compile's binaries share: it reads
 * a compiled step's ABI descriptor (zero/step.h, docs/runtime-abi.md) and
 * nothing else about the model, then initializes parameters (each as its
 * descriptor says), feeds batches, calls the entry functions, and reports
 * progress, losses, memory and communication. Under mpirun every rank runs
 * it; rank 0 prints and writes files. C99-compatible.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_DRIVER_H
#define ZERO_DRIVER_H

#include "zero/runtime.h"
#include "zero/step.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zrt_driver_program {
  /* The tool's name for messages ("zero-run", or the binary's name). */
  const char *tool;
  /* The descriptor (NUL-terminated JSON) and the entry table. */
  const char *abi_json;
  const zrt_step_entry *entries;
  /* Seconds spent compiling the step, reported in the statistics; < 0 when
   * the step was compiled ahead of time. */
  double compile_seconds;
  /* The tool's own usage text, printed by --help before the training
   * options (NULL: a generic line). */
  const char *usage;
} zrt_driver_program;

/* The training options' help text (static). */
ZRT_API const char *zrt_driver_usage(void);

/* Whether the training option `name` (without leading dashes, before any
 * '=') takes a value: 1 if it does, 0 for a flag, -1 if there is no such
 * option. Lets a tool with options of its own split its command line. */
ZRT_API int zrt_driver_option_arity(const char *name);

/* Checks `argv[1..argc)` as training options without training (unknown
 * options, missing or malformed values), and that this rank can write the
 * outputs they name (--stats-json, --dump-*, --trace on rank 0, --save's
 * directory on every rank: probed, nothing left behind; sets the world up
 * to learn the rank). Returns 0, or nonzero with a one-line message in
 * `error` (`size` bytes, NUL-terminated). */
ZRT_API int zrt_driver_check_args(int argc, char **argv, char *error,
                                  size_t size);

/* Parses the training options in `argv[1..argc)` (the input file of
 * zero-run must be removed first), sets the runtime up, trains and returns
 * the process exit code. Failures print one line "<tool>: error: ..." and
 * end every rank (zrt_abort). `--help` prints the usage and returns 0. */
ZRT_API int zrt_driver_main(int argc, char **argv,
                            const zrt_driver_program *program);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_DRIVER_H */
