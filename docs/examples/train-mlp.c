/* Training a compiled step from your own C program.
 *
 *   zero-gen mlp --batch 8 --input 4 --hidden 8 --output 2 -o mlp.mlir
 *   zero-compile -c mlp.mlir -o step.o        # also writes step.h
 *   cc -std=c99 -I. -I<zero>/runtime/include train-mlp.c step.o \
 *      -L<zero>/build/lib -lzero_runtime -lm -o train-mlp
 *
 * step.h declares forward_backward and optimizer with one pointer per
 * buffer (contiguous, row-major, in the shapes its comments give) and
 * hyper-parameters by value. The program owns every buffer; the step only
 * allocates its temporaries, through the runtime. This one fits
 * y = tanh(x @ W) for a fixed random W; integration_tests/zero-compile/
 * object.test builds and runs it. */
#include "step.h"

#include "zero/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define B 8
#define IN 4
#define H 8
#define OUT 2

static float uniform(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((*state >> 8) & 0xFFFF) / 65536.0f - 0.5f;
}

int main(void) {
  if (zrt_init("cpu", 1) != 0) {
    fprintf(stderr, "train-mlp: %s\n", zrt_last_error());
    return 1;
  }
  unsigned seed = 1;
  /* Parameters, gradients and AdamW's two states per parameter. */
  static float w0[IN * H], b0[H], w1[H * OUT], b1[OUT];
  static float gw0[IN * H], gb0[H], gw1[H * OUT], gb1[OUT];
  static float m_w0[IN * H], v_w0[IN * H], m_b0[H], v_b0[H];
  static float m_w1[H * OUT], v_w1[H * OUT], m_b1[OUT], v_b1[OUT];
  static float x[B * IN], y[B * OUT], teacher[IN * OUT];
  float loss = 0;
  for (int i = 0; i < IN * H; ++i)
    w0[i] = uniform(&seed);
  for (int i = 0; i < H * OUT; ++i)
    w1[i] = uniform(&seed);
  for (int i = 0; i < IN * OUT; ++i)
    teacher[i] = 2 * uniform(&seed);

  float first = 0;
  for (int step = 1; step <= 200; ++step) {
    for (int r = 0; r < B; ++r) {
      for (int i = 0; i < IN; ++i)
        x[r * IN + i] = 2 * uniform(&seed);
      for (int o = 0; o < OUT; ++o) {
        float acc = 0;
        for (int i = 0; i < IN; ++i)
          acc += x[r * IN + i] * teacher[i * OUT + o];
        y[r * OUT + o] = tanhf(acc);
      }
    }
    forward_backward(w0, b0, w1, b1, x, y, &loss, gw0, gb0, gw1, gb1);
    optimizer(w0, b0, w1, b1, gw0, gb0, gw1, gb1, m_w0, v_w0, m_b0, v_b0,
              m_w1, v_w1, m_b1, v_b1, /*lr=*/0.01f, /*beta1=*/0.9f,
              /*beta2=*/0.999f, /*eps=*/1e-8f, /*weight_decay=*/0.0f,
              /*step=*/(float)step);
    if (step == 1) {
      first = loss;
      printf("loss at step 1: %.6f\n", loss);
    }
  }
  printf("loss at step 200: %.6f (%s)\n", loss,
         loss < 0.5f * first ? "fell" : "did not fall");
  zrt_shutdown();
  return loss < 0.5f * first ? 0 : 1;
}
