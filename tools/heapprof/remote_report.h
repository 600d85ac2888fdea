// What `heapprof attach` and `heapprof run --runtime workerd` do with a
// remote profile: source maps, the file, the flamegraph, the tables.
#pragma once

#include <string>
#include <vector>

#include "heapprof/remote/remote_profiler.h"

namespace heapprof::cli {

struct RemoteReport {
  std::string command;       // "attach" / "run", for messages
  std::string output;        // -o
  std::string fallback_dir;  // --fallback-dir; then the temporary folder (outputs.h)
  std::string flamegraph;    // "" = none
  std::string sample_index;  // --sample-index ("" = the measured ones)
  remote::RemoteSampleTypes types = remote::RemoteSampleTypes::kBoth;
  bool gc = true;
  bool symbolize = true;
  std::vector<std::string> map_dirs;  // extra folders of source maps
  std::vector<std::string> roots;     // folders whose trees scripts and maps may be read from
  uint64_t interval_bytes = 0;
  size_t top = 10;
  bool user_code = false;            // --user-code
  std::string headline;              // "Profiled X (runtime) through the DevTools protocol"
  std::vector<std::string> details;  // extra lines under the headline
  std::string more_samples_hint;
};

// Symbolizes, writes the profile (atomically; in a fallback folder when -o
// cannot be written) and prints the report; returns the exit code
// (kExitFailure when the file is not at -o: the tables are printed all the same).
int ReportRemoteProfile(Profile& profile, const RemoteReport& report);

}  // namespace heapprof::cli
