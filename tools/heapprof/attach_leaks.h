// `heapprof attach --leaks`: one sampling session without the include flags
// on a target's inspector, polled at a cadence; at the end the growth report
// (source-mapped), the last snapshot as the profile with each sample's age.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/remote/devtools_client.h"

namespace heapprof::cli {

// The attach flags a leak session reads.
struct AttachLeakArgs {
  std::optional<int64_t> cadence_ns;  // --cadence; empty: chosen by the first snapshot's cost
  bool no_gc = false;
  remote::Millis timeout{30'000};
  int top = 10;
  std::string leaks_json;
  std::string output;
  std::string flamegraph;
  std::string sample_index;
  bool no_source_maps = false;
  std::vector<std::string> map_dirs;
  std::vector<std::string> source_map_paths;
};

// Runs the session for `duration` (nanoseconds::max(): until Ctrl-C); the exit code.
int AttachLeaks(const AttachLeakArgs& args, remote::DevToolsSession& session, const remote::InspectorTarget& target,
                const std::string& runtime, uint64_t interval, std::chrono::nanoseconds duration);

}  // namespace heapprof::cli
