#include "heapprof/core/profile_builder.h"

#include <fmt/format.h>
#include <cmath>
#include <map>
#include <tuple>
#include <unordered_map>

#include "heapprof/core/profile_ages.h"
#include "heapprof/core/profile_tables.h"
#include "heapprof/core/text.h"
#include "heapprof/core/version.h"

namespace heapprof {
namespace {}  // namespace

double SampleScale(uint64_t size, uint64_t interval) {
  if (interval == 0 || size == 0) return 1.0;
  return 1.0 / (1.0 - std::exp(-static_cast<double>(size) / static_cast<double>(interval)));
}

std::string FrameDisplayName(const Frame& frame) {
  if (!frame.function_name.empty()) return frame.function_name;
  if (frame.script_name.empty()) return "(anonymous)";
  return internal::AnonymousFunctionName(frame.script_name, frame.line, frame.column);
}

Profile BuildProfile(const RawSnapshot& snap) { return internal::BuildProfileWithAges(snap, {}); }

Profile internal::BuildProfileWithAges(const RawSnapshot& snap, const std::vector<int64_t>& ages) {
  Profile p;
  internal::StringInterner intern(p);
  const WindowInfo& info = snap.info;

  p.sample_types = {{intern("alloc_objects"), intern("count")},
                    {intern("alloc_space"), intern("bytes")},
                    {intern("inuse_objects"), intern("count")},
                    {intern("inuse_space"), intern("bytes")}};
  p.period_type = {intern("space"), intern("bytes")};
  p.period = static_cast<int64_t>(info.interval_bytes);
  p.default_sample_type = intern("inuse_space");
  p.time_nanos = info.start_unix_nanos;
  p.duration_nanos = info.duration_nanos;

  // One location per distinct frame (functions keyed by what a reader sees).
  internal::LocationTable location_table(p, intern);
  std::vector<LocationId> frame_location(snap.frames.size(), LocationId{0});
  auto location_of = [&](FrameId fid) {
    LocationId& cached = frame_location.at(static_cast<uint32_t>(fid));
    if (cached == LocationId{0}) cached = location_table.Of(snap.frames[static_cast<uint32_t>(fid)]);
    return cached;
  };

  // Merge samples by (stack, size): counts of sampled objects, all and live.
  struct Counts {
    uint64_t all = 0;
    uint64_t live = 0;
  };
  // (stack, size, age): a leak session's samples also keep their age apart (-1: no age label).
  std::map<std::tuple<uint32_t, uint64_t, int64_t>, Counts> merged;
  for (size_t i = 0; i < snap.samples.size(); ++i) {
    const RawSample& s = snap.samples[i];
    const int64_t age = i < ages.size() ? ages[i] : -1;
    Counts& c = merged[{static_cast<uint32_t>(s.stack), s.size, age}];
    if (s.allocated) ++c.all;
    if (s.live) ++c.live;
  }

  StringId bytes_key = intern("bytes");
  StringId age_key{0};
  std::unordered_map<uint32_t, std::vector<LocationId>> stack_locations;
  for (const auto& [key, counts] : merged) {
    const uint32_t stack = std::get<0>(key);
    const uint64_t size = std::get<1>(key);  // a plain variable: lambdas below capture it
    const int64_t age = std::get<2>(key);
    auto sit = stack_locations.find(stack);
    if (sit == stack_locations.end()) {
      std::vector<LocationId> locs;
      for (uint32_t s = stack; s != 0; s = static_cast<uint32_t>(snap.stacks.at(s).parent)) {
        locs.push_back(location_of(snap.stacks.at(s).frame));
      }
      sit = stack_locations.emplace(stack, std::move(locs)).first;
    }
    double scale = SampleScale(size, info.interval_bytes);
    auto objects = [&](uint64_t n) { return static_cast<int64_t>(std::llround(n * scale)); };
    auto space = [&](uint64_t n) { return static_cast<int64_t>(std::llround(n * scale * static_cast<double>(size))); };
    Sample sample;
    sample.locations = sit->second;
    sample.values = {objects(counts.all), space(counts.all), objects(counts.live), space(counts.live)};
    sample.labels.push_back(Label{bytes_key, StringId{0}, static_cast<int64_t>(size), bytes_key});
    if (age >= 0) {
      // Seconds, but without a unit: go tool pprof reads -tagfocus=age=600: in
      // the label's own numbers only when it has none.
      if (age_key == StringId{0}) age_key = intern("age");
      sample.labels.push_back(Label{age_key, StringId{0}, age, StringId{0}});
    }
    p.samples.push_back(std::move(sample));
  }

  auto comment = [&](std::string_view key, const std::string& value) {
    p.comments.push_back(intern(fmt::format("{}: {}", key, value)));
  };
  comment("heapprof", kVersion);
  if (!info.v8_version.empty()) comment("v8", info.v8_version);
  if (!info.isolate_name.empty()) comment("isolate", info.isolate_name);
  if (!info.strategy.empty()) comment("strategy", info.strategy);
  comment("interval_bytes", std::to_string(info.interval_bytes));
  comment("max_stack_depth", std::to_string(info.max_stack_depth));
  comment("gc_before_inuse", info.gc_before_snapshot ? "yes" : "no");
  comment("inlining", info.inlining_allowed == 1 ? "allowed" : info.inlining_allowed == 0 ? "disabled" : "unknown");
  comment("heap_used_bytes", std::to_string(info.heap_used_bytes));
  comment("heap_limit_bytes", std::to_string(info.heap_limit_bytes));
  comment("samples", std::to_string(snap.samples.size()));
  if (info.prologue_snapshots) {
    comment("prologue_snapshots", std::to_string(info.prologue_snapshots));
    comment("prologue_snapshot_nanos", std::to_string(info.prologue_nanos));
  }
  if (info.dropped_samples) comment("dropped_samples", std::to_string(info.dropped_samples));
  if (info.missing_sample_ids) comment("missing_sample_ids", std::to_string(info.missing_sample_ids));
  if (info.profiler_samples) comment("profiler_own_samples", std::to_string(info.profiler_samples));
  for (const std::string& note : info.notes) p.comments.push_back(intern(note));
  return p;
}

}  // namespace heapprof
