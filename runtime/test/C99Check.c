/*===- C99Check.c - runtime.h as a C99 client sees it ---------------------===*
 *
 * Compiled with -std=c99 -pedantic-errors -Werror: runtime.h must stay plain
 * C. The functions below let RuntimeApiTest check that C and C++ agree on the
 * struct layouts and that a C caller can use the ABI. Built with -fexceptions
 * so the tests' throwing fatal handler can unwind through these frames.
 *
 *===----------------------------------------------------------------------===*/

#include "zero/runtime.h"

size_t zrt_c99_sizeof_memory_stats(void) { return sizeof(zrt_memory_stats); }
size_t zrt_c99_sizeof_gemm_stats(void) { return sizeof(zrt_gemm_stats); }
size_t zrt_c99_sizeof_gemm_shape(void) { return sizeof(zrt_gemm_shape); }
size_t zrt_c99_offsetof_gemm_shape_seconds(void) {
  return offsetof(zrt_gemm_shape, seconds);
}
size_t zrt_c99_offsetof_memory_stats_num_frees(void) {
  return offsetof(zrt_memory_stats, num_frees);
}
size_t zrt_c99_offsetof_memory_stats_cached_bytes(void) {
  return offsetof(zrt_memory_stats, cached_bytes);
}
size_t zrt_c99_offsetof_memory_stats_reserved_peak(void) {
  return offsetof(zrt_memory_stats, reserved_peak);
}
size_t zrt_c99_offsetof_memory_stats_host_peak_total(void) {
  return offsetof(zrt_memory_stats, host_peak_total);
}
size_t zrt_c99_sizeof_comm_stats(void) { return sizeof(zrt_comm_stats); }
size_t zrt_c99_offsetof_comm_stats_seconds(void) {
  return offsetof(zrt_comm_stats, seconds);
}

/* Collectives from C in a world of one: copies, counted with 0 bytes.
 * Returns 0 on success, or the number of the step that failed. */
int zrt_c99_comm_smoke(void) {
  float in[3] = {1.0f, -2.0f, 3.0f}, out[3] = {0.0f, 0.0f, 0.0f};
  double d = 0.25;
  zrt_comm_stats stats;
  int i;
  if (zrt_world_size() != 1 || zrt_world_rank() != 0)
    return 1;
  zrt_collective_run(zrt_make_collective_op(ZRT_ALL_REDUCE, ZRT_REDUCE_SUM,
                                            ZRT_ELEMENT_F32),
                     in, out, 3);
  for (i = 0; i < 3; ++i)
    if (out[i] != in[i])
      return 2;
  zrt_collective_run(zrt_make_collective_op(ZRT_REDUCE_SCATTER,
                                            ZRT_REDUCE_SUM, ZRT_ELEMENT_F32),
                     in, in, 3);
  zrt_collective_run(zrt_make_collective_op(ZRT_ALL_GATHER, ZRT_REDUCE_NONE,
                                            ZRT_ELEMENT_F32),
                     in, out, 3);
  if (zrt_collective_scalar(zrt_make_collective_op(ZRT_SCALAR_ALL_REDUCE,
                                                   ZRT_REDUCE_SUM,
                                                   ZRT_ELEMENT_F64),
                            d) != d)
    return 3;
  zrt_wait(zrt_collective_start(zrt_make_collective_op(ZRT_ALL_GATHER,
                                                       ZRT_REDUCE_NONE,
                                                       ZRT_ELEMENT_F32),
                                in, out, 3));
  if (zrt_set_sim_link(0.0, 0.0) != 0)
    return 6;
  zrt_get_comm_stats(&stats);
  if (stats.calls[ZRT_ALL_REDUCE] != 1 || stats.calls[ZRT_REDUCE_SCATTER] != 1 ||
      stats.calls[ZRT_ALL_GATHER] != 2 || stats.calls[ZRT_SCALAR_ALL_REDUCE] != 1 ||
      stats.wait_seconds < 0.0)
    return 4;
  for (i = 0; i < ZRT_NUM_COLLECTIVES; ++i)
    if (stats.bytes_sent[i] != 0)
      return 5;
  return 0;
}

/* Category arguments as C passes them: any int. */
const char *zrt_c99_category_name(int category) {
  return zrt_category_name((zrt_category)category);
}
void zrt_c99_set_generated_category(int category) {
  zrt_set_generated_category((zrt_category)category);
}

/* Allocates, runs a 2x2 GEMM, frees and releases the block cache from C.
 * Returns 0 on success, or the number of the step that failed. */
int zrt_c99_smoke(void) {
  float *a = (float *)zrt_alloc(4 * sizeof(float), ZRT_PARAMS);
  float *b = (float *)zrt_alloc(4 * sizeof(float), ZRT_ACTIVATIONS);
  float *c = (float *)zrt_alloc(4 * sizeof(float), ZRT_ACTIVATIONS);
  int i, status = 0;
  zrt_gemm_stats stats;
  zrt_memory_stats memory;
  if (!a || !b || !c)
    status = 1;
  if (status == 0) {
    for (i = 0; i < 4; ++i) {
      a[i] = (float)(i + 1);            /* [[1, 2], [3, 4]] */
      b[i] = (float)(i == 0 || i == 3); /* identity */
    }
    zrt_gemm_f32(0, 0, 2, 2, 2, a, 2, b, 2, 0.0f, c, 2);
    for (i = 0; i < 4; ++i)
      if (c[i] != a[i])
        status = 2;
    zrt_get_gemm_stats(&stats);
    if (stats.calls < 1 || stats.flops < 16)
      status = 3;
  }
  zrt_free(a);
  zrt_free(b);
  zrt_free(c);
  zrt_get_memory_stats(&memory);
  if (status == 0 && memory.cached_bytes < 3 * 64)
    status = 4;
  zrt_release_cached();
  zrt_get_memory_stats(&memory);
  if (status == 0 && (memory.cached_bytes != 0 || memory.reserved_bytes != 0 ||
                      memory.reserved_peak < 3 * 64))
    status = 5;
  return status;
}
