// What grew and what shrank between two profiles (e.g. two windows of a
// leaking worker), per function, for one sample type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heapprof/core/estimate.h"
#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof {

struct FunctionDelta {
  std::string name;
  std::string filename;
  int64_t start_line = 0;
  // How the diff's table names the function and its file: the shortest
  // suffix of the file unique within both profiles (`@trpc/server/dist/index.js`).
  std::string display_name;
  std::string file_label;
  int64_t base_flat = 0;
  int64_t new_flat = 0;
  int64_t base_cum = 0;
  int64_t new_cum = 0;

  // How the ranked column (flat, or cum with DiffOptions::sort_by_cum) was
  // sampled on each side, and whether its change is beyond that noise.
  SampledValue base_sampling;
  SampledValue new_sampling;
  double p_value = 1;       // chance of a change this large from sampling alone
  double noise = 0;         // 95 % half-width of the change from sampling (0 = unknown)
  bool significant = true;  // beyond the noise; always true when the profiles cannot say

  int64_t flat_delta() const { return new_flat - base_flat; }
  int64_t cum_delta() const { return new_cum - base_cum; }
};

struct DiffOptions {
  // Sample type by name ("inuse_space") or index; empty means the new
  // profile's default. Both profiles must have it, with the same unit.
  std::string sample_type;
  bool sort_by_cum = false;  // rank by cumulative instead of flat change
  // A change counts when sampling noise explains it with less than
  // 1 - confidence probability for all functions together (Bonferroni).
  double confidence = kConfidence;
};

struct ProfileDiff {
  std::string sample_type;
  std::string unit;
  int64_t base_total = 0;
  int64_t new_total = 0;
  bool sort_by_cum = false;
  // Both profiles say how they were sampled (period, object sizes), so every
  // change was tested against the noise of both; `tested` functions at once.
  bool sampled = false;
  size_t tested = 0;
  double confidence = kConfidence;
  double total_noise = 0;  // 95 % half-width of the total's change from sampling
  // Every function of either profile, biggest growth first, biggest shrink
  // last (by flat or cum change, as DiffOptions asked).
  std::vector<FunctionDelta> functions;
};

// Fails when either profile is empty or lacks the sample type.
Result<ProfileDiff> DiffProfiles(const Profile& base, const Profile& next, const DiffOptions& options = {});

// A readable table: the totals, then the top `rows` growers and shrinkers
// (only changes beyond sampling noise, when the profiles say how they were
// sampled), then how many functions changed within the noise.
std::string FormatDiffTable(const ProfileDiff& diff, size_t rows = 10);

// The interactive flamegraph page of `next`, each frame coloured by its
// change against `base` (red grew, blue shrank); its table ranks the changes.
Result<std::string> RenderDiffFlamegraphHtml(const Profile& base, const Profile& next, const DiffOptions& options = {},
                                             const std::string& title = "");

}  // namespace heapprof
