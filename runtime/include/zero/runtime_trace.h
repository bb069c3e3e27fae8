/*===- runtime_trace.h - zero-mlir runtime: tracing ----------------*- C -*-===*
 *
 * The events of one traced stretch (zero-run --trace): GEMMs, collectives
 * on the link, the waits for them.
 *
 * A part of the runtime's C ABI; zero/runtime.h includes every part and
 * states the conventions they share.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZERO_RUNTIME_TRACE_H
#define ZERO_RUNTIME_TRACE_H

#include "runtime_collectives.h"
#include "runtime_setup.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===------------------------------------------------------------------===
 * Tracing (zero-run --trace)
 *===------------------------------------------------------------------===*/

/* What a trace event is. */
typedef enum zrt_trace_kind {
  /* A GEMM call (zrt_gemm_*), on the calling thread. */
  ZRT_TRACE_GEMM = 0,
  /* A collective on the link: from the moment it begins (the
   * communication thread takes it up, or a blocking call runs it) to its
   * completion, a simulated link's time included. */
  ZRT_TRACE_COLLECTIVE = 1,
  /* The calling thread blocked in a blocking collective, from the call to
   * its return (the started collectives before it included). */
  ZRT_TRACE_BLOCKED = 2,
  /* The calling thread blocked in zrt_wait, from the call to its return. */
  ZRT_TRACE_WAIT = 3
} zrt_trace_kind;

typedef struct zrt_trace_event {
  zrt_trace_kind kind;
  /* The collective's kind (COLLECTIVE, BLOCKED, WAIT); ZRT_NUM_COLLECTIVES
   * for a GEMM. */
  zrt_collective collective;
  /* Seconds since zrt_trace_start (steady clock). */
  double begin, end;
  /* COLLECTIVE and BLOCKED: the bytes this rank sent. WAIT: 0. */
  uint64_t bytes;
  /* GEMM: 2 * batch * m * n * k; its shape. 0 otherwise. */
  uint64_t flops;
  int64_t batch, m, n, k;
} zrt_trace_event;

/* Clears the trace and starts recording, with times from now on. Cheap
 * when off: the recording points test one flag. */
ZRT_API void zrt_trace_start(void);

/* Stops recording; the events stay until the next zrt_trace_start. */
ZRT_API void zrt_trace_stop(void);

/* The number of events recorded. */
ZRT_API size_t zrt_trace_count(void);

/* Copies event `index` (in the order recorded) into `out`. Returns 0, or
 * nonzero with zrt_last_error() set for an index out of range or a NULL
 * `out`. */
ZRT_API int zrt_trace_get(size_t index, zrt_trace_event *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZERO_RUNTIME_TRACE_H */
