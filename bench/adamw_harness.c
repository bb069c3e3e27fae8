/* Times the optimizer zero-compile -c generated, alone, for bench/adamw.py.
 *
 * The step is `zero-gen mlp --input IN --hidden HID --output 1`: its
 * optimizer function is AdamW over four tensors, fc0.weight [IN x HID],
 * fc0.bias [HID], fc1.weight [HID x 1] and fc1.bias [1] (weight decay on the
 * two matrices). This program owns p, g and AdamW's two moments, runs
 * `steps` optimizer steps on the runtime's `threads` threads and prints one
 * JSON line: every step's wall time and the largest error of the updated
 * parameters against a double-precision AdamW run on a sample of elements
 * (relative to how far that reference moved them, so an optimizer that did
 * nothing scores 1).
 *
 *   cc -O2 -DIN=1000 -DHID=10000 -I. -I<zero>/runtime/include \
 *      adamw_harness.c step.o -L<zero>/build/lib -lzero_runtime -lm
 *   ./a.out THREADS STEPS
 */
#include "step.h"

#include "zero/runtime.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NUM_TENSORS 4
#define SAMPLE_STRIDE 4099

static const float kLr = 1e-3f, kBeta1 = 0.9f, kBeta2 = 0.999f, kEps = 1e-8f,
                   kWeightDecay = 0.01f;

/* splitmix64: the initial value of element i of tensor t, in [-0.5, 0.5). */
static double unit(uint64_t i, uint64_t t) {
  uint64_t z = i * 4 + t + 0x9E3779B97F4A7C15ull * (t + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *buffer(size_t n) {
  size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  float *p = aligned_alloc(64, bytes);
  if (!p) {
    fprintf(stderr, "adamw_harness: out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s THREADS STEPS\n", argv[0]);
    return 2;
  }
  int threads = atoi(argv[1]), steps = atoi(argv[2]);
  if (threads < 1 || steps < 1) {
    fprintf(stderr, "adamw_harness: THREADS and STEPS must be positive\n");
    return 2;
  }
  if (zrt_init("cpu", threads) != 0) {
    fprintf(stderr, "adamw_harness: %s\n", zrt_last_error());
    return 1;
  }
  const size_t numel[NUM_TENSORS] = {(size_t)IN * HID, HID, HID, 1};
  const int decayed[NUM_TENSORS] = {1, 0, 1, 0};
  float *p[NUM_TENSORS], *g[NUM_TENSORS], *m[NUM_TENSORS], *v[NUM_TENSORS];
  size_t total = 0;
  for (int t = 0; t < NUM_TENSORS; ++t) {
    p[t] = buffer(numel[t]);
    g[t] = buffer(numel[t]);
    m[t] = buffer(numel[t]);
    v[t] = buffer(numel[t]);
    for (size_t i = 0; i < numel[t]; ++i) {
      p[t][i] = (float)(0.1 * unit(i, 2 * t));
      g[t][i] = (float)(0.01 * unit(i, 2 * t + 1));
      m[t][i] = 0;
      v[t][i] = 0;
    }
    total += numel[t];
  }

  double *times = malloc(sizeof(double) * (size_t)steps);
  for (int s = 1; s <= steps; ++s) {
    double start = now();
    optimizer(p[0], p[1], p[2], p[3], g[0], g[1], g[2], g[3], m[0], v[0],
              m[1], v[1], m[2], v[2], m[3], v[3], kLr, kBeta1, kBeta2, kEps,
              kWeightDecay, (float)s);
    times[s - 1] = now() - start;
  }

  /* torch.optim.AdamW's update in double on every SAMPLE_STRIDE-th element
   * (the gradient stays the same every step). */
  double worst = 0;
  for (int t = 0; t < NUM_TENSORS; ++t) {
    for (size_t i = 0; i < numel[t]; i += SAMPLE_STRIDE) {
      double p0 = (double)(float)(0.1 * unit(i, 2 * t));
      double gr = (double)(float)(0.01 * unit(i, 2 * t + 1));
      double pr = p0, mr = 0, vr = 0;
      for (int s = 1; s <= steps; ++s) {
        if (decayed[t])
          pr *= 1 - (double)kLr * kWeightDecay;
        mr = kBeta1 * mr + (1 - (double)kBeta1) * gr;
        vr = kBeta2 * vr + (1 - (double)kBeta2) * gr * gr;
        double bc1 = 1 - pow(kBeta1, s), bc2 = 1 - pow(kBeta2, s);
        pr -= kLr * (mr / bc1) / (sqrt(vr / bc2) + kEps);
      }
      double moved = fabs(pr - p0);
      double err = fabs((double)p[t][i] - pr) / (moved > 0 ? moved : 1);
      if (err > worst)
        worst = err;
    }
  }

  printf("{\"params\": %zu, \"threads\": %d, \"max_rel_err\": %.3e, "
         "\"step_time_s\": [",
         total, threads, worst);
  for (int s = 0; s < steps; ++s)
    printf("%s%.9f", s ? ", " : "", times[s]);
  printf("]}\n");
  zrt_shutdown();
  return 0;
}
