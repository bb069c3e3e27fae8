//===- Progress.cpp - The training loop's progress line -------------------===//

#include "Progress.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>
#include <utility>

namespace zero::driver {

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

ProgressBar::ProgressBar(unsigned total, std::string mode, std::string unit,
                         int ranks)
    : total(total), ranks(ranks), unit(std::move(unit)) {
  if (mode == "auto")
    mode = isatty(STDERR_FILENO) ? "bar" : "lines";
  bar = mode == "bar";
  quiet = mode == "none";
  every = std::max(1u, total / 20);
}

void ProgressBar::update(unsigned done, double loss, double rate, double lr) {
  if (quiet)
    return;
  char lrText[32] = "", rankText[48] = "";
  if (lr >= 0)
    std::snprintf(lrText, sizeof lrText, " lr %.3g", lr);
  if (ranks > 1)
    std::snprintf(rankText, sizeof rankText, " (%.0f a rank)", rate / ranks);
  if (bar) {
    constexpr unsigned width = 30;
    unsigned filled = total ? width * done / total : width;
    std::fprintf(stderr, "\r  step %5u/%u [%s%s] loss %.4f%s  %.0f %s/s%s  ",
                 done, total, std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), loss, lrText,
                 rate, unit.c_str(), rankText);
    if (done == total)
      std::fprintf(stderr, "\n");
    return;
  }
  if (done % every == 0 || done == total || done == 1)
    std::fprintf(stderr, "step %u/%u loss %.6f%s %.0f %s/s%s\n", done,
                 total, loss, lrText, rate, unit.c_str(), rankText);
}

} // namespace zero::driver
