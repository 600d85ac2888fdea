// What grew and what shrank between two profiles (e.g. two windows of a
// leaking worker), per function, for one sample type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heapprof/profile.h"
#include "heapprof/status.h"

namespace heapprof {

struct FunctionDelta {
  std::string name;
  std::string filename;
  int64_t start_line = 0;
  int64_t base_flat = 0;
  int64_t new_flat = 0;
  int64_t base_cum = 0;
  int64_t new_cum = 0;

  int64_t flat_delta() const { return new_flat - base_flat; }
  int64_t cum_delta() const { return new_cum - base_cum; }
};

struct DiffOptions {
  // Sample type by name ("inuse_space") or index; empty means the new
  // profile's default. Both profiles must have it, with the same unit.
  std::string sample_type;
  bool sort_by_cum = false;  // rank by cumulative instead of flat change
};

struct ProfileDiff {
  std::string sample_type;
  std::string unit;
  int64_t base_total = 0;
  int64_t new_total = 0;
  bool sort_by_cum = false;
  // Every function of either profile, biggest growth first, biggest shrink
  // last (by flat or cum change, as DiffOptions asked).
  std::vector<FunctionDelta> functions;
};

// Fails when either profile is empty or lacks the sample type.
Result<ProfileDiff> DiffProfiles(const Profile& base, const Profile& next, const DiffOptions& options = {});

// A readable table: the totals, then the top `rows` growers and shrinkers.
std::string FormatDiffTable(const ProfileDiff& diff, size_t rows = 10);

// The interactive flamegraph page of `next`, each frame coloured by its
// change against `base` (red grew, blue shrank); its table ranks the changes.
Result<std::string> RenderDiffFlamegraphHtml(const Profile& base, const Profile& next,
                                             const DiffOptions& options = {}, const std::string& title = "");

}  // namespace heapprof
