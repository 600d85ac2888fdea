// A synthetic leak session for tests and calibration: allocation sites with
// known lifetimes (a leak, an LRU cache, a ring buffer, a cache that fills
// then stops) sampled as V8 samples (each object independently with
// probability 1 - exp(-size / interval), docs/statistics.md), and live
// snapshots at a cadence, as a full-GC LiveSnapshot would give them. Every
// site's true live bytes at every snapshot are known exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heapprof/core/raw_snapshot.h"

namespace heapprof {

enum class SimLifetime {
  kLeak,  // never freed
  kLru,   // a cache of `capacity` entries; each insert past it evicts a uniformly random entry
  kRing,  // a ring buffer of `capacity` slots: object i dies when object i + capacity is written
  kFill,  // a cache that fills to `capacity` entries and then allocates nothing more
};

struct SimSite {
  std::string function;
  SimLifetime lifetime = SimLifetime::kLeak;
  uint64_t object_size = 256;      // bytes
  double objects_per_second = 10;  // allocation rate
  uint64_t capacity = 0;           // kLru / kRing / kFill
};

struct SimSessionOptions {
  uint64_t interval_bytes = 64 * 1024;
  double warmup = 0;     // seconds of traffic before the first snapshot
  double seconds = 120;  // session length (from the first snapshot)
  double cadence = 5;    // seconds between snapshots
  double requests_per_second = 100;
  uint64_t heap_limit_bytes = 128ull * 1024 * 1024;
  uint64_t base_heap_bytes = 4ull * 1024 * 1024;  // heap used besides the sites
  int64_t start_unix_nanos = 1'800'000'000'000'000'000;
};

struct SimSession {
  std::vector<RawSnapshot> snapshots;
  std::vector<uint64_t> requests;              // served by each snapshot
  std::vector<std::vector<double>> true_live;  // [snapshot][site] bytes
};

// The session, deterministic for a seed.
SimSession SimulateLeakSession(const std::vector<SimSite>& sites, const SimSessionOptions& options, uint64_t seed);

}  // namespace heapprof
