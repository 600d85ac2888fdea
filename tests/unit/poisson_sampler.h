// A faithful simulation of V8's sampling heap profiler for statistical tests:
// the sampler draws exponential gaps (mean = the interval) over the stream of
// allocated bytes and samples the object each gap ends in, then draws a fresh
// gap from the end of that object. Each function allocates a known number of
// objects of one size, so every profile value has an exact ground truth.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "heapprof/core/profile_builder.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/stack_table.h"

namespace heapprof::testing {

struct SimFunction {
  std::string name;
  uint64_t object_size = 0;
  uint64_t objects = 0;  // allocated in the window
  uint64_t live = 0;     // of which still alive at the end (the first ones)

  double alloc_bytes() const { return static_cast<double>(object_size) * static_cast<double>(objects); }
  double inuse_bytes() const { return static_cast<double>(object_size) * static_cast<double>(live); }
};

// One window of `functions` (each called from `main`), sampled every
// `interval` bytes on average, built into a profile by the real builder.
inline Profile SimulateWindow(const std::vector<SimFunction>& functions, uint64_t interval, std::mt19937_64& rng) {
  std::exponential_distribution<double> gap(1.0 / static_cast<double>(interval));
  internal::StackTable table;
  StackId main_stack = table.InternStack(StackId{0}, table.InternFrame({"main", "file:///sim.js", 1, 1, 1}));
  RawSnapshot snap;
  snap.info.interval_bytes = interval;
  snap.info.strategy = "simulation";
  uint64_t id = 1;
  double until_sample = gap(rng);  // bytes left before the next sample point
  for (size_t f = 0; f < functions.size(); ++f) {
    const SimFunction& fn = functions[f];
    StackId stack = table.InternStack(
        main_stack, table.InternFrame({fn.name, "file:///sim.js", 1, static_cast<int>(10 * (f + 1)), 1}));
    // By memorylessness the order of allocations does not matter; a function's
    // objects come in one run, so the simulation costs O(samples).
    const double size = static_cast<double>(fn.object_size);
    uint64_t next = 0;  // first object not yet passed
    while (true) {
      double ahead = std::max(1.0, std::ceil(until_sample / size));  // the object the sample point falls in, 1-based
      if (static_cast<double>(next) + ahead > static_cast<double>(fn.objects)) {
        until_sample -= static_cast<double>(fn.objects - next) * size;
        break;
      }
      next += static_cast<uint64_t>(ahead);
      uint64_t index = next - 1;
      snap.samples.push_back({id++, stack, fn.object_size, index < fn.live});
      until_sample = gap(rng);
    }
  }
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  return BuildProfile(snap);
}

}  // namespace heapprof::testing
