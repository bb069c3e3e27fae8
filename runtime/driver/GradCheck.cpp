//===- GradCheck.cpp - --check-grads: gradients checked -------------------===//

#include "GradCheck.h"

#include "Failing.h"
#include "Json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace zero::driver {

int checkGradients(const Abi &abi, const Entry &fb, Buffers &b,
                   const Options &opts) {
  for (const Param &p : abi.params)
    if (p.dtype != DType::F64)
      failAll("--check-grads needs an f64 training step (finite differences "
              "in f32 cannot resolve 1e-6); generate one with --dtype f64");
  call(fb, b);
  std::vector<std::vector<double>> analytic;
  for (Tensor &g : b.grads) {
    HostView view(g);
    analytic.emplace_back(static_cast<double *>(view.data),
                          static_cast<double *>(view.data) + g.elements);
  }
  auto lossAt = [&]() {
    call(fb, b);
    return readLoss(abi, b);
  };
  double h = opts.checkStep, worst = 0;
  int64_t checked = 0;
  std::printf("%-36s %8s %12s %12s %12s\n", "parameter", "checked",
              "max_abs_err", "max_elem_rel", "norm_rel_err");
  for (size_t i = 0; i < abi.params.size(); ++i) {
    HostView param(b.params[i]);
    auto *x = static_cast<double *>(param.data);
    int64_t n = abi.params[i].numel;
    int64_t count = opts.checkMax == 0 ? n : std::min<int64_t>(n, opts.checkMax);
    double maxAbs = 0, maxRel = 0, diffSq = 0, fdSq = 0;
    for (int64_t c = 0; c < count; ++c) {
      int64_t e = count == n ? c : c * n / count;
      double x0 = x[e];
      double f[4];
      const double offsets[4] = {-2 * h, -h, h, 2 * h};
      for (int k = 0; k < 4; ++k) {
        x[e] = x0 + offsets[k];
        param.store();
        f[k] = lossAt();
      }
      x[e] = x0;
      param.store();
      double fd = (f[0] - 8 * f[1] + 8 * f[2] - f[3]) / (12 * h);
      double g = analytic[i][e];
      double abs = std::fabs(fd - g);
      maxAbs = std::max(maxAbs, abs);
      maxRel = std::max(maxRel, abs / std::max({std::fabs(fd), std::fabs(g),
                                                opts.checkFloor}));
      diffSq += (fd - g) * (fd - g);
      fdSq += fd * fd;
    }
    // The gradient of a tensor is wrong if it points elsewhere: compare the
    // whole (checked part of the) tensor, ||fd - g|| / ||fd||. Elementwise
    // ratios of entries near zero measure only finite-difference noise.
    double normRel =
        std::sqrt(diffSq) / std::max(std::sqrt(fdSq), opts.checkFloor);
    checked += count;
    worst = std::max(worst, normRel);
    std::printf("%-36s %8lld %12.2e %12.2e %12.2e\n",
                abi.params[i].name.c_str(), static_cast<long long>(count),
                maxAbs, maxRel, normRel);
  }
  bool passed = worst <= opts.checkTol;
  JsonValue summary = JsonValue::object();
  summary.set("checked", JsonValue::integer(checked));
  summary.set("max_norm_rel_error", JsonValue::number(worst));
  summary.set("tolerance", JsonValue::number(opts.checkTol));
  summary.set("passed", JsonValue::boolean(passed));
  std::printf("%s\n", summary.dump(-1).c_str());
  std::fflush(stdout);
  if (!passed)
    std::fprintf(stderr,
                 "%s: error: gradient check failed: a gradient's relative "
                 "error is %.2e > %.2e\n",
                 tool.c_str(), worst, opts.checkTol);
  return passed ? 0 : 1;
}

} // namespace zero::driver
