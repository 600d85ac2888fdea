// `heapprof attach TARGET`: its flags (attach_flags.cpp) and the command (attach.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/core/units.h"
#include "heapprof/remote/devtools_client.h"
#include "tools/heapprof/attach_continuous.h"
#include "tools/heapprof/attach_exact.h"

namespace heapprof::cli {

struct AttachArgs {
  std::string target;
  std::string name;  // --target
  // Parsed once by the flags' checks (tools/heapprof/flag_values.h).
  std::optional<int64_t> duration_ns;  // empty: until Ctrl-C
  uint64_t interval_bytes = kDefaultIntervalBytes;
  std::string sample_types = "both";
  bool no_gc = false;
  std::string output = "heapprof-attach.pb.gz";
  std::string flamegraph;
  int top = 10;
  bool user_code = false;
  std::string sample_index;
  bool no_source_maps = false;
  std::vector<std::string> map_dirs;
  std::vector<std::string> source_map_paths;
  remote::Millis timeout{30'000};
  ExactAttachFlags exact;  // --allow-inlining, --warmup
  bool leaks = false;
  std::optional<int64_t> cadence_ns;  // --cadence; empty: chosen by the first snapshot's cost
  std::string leaks_json;
  const CLI::Option* sample_types_option = nullptr;  // to tell an explicit --sample-types from its default
  const CLI::Option* output_option = nullptr;
  AttachContinuousFlags continuous;  // --continuous D, --push URL and its flags
};

// Runs the command; the exit code.
int Attach(const AttachArgs& args);

}  // namespace heapprof::cli
