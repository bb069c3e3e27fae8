/* STREAM's triad, a[i] = b[i] + q * c[i] on doubles, for bench/adamw.py:
 * the machine's memory bandwidth measured in the same run as the optimizer.
 * OpenMP threads (OMP_NUM_THREADS), static schedule, arrays first touched
 * by the threads that use them, as in McCalpin's stream.c. Prints one JSON
 * line with every repetition's wall time; STREAM counts 24 bytes per
 * element (two reads, one write).
 *
 *   cc -O3 -march=native -fopenmp stream_triad.c -o triad && ./triad N REPEATS
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N REPEATS\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]);
  int repeats = atoi(argv[2]);
  if (n < 1 || repeats < 1) {
    fprintf(stderr, "stream_triad: N and REPEATS must be positive\n");
    return 2;
  }
  double *a = aligned_alloc(64, (size_t)n * sizeof(double) + 64);
  double *b = aligned_alloc(64, (size_t)n * sizeof(double) + 64);
  double *c = aligned_alloc(64, (size_t)n * sizeof(double) + 64);
  double *times = malloc(sizeof(double) * (size_t)repeats);
  if (!a || !b || !c || !times) {
    fprintf(stderr, "stream_triad: out of memory\n");
    return 1;
  }
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.0;
  }
  const double q = 0.5;
  for (int r = 0; r < repeats; ++r) {
    double start = now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + q * c[i];
    times[r] = now() - start;
    /* Keep the next repetition's inputs depending on this one's output. */
    double *t = c;
    c = a;
    a = t;
  }
  double check = 0;
  for (long i = 0; i < n; i += 4096)
    check += a[i] + c[i];
  printf("{\"n\": %ld, \"check\": %.6g, \"time_s\": [", n, check);
  for (int r = 0; r < repeats; ++r)
    printf("%s%.9f", r ? ", " : "", times[r]);
  printf("]}\n");
  return 0;
}
