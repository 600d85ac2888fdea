// Per-function aggregation of a profile, and the `top` table printed by the CLI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heapprof/estimate.h"
#include "heapprof/profile.h"
#include "heapprof/status.h"

namespace heapprof {

struct FunctionTotal {
  std::string name;
  std::string filename;
  int64_t start_line = 0;
  int64_t flat = 0;  // value of samples whose leaf is this function
  int64_t cum = 0;   // value of samples whose stack contains it (counted once per sample)
  // How V8 sampled flat and cum (all zero when the profile cannot say).
  SampledValue flat_sampling;
  SampledValue cum_sampling;
};

// Totals per function for one sample type, sorted by flat (or cum) descending.
std::vector<FunctionTotal> FunctionTotals(const Profile& profile, int sample_index, bool sort_by_cum = false);

// Resolves a sample type by name ("inuse_space") or index; empty name means
// the profile's default sample type (or the last one).
Result<int> ResolveSampleIndex(const Profile& profile, const std::string& name);

// Human-readable bytes ("12.3 MiB") or counts ("1.2k") for a sample type's unit.
std::string FormatValue(int64_t value, std::string_view unit);

struct TopOptions {
  int sample_index = kInuseSpace;
  size_t rows = 10;
  bool sort_by_cum = false;
};
// A `pprof -top`-like table, readable without pprof. When the profile says how
// it was sampled, every share carries its 95 % sampling error ("86.7% ±5.9")
// and a sample type with too few samples to rank functions says so.
std::string FormatTopTable(const Profile& profile, const TopOptions& options);

}  // namespace heapprof
