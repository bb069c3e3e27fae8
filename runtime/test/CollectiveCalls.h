//===- CollectiveCalls.h - The collective entry point, typed, for tests ---===//
//
// The runtime has one collective entry point per form (zrt_collective_run,
// zrt_collective_start, zrt_collective_scalar) taking a descriptor; the
// tests call it through these, named after what they run, with the element
// type as the template argument (uint16_t for bf16).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TEST_COLLECTIVECALLS_H
#define ZERO_RUNTIME_TEST_COLLECTIVECALLS_H

#include "zero/runtime.h"

#include <cstdint>
#include <type_traits>

namespace coll {

template <typename T> constexpr zrt_element_type elementOf() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, uint16_t>,
                "the collectives take float, double and bf16 (uint16_t)");
  return std::is_same_v<T, float>    ? ZRT_ELEMENT_F32
         : std::is_same_v<T, double> ? ZRT_ELEMENT_F64
                                     : ZRT_ELEMENT_BF16;
}

template <typename T>
constexpr zrt_collective_op op(zrt_collective kind, zrt_reduction reduction) {
  return zrt_make_collective_op(kind, reduction, elementOf<T>());
}

template <typename T>
void allReduceSum(const void *in, void *out, int64_t count) {
  zrt_collective_run(op<T>(ZRT_ALL_REDUCE, ZRT_REDUCE_SUM), in, out, count);
}
template <typename T>
void allReduceMax(const void *in, void *out, int64_t count) {
  zrt_collective_run(op<T>(ZRT_ALL_REDUCE, ZRT_REDUCE_MAX), in, out, count);
}
template <typename T>
void reduceScatterSum(const void *in, void *out, int64_t count) {
  zrt_collective_run(op<T>(ZRT_REDUCE_SCATTER, ZRT_REDUCE_SUM), in, out,
                     count);
}
template <typename T>
void allGather(const void *in, void *out, int64_t count) {
  zrt_collective_run(op<T>(ZRT_ALL_GATHER, ZRT_REDUCE_NONE), in, out, count);
}
template <typename T>
int64_t allReduceSumStart(const void *in, void *out, int64_t count) {
  return zrt_collective_start(op<T>(ZRT_ALL_REDUCE, ZRT_REDUCE_SUM), in, out,
                              count);
}
template <typename T>
int64_t reduceScatterSumStart(const void *in, void *out, int64_t count) {
  return zrt_collective_start(op<T>(ZRT_REDUCE_SCATTER, ZRT_REDUCE_SUM), in,
                              out, count);
}
template <typename T>
int64_t allGatherStart(const void *in, void *out, int64_t count) {
  return zrt_collective_start(op<T>(ZRT_ALL_GATHER, ZRT_REDUCE_NONE), in, out,
                              count);
}
template <typename T> T scalarSum(T value) {
  return static_cast<T>(zrt_collective_scalar(
      op<T>(ZRT_SCALAR_ALL_REDUCE, ZRT_REDUCE_SUM), value));
}
template <typename T> T scalarMax(T value) {
  return static_cast<T>(zrt_collective_scalar(
      op<T>(ZRT_SCALAR_ALL_REDUCE, ZRT_REDUCE_MAX), value));
}

} // namespace coll

#endif // ZERO_RUNTIME_TEST_COLLECTIVECALLS_H
