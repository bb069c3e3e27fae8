//===- Buffers.h - The run's buffers and entry calls ------------*- C++ -*-===//
//
// The run's parameters, gradients, optimizer states, batches and
// hyper-parameters in runtime memory (or on the NVMe tier), views of them
// the driver can read and write, and calls of the step's entries on them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DRIVER_BUFFERS_H
#define ZERO_DRIVER_BUFFERS_H

#include "Abi.h"
#include "Failing.h"

#include "zero/runtime.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zero::driver {

struct Tensor {
  void *data = nullptr;
  /// On the NVMe tier instead of in memory: the extent's handle.
  int64_t extent = 0;
  /// In host memory next to the device (the host reads it directly).
  bool host = false;
  int64_t elements = 0;
  DType dtype = DType::F32;
  size_t bytes() const { return static_cast<size_t>(elements) * dtypeBytes(dtype); }
  bool held() const { return data || extent; }
};

/// A zero-filled tensor counted in `category`: in memory, with `nvme` an
/// extent of the NVMe tier, with `host` in host memory next to the device
/// (zero-offload's optimizer=host).
Tensor allocate(int64_t elements, DType dtype, zrt_category category,
                bool nvme = false, bool host = false);

/// Whether the selected backend's buffers are host memory (cpu) or device
/// memory the driver reaches through copies (cuda); set after zrt_init.
extern bool hostMemory;

/// A tensor's values in memory for the driver to read or change: the
/// tensor itself, or for one on the NVMe tier or in device memory a copy in
/// the driver's own memory (not the runtime's: the step's figures stay its
/// own) that `store` writes back.
class HostView {
public:
  explicit HostView(Tensor &t, bool load = true) : t(&t) {
    if (!t.extent && (hostMemory || t.host)) {
      data = t.data;
      return;
    }
    copy.assign(t.bytes(), 0);
    data = copy.data();
    if (!load)
      return;
    if (t.extent ? zrt_nvme_read(t.extent, data, t.bytes()) != 0
                 : (zrt_copy_to_host(data, t.data, t.bytes()), false))
      fail(zrt_last_error());
  }
  void store() {
    if (t->extent) {
      if (zrt_nvme_write(t->extent, data, t->bytes()) != 0)
        fail(zrt_last_error());
    } else if (!hostMemory && !t->host) {
      zrt_copy_from_host(t->data, data, t->bytes());
    }
  }
  Tensor *t;
  std::vector<char> copy;
  void *data = nullptr;
};

/// The run's buffers, by role and descriptor index.
struct Buffers {
  std::vector<Tensor> params, grads, states, batch, hyperBuffers;
  Tensor loss;
  /// Hyper-parameter values in descriptor order.
  std::vector<double> hypers;
};

/// Sets each optimizer state of kind "master" (a mixed-precision step's
/// higher-precision copy of its parameter) to its parameter, converted: the
/// whole parameter, or this rank's slice of it when the state is sharded and
/// the parameter is not (stages 1-2); padding past the parameter is zero.
/// Every other state starts at zero.
void initMasterStates(const Abi &abi, Buffers &b, int rank);

/// Calls `entry` with `b`'s buffers; out-parameters get scratch buffers
/// copied back afterwards.
void call(const Entry &entry, Buffers &b);

/// The loss the last call wrote.
double readLoss(const Abi &abi, Buffers &b);

} // namespace zero::driver

#endif // ZERO_DRIVER_BUFFERS_H
