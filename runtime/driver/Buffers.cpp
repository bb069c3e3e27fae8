//===- Buffers.cpp - The run's buffers and entry calls --------------------===//

#include "Buffers.h"

#include "Data.h"

#include <cstring>
#include <string>
#include <utility>

namespace zero::driver {

Tensor allocate(int64_t elements, DType dtype, zrt_category category,
                bool nvme, bool host) {
  Tensor t;
  t.elements = elements;
  t.dtype = dtype;
  t.host = host;
  if (nvme)
    t.extent = zrt_nvme_alloc(t.bytes(), category);
  else if (host)
    t.data = zrt_alloc_host(t.bytes(), category);
  else
    t.data = zrt_alloc(t.bytes(), category);
  if (!t.held())
    fail(zrt_last_error());
  return t;
}

bool hostMemory = true;

void initMasterStates(const Abi &abi, Buffers &b, int rank) {
  for (size_t s = 0; s < abi.states.size(); ++s) {
    if (abi.states[s].kind != "master")
      continue;
    const Param &p = abi.params[abi.states[s].param];
    Tensor &param = b.params[abi.states[s].param];
    Tensor &state = b.states[s];
    HostView from(param), to(state, /*load=*/false);
    // The parameter's element that the state's element 0 holds.
    int64_t begin = param.elements == state.elements
                        ? 0
                        : static_cast<int64_t>(rank) * p.shard;
    size_t fromBytes = dtypeBytes(param.dtype), toBytes = dtypeBytes(state.dtype);
    for (int64_t e = 0; e < state.elements; ++e) {
      int64_t at = begin + e;
      double v = at < param.elements
                     ? loadElement(param.dtype, static_cast<const char *>(
                                                    from.data) +
                                                    at * fromBytes)
                     : 0.0;
      storeElement(state.dtype, v, static_cast<char *>(to.data) + e * toBytes);
    }
    to.store();
  }
}

void call(const Entry &entry, Buffers &b) {
  std::vector<void *> args(entry.args.size());
  std::vector<uint64_t> scalars(entry.args.size());
  std::vector<std::pair<Tensor, void *>> copies;
  for (size_t i = 0; i < entry.args.size(); ++i) {
    const Arg &arg = entry.args[i];
    if (arg.scalar) {
      storeElement(arg.dtype, b.hypers[arg.index], &scalars[i]);
      args[i] = &scalars[i];
      continue;
    }
    Tensor *t = nullptr;
    switch (arg.role) {
    case Role::Param:
      t = &b.params[arg.index];
      break;
    case Role::Grad:
      t = &b.grads[arg.index];
      break;
    case Role::State:
      t = &b.states[arg.index];
      break;
    case Role::Batch:
      t = &b.batch[arg.index];
      break;
    case Role::Hyper: {
      t = &b.hyperBuffers[arg.index];
      HostView value(*t, /*load=*/false);
      storeElement(arg.dtype, b.hypers[arg.index], value.data);
      value.store();
      break;
    }
    case Role::Loss:
      t = &b.loss;
      break;
    }
    if (!t->held() || t->elements != arg.elements || t->dtype != arg.dtype ||
        (t->extent != 0) != arg.nvme || t->host != arg.host)
      fail("entry '" + entry.name + "' argument #" + std::to_string(i) +
           " does not match the buffer the descriptor gave its role");
    // An extent goes by value: args[i] points at the handle.
    args[i] = arg.nvme ? static_cast<void *>(&t->extent) : t->data;
    if (arg.outCopy) {
      // A second copy of the parameter or state: counted as one, as
      // zero-memory-report counts the argument.
      zrt_category category = arg.role == Role::Param   ? ZRT_PARAMS
                              : arg.role == Role::Grad  ? ZRT_GRADS
                              : arg.role == Role::State ? ZRT_OPTIMIZER_STATES
                                                        : ZRT_ACTIVATIONS;
      Tensor scratch =
          allocate(arg.elements, arg.dtype, category, false, arg.host);
      copies.emplace_back(scratch, t->data);
      args[i] = scratch.data;
    }
  }
  entry.fn(args.data());
  for (auto &c : copies) {
    // Host memory next to the device (optimizer=host) is the host's to
    // copy: the step has completed every transfer into it.
    if (c.first.host && !hostMemory)
      std::memcpy(c.second, c.first.data, c.first.bytes());
    else
      zrt_copy(c.second, c.first.data, static_cast<int64_t>(c.first.bytes()));
    zrt_free(c.first.data);
  }
}

double readLoss(const Abi &abi, Buffers &b) {
  HostView loss(b.loss);
  return loadElement(abi.lossType, loss.data);
}

} // namespace zero::driver
