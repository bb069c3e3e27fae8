//===- TraceWriter.cpp - --trace: the last step traced --------------------===//

#include "TraceWriter.h"

#include "Failing.h"
#include "Json.h"

#include "zero/runtime.h"

#include <algorithm>
#include <cstdint>
#include <vector>

using namespace zero::driver;

namespace {

/// This rank's traced events as Chrome trace events, comma-separated: pid
/// the rank, thread 0 compute (GEMMs, blocking waits, and "compute" for
/// the gaps between them up to `stepEnd`), thread 1 the communication
/// link. Times in microseconds, shifted by `offset` seconds.
std::string traceEvents(int rank, double offset, double stepEnd) {
  std::vector<zrt_trace_event> events(zrt_trace_count());
  for (size_t i = 0; i < events.size(); ++i)
    if (zrt_trace_get(i, &events[i]) != 0)
      fail(std::string("reading the trace: ") + zrt_last_error());
  std::stable_sort(events.begin(), events.end(),
                   [](const zrt_trace_event &a, const zrt_trace_event &b) {
                     return a.begin < b.begin;
                   });
  std::string out;
  auto emit = [&](JsonValue e) {
    if (!out.empty())
      out += ",\n";
    out += e.dump(-1);
  };
  auto meta = [&](const char *what, int tid, const std::string &name) {
    JsonValue e = JsonValue::object();
    e.set("name", JsonValue::string(what));
    e.set("ph", JsonValue::string("M"));
    e.set("pid", JsonValue::integer(rank));
    if (tid >= 0)
      e.set("tid", JsonValue::integer(tid));
    JsonValue args = JsonValue::object();
    args.set("name", JsonValue::string(name));
    e.set("args", std::move(args));
    emit(std::move(e));
  };
  meta("process_name", -1, "rank " + std::to_string(rank));
  meta("thread_name", 0, "compute");
  meta("thread_name", 1, "communication");
  auto slice = [&](int tid, const std::string &name, const char *cat,
                   double begin, double end, JsonValue args) {
    JsonValue e = JsonValue::object();
    e.set("name", JsonValue::string(name));
    e.set("cat", JsonValue::string(cat));
    e.set("ph", JsonValue::string("X"));
    e.set("pid", JsonValue::integer(rank));
    e.set("tid", JsonValue::integer(tid));
    e.set("ts", JsonValue::number((begin + offset) * 1e6));
    e.set("dur", JsonValue::number(std::max(0.0, end - begin) * 1e6));
    e.set("args", std::move(args));
    emit(std::move(e));
  };
  double cursor = 0;
  auto computeUntil = [&](double t) {
    if (t > cursor)
      slice(0, "compute", "compute", cursor, t, JsonValue::object());
    cursor = std::max(cursor, t);
  };
  for (const zrt_trace_event &e : events) {
    JsonValue args = JsonValue::object();
    const char *kind = zrt_collective_name(e.collective);
    switch (e.kind) {
    case ZRT_TRACE_GEMM: {
      computeUntil(e.begin);
      args.set("flops", JsonValue::integer(static_cast<int64_t>(e.flops)));
      std::string name = format("gemm %lldx%lldx%lld", (long long)e.m,
                                (long long)e.n, (long long)e.k);
      if (e.batch > 1)
        name = format("gemm %lld x ", (long long)e.batch) + name.substr(5);
      slice(0, name, "gemm", e.begin, e.end, std::move(args));
      cursor = std::max(cursor, e.end);
      break;
    }
    case ZRT_TRACE_BLOCKED:
    case ZRT_TRACE_WAIT:
      computeUntil(e.begin);
      if (e.kind == ZRT_TRACE_BLOCKED)
        args.set("bytes", JsonValue::integer(static_cast<int64_t>(e.bytes)));
      slice(0,
            std::string(e.kind == ZRT_TRACE_BLOCKED ? "blocked " : "wait ") +
                kind,
            "wait", e.begin, e.end, std::move(args));
      cursor = std::max(cursor, e.end);
      break;
    case ZRT_TRACE_COLLECTIVE:
      args.set("bytes", JsonValue::integer(static_cast<int64_t>(e.bytes)));
      slice(1, kind, "comm", e.begin, e.end, std::move(args));
      break;
    }
  }
  computeUntil(stepEnd);
  return out;
}
} // namespace

namespace zero::driver {

void writeTrace(const std::string &path, double wall, double stepEnd) {
  const int rank = zrt_world_rank(), world = zrt_world_size();
  auto broadcast = [&](void *data, size_t bytes, int root) {
    if (zrt_broadcast_bytes(data, bytes, root) != 0)
      fail(std::string("gathering the trace: ") + zrt_last_error());
  };
  std::vector<double> walls(world);
  for (int r = 0; r < world; ++r) {
    double w = wall;
    broadcast(&w, sizeof w, r);
    walls[r] = w;
  }
  double first = *std::min_element(walls.begin(), walls.end());
  std::string mine = traceEvents(rank, wall - first, stepEnd);
  std::string all = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  for (int r = 0; r < world; ++r) {
    uint64_t size = r == rank ? mine.size() : 0;
    broadcast(&size, sizeof size, r);
    std::string part = r == rank ? mine : std::string(size, '\0');
    broadcast(part.data(), size, r);
    if (r > 0)
      all += ",\n";
    all += part;
  }
  all += "\n]}\n";
  if (rank == 0)
    writeOrFail(path, {{all.data(), all.size()}});
}

} // namespace zero::driver
