#include "heapprof/core/inspector_sizes.h"

#include <cmath>

namespace heapprof {
namespace {

double Scale(double size, double interval) { return 1.0 / (1.0 - std::exp(-size / interval)); }

// s with s * Scale(s) == value, for value > interval (Scale(s) * s rises from
// `interval` at s -> 0 and is s + ... above).
double RealSolution(double value, double interval) {
  double lo = 0, hi = value;
  for (int i = 0; i < 100 && hi - lo > 1e-6; ++i) {
    double mid = (lo + hi) / 2;
    (mid * Scale(mid, interval) < value ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

uint64_t InspectorSampleCount(uint64_t size, uint64_t interval) {
  if (size == 0 || interval == 0) return 1;
  // As V8 rounds it: count * scale + 0.5, truncated to an unsigned int.
  double count = Scale(static_cast<double>(size), static_cast<double>(interval)) + 0.5;
  return count >= 4294967295.0 ? 4294967295u : static_cast<uint64_t>(count);
}

uint64_t InspectorObjectSize(uint64_t inspector_size, uint64_t interval) {
  if (inspector_size == 0 || interval == 0) return inspector_size;
  // One object per sample (count 1) needs size > interval * ln 3; a count of
  // 2 or more keeps the value under 2.2 x interval. Above that it is exact.
  if (inspector_size > interval * 22 / 10 + 1) return inspector_size;
  // The sizes that fit divide the value: try every divisor, keep the smallest
  // that fits.
  uint64_t best = 0;
  for (uint64_t d = 1; d * d <= inspector_size; ++d) {
    if (inspector_size % d != 0) continue;
    const uint64_t pair[2] = {d, inspector_size / d};
    for (uint64_t size : pair) {
      if ((best == 0 || size < best) && size * InspectorSampleCount(size, interval) == inspector_size) best = size;
    }
  }
  if (best != 0) return best;
  if (inspector_size <= interval) return 1;  // below what one sample can read
  uint64_t real = static_cast<uint64_t>(
      std::llround(RealSolution(static_cast<double>(inspector_size), static_cast<double>(interval))));
  return real == 0 ? 1 : real;
}

}  // namespace heapprof
