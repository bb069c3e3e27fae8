/*===- Main.c - main() of zero-compile's training binaries ---------*- C -*-===*
 *
 * Linked after the step's object file, which defines the two symbols below
 * (zero/step.h); everything else is the driver's (zero/driver.h).
 *
 *===----------------------------------------------------------------------===*/

#include "zero/driver.h"

#include <stdio.h>
#include <string.h>

extern const char zero_step_abi[];
extern const zrt_step_entry zero_step_entries[];

static const char kUsage[] =
    "%s: a training step compiled by zero-compile\n"
    "\n"
    "USAGE: [mpirun -np N] %s [options]\n"
    "\n";

int main(int argc, char **argv) {
  const char *tool = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
  tool = tool ? tool + 1 : (argc > 0 && argv[0] ? argv[0] : "train");
  char usage[512];
  snprintf(usage, sizeof usage, kUsage, tool, tool);
  zrt_driver_program program = {tool, zero_step_abi, zero_step_entries, -1.0,
                                usage};
  return zrt_driver_main(argc, argv, &program);
}
