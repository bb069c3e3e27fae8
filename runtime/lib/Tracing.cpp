//===- Tracing.cpp - The trace of one stretch of a run --------------------===//
//
// zrt_trace_*: while a trace is on (zero-run --trace), GEMMs, collectives
// on the link and the time the calling thread is blocked (in a blocking
// collective or in zrt_wait) are recorded as events, with times since
// zrt_trace_start. The Tracer class is declared in RuntimeInternal.h so that
// Tracer::on() stays inline: an untraced call costs one relaxed load.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>

using namespace zero::runtime;

void Tracer::start() {
  std::lock_guard<std::mutex> lock(mutex);
  events.clear();
  requests.clear();
  origin = Clock::now();
  enabled.store(true, std::memory_order_relaxed);
}

void Tracer::stop() { enabled.store(false, std::memory_order_relaxed); }

void Tracer::record(zrt_trace_kind kind, zrt_collective collective,
                    Clock::time_point begin, Clock::time_point end,
                    uint64_t bytes, const GemmCall *gemm) {
  if (!on())
    return;
  std::lock_guard<std::mutex> lock(mutex);
  zrt_trace_event e{};
  e.kind = kind;
  e.collective = collective;
  e.begin = std::chrono::duration<double>(begin - origin).count();
  e.end = std::chrono::duration<double>(end - origin).count();
  e.bytes = bytes;
  if (gemm) {
    e.batch = std::max<int64_t>(gemm->batch, 1);
    e.m = gemm->m;
    e.n = gemm->n;
    e.k = gemm->k;
    e.flops = 2 * static_cast<uint64_t>(e.batch) * static_cast<uint64_t>(e.m) *
              static_cast<uint64_t>(e.n) * static_cast<uint64_t>(e.k);
  }
  events.push_back(e);
}

void Tracer::noteRequest(int64_t request, zrt_collective kind) {
  if (!on())
    return;
  std::lock_guard<std::mutex> lock(mutex);
  requests[request] = kind;
}

zrt_collective Tracer::takeRequest(int64_t request) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = requests.find(request);
  if (it == requests.end())
    return ZRT_NUM_COLLECTIVES;
  zrt_collective kind = it->second;
  requests.erase(it);
  return kind;
}

std::size_t Tracer::count() {
  std::lock_guard<std::mutex> lock(mutex);
  return events.size();
}

bool Tracer::get(std::size_t index, zrt_trace_event &out) {
  std::lock_guard<std::mutex> lock(mutex);
  if (index >= events.size())
    return false;
  out = events[index];
  return true;
}

Tracer &zero::runtime::tracer() {
  static Tracer *instance = new Tracer();
  return *instance;
}

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

void zrt_trace_start(void) { tracer().start(); }

void zrt_trace_stop(void) { tracer().stop(); }

size_t zrt_trace_count(void) { return tracer().count(); }

int zrt_trace_get(size_t index, zrt_trace_event *out) {
  return guarded("zrt_trace_get",
                 [&] {
                   if (!out)
                     throw Error("out is NULL");
                   if (!tracer().get(index, *out))
                     throw Error("index " + std::to_string(index) +
                                 " is past the " +
                                 std::to_string(tracer().count()) +
                                 " events recorded");
                 })
             ? 0
             : 1;
}
