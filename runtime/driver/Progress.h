//===- Progress.h - The training loop's progress line -----------*- C++ -*-===//
//
// What rank 0 shows while it trains: a bar on a terminal, or a line every
// twentieth of the run (and at its first and last steps).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_PROGRESS_H
#define ZERO_DRIVER_PROGRESS_H

#include <string>
#include <vector>

namespace zero::driver {

/// The median of `v` (0 if empty).
double median(std::vector<double> v);

class ProgressBar {
public:
  /// `unit`: what the rate counts (tok for tokens, samples); `ranks`: the
  /// job's, whose rate update() is given (a rank's is shown beside it).
  ProgressBar(unsigned total, std::string mode, std::string unit, int ranks);
  /// `lr` >= 0: the step's scheduled learning rate, shown after the loss.
  void update(unsigned done, double loss, double rate, double lr = -1);

private:
  unsigned total, every;
  int ranks;
  std::string unit;
  bool bar = false, quiet = false;
};

} // namespace zero::driver

#endif // ZERO_DRIVER_PROGRESS_H
