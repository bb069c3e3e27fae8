//===- Options.h - The training driver's options ----------------*- C++ -*-===//
//
// The options of zero-run and of compiled training binaries: parsed and
// checked against each other once, then read by the rest of the driver.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_OPTIONS_H
#define ZERO_DRIVER_OPTIONS_H

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace zero::driver {

struct Options {
  unsigned steps = 100;
  uint64_t seed = 0;
  std::string dataFile, initFile, dumpParams, dumpGrads, dumpBatches,
      statsJson, trace;
  std::string saveDir, resume;
  unsigned saveEvery = 0, saveKeep = 2;
  bool fixedBatch = false;
  int threads = 0;
  double commTimeout = 600;
  std::string simLink;
  double linkGbps = 0, linkLatencyUs = 0;
  bool simLinkAlternate = false;
  std::string offload;
  std::string progress = "auto";
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
         weightDecay = 0.01, maxGradNorm = 1.0;
  // The learning-rate schedule (lrAt): linear warmup, then a decay.
  unsigned warmupSteps = 0, decaySteps = 0;
  std::string lrDecay = "none";
  double minLr = -1; ///< -1: a tenth of the peak learning rate.
  std::vector<std::string> hyperOverrides;
  bool checkGrads = false;
  bool tf32 = false;
  bool syncTiming = false;
  double checkTol = 1e-6, checkFloor = 1e-6, checkStep = 1e-4;
  unsigned checkMax = 0;
  bool help = false;
  std::set<std::string> given; ///< Options on the command line, by name.
};

/// Parses the training options; false with a one-line message on error.
bool parseOptions(int argc, char **argv, Options &opts, std::string &error);

/// The learning rate of step t (1-based) under --warmup-steps, --lr-decay,
/// --decay-steps and --min-lr, for the peak `peak` and the floor `minLr`.
double lrAt(const Options &opts, double peak, double minLr, unsigned t);

/// What stops this rank from writing an output the options name, or empty:
/// checked before anything trains (and, in zero-run, before compiling), so
/// that a long run's result is not lost to a path found bad at its end.
/// Nothing is left behind. Rank 0 writes the files; every rank writes into
/// --save's directory.
std::string outputProblem(const Options &opts, int rank);

} // namespace zero::driver

#endif // ZERO_DRIVER_OPTIONS_H
