/*===- step.h - What a compiled training step exports -------------*- C -*-===*
 *
 * A training step lowered by zero-mlir (zero-compile's object file, or the
 * code zero-run loads) exports, besides its typed entry functions:
 *  - ZRT_STEP_ABI_SYMBOL, a NUL-terminated JSON text: the step ABI
 *    descriptor (docs/runtime-abi.md), which says what every argument of
 *    every entry function is;
 *  - ZRT_STEP_ENTRIES_SYMBOL, an array of zrt_step_entry ending with
 *    {NULL, NULL}: each entry function by name, in its packed form.
 * The driver (zero/driver.h) needs nothing else to train the step. The
 * header is C99 and names no MLIR or LLVM type.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_STEP_H
#define ZERO_STEP_H

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the descriptor's format; a driver refuses other versions. */
#define ZRT_STEP_ABI_VERSION 1

#define ZRT_STEP_ABI_SYMBOL "zero_step_abi"
#define ZRT_STEP_ENTRIES_SYMBOL "zero_step_entries"

/* The packed form of an entry function: args[i] points to argument i, which
 * is the buffer's first element for a buffer argument and the value itself
 * for a scalar (an f32 hyper-parameter: a float). Buffers are contiguous,
 * row-major, of the shape the descriptor gives. */
typedef void (*zrt_packed_fn)(void **args);

typedef struct zrt_step_entry {
  const char *name;
  zrt_packed_fn fn;
} zrt_step_entry;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_STEP_H */
