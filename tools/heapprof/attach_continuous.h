// `heapprof attach TARGET --continuous D`: back-to-back DevTools windows of
// length D on one target until Ctrl-C (or --duration), each pushed to a
// Pyroscope-compatible store with --push and/or written to a file
// (<dir of -o>/<target>-<start>.pb.gz) as it closes.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/remote/devtools_client.h"
#include "heapprof/remote/remote_profiler.h"
#include "heapprof/remote/window_pusher.h"
#include "tools/heapprof/push_flags.h"

namespace heapprof::cli {

struct AttachContinuousFlags {
  std::optional<int64_t> every_ns;  // --continuous D; empty: one window (no continuous run)
  PushFlags push;
  bool output_given = false;  // -o given: files too when pushing
};

// --continuous and the --push flags.
void AddAttachContinuousOptions(CLI::App* app, AttachContinuousFlags& flags);
// A usage error for flags that do not go together ("" when they do): --push
// without --continuous D, --push-* without --push, --continuous with --leaks.
std::string CheckAttachContinuous(const AttachContinuousFlags& flags, bool leaks, bool flamegraph);

// The push's identity for an inspector target: service_name from the
// target's script (the stem of its file:// URL or title), runtime "node",
// "workerd" or "v8" by the inspector's version, version a short SHA-256 of
// the script when it is a readable local file.
remote::PushIdentity AttachIdentity(const remote::InspectorTarget& target, const std::string& runtime);

struct AttachContinuousRun {
  remote::PushIdentity identity;  // AttachIdentity's
  std::string target_label;       // each window's replica label and file stem
  std::string output;             // -o: its folder takes the files
  bool symbolize = true;
  std::vector<std::string> map_dirs, roots;
  std::optional<int64_t> total_ns;  // --duration: how long the run goes on (empty: until Ctrl-C)
};

// Runs the windows (`options` as for one window; its `window` is set to D
// here) and prints the summary; returns the exit code. `restore` is called
// once the last window has closed, before the summary (the target's flags
// back as they were); it returns the line to print ("" for none).
int AttachContinuous(remote::DevToolsSession& session, remote::RemoteWindowOptions options,
                     const AttachContinuousFlags& flags, const AttachContinuousRun& run,
                     const std::function<std::string()>& restore);

}  // namespace heapprof::cli
