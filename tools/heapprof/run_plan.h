// `heapprof run`: the flags as parsed, and the validated plan every mode runs
// from (one isolate, --replicas, --continuous, --on-heap-limit, --profile).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/status.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/session.h"
#include "heapprof/workload/worker_config.h"
#include "heapprof/workload/worker_messages.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/flag_values.h"
#include "tools/heapprof/push_flags.h"

namespace heapprof::cli {

inline constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
inline constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

// The flags of `heapprof run`, as CLI11 parsed them: every number is parsed
// once, by the flag's check (tools/heapprof/flag_values.h), and stored here typed; an
// empty optional is a flag not given.
struct RunArgs {
  std::string worker;
  int64_t requests = 0;  // signed, so "-3" is rejected instead of wrapping
  std::optional<int64_t> duration_ns;
  std::optional<Warmup> warmup;
  std::optional<int64_t> window_ns;
  // Empty = auto: a sandbox run samples densely enough to rank functions
  // (64 KiB at the 128 MiB default limit); live targets (serve, attach) keep 512 KiB.
  std::optional<uint64_t> interval_bytes;
  int depth = 64;
  std::optional<uint64_t> heap_limit_bytes;  // default 128 MiB
  bool from_start = false;
  bool no_gc = false;
  bool allow_inlining = false;
  bool no_source_maps = false;
  std::vector<std::string> source_map_paths;
  std::vector<std::string> v8_flags;
  std::string output;
  std::string fallback_dir;  // where outputs go when theirs cannot be written ("" = the temporary folder only)
  int top = 10;
  bool user_code = false;
  std::string sample_index;
  std::string flamegraph;
  int replicas = 1;
  std::string profile_target;
  std::optional<int64_t> continuous_ns;
  std::string on_heap_limit;
  std::string requests_file;
  std::string responses_out;
  std::string url;
  std::string method = "GET";
  std::vector<std::string> headers;
  std::string body;
  ConfigFlags config;                  // --config, --env-json, --kv-data, --compatibility-*, --ignore-config-key
  std::string fetch_handler;           // --fetch-handler: the module answering subrequests
  std::optional<double> max_failures;  // default 0.5
  std::optional<std::chrono::milliseconds> request_timeout;  // default 30 s; 0 = none
  std::optional<int64_t> object_idle_ns;                     // --object-idle-limit
  std::string runtime = "embedded";                          // or "workerd" (run_workerd.h)
  std::string sample_types = "both";  // --runtime workerd: the DevTools windows (inuse, alloc, both)
  std::string workerd;                // --runtime workerd: the executable [default: .deps/workerd]
  std::vector<std::string> services;  // --runtime workerd: --service NAME=WORKER, a services binding's worker
  bool leaks = false;                 // --leaks: a leak session (live snapshots at a cadence) instead of a window
  std::optional<int64_t> cadence_ns;  // --cadence; empty: 100 x the first snapshot's cost (remote::AutoCadence)
  std::string leaks_json;             // --leaks-json: the growth report as JSON
  PushFlags push;                     // --push URL and its --push-* flags (with --continuous)
};

// What a run does, checked before V8 starts. Every limit applies to each
// replica; a profiled replica's window closes at the first limit it reaches.
struct Plan {
  std::string worker;                 // the script
  std::string display_name;           // "prometheus-leak.js" (one replica) for reports
  std::vector<std::string> replicas;  // target names: "stem" or "stem-0".."stem-N-1"
  std::vector<std::string> profiled;  // the replicas that get a window (--profile or all)
  // --profile NS:NAME (NAME an idFromName name or a 64-hex id): the window is
  // that Durable Object's isolate, from its creation to the run's end.
  std::string object_target;
  // --object-idle-limit: Durable Objects idle this long are evicted (0 = never).
  std::chrono::milliseconds object_idle_limit{0};
  bool from_start = false;
  uint64_t max_requests = kNoLimit;  // per replica, warm-up included
  int64_t max_duration_ns = kForever;
  uint64_t warmup_requests = 0;  // the window opens after this many requests...
  int64_t warmup_ns = 0;         // ...and this much time
  int64_t window_ns = kForever;  // the window's length (the replica stops serving when it closes)
  int64_t continuous_ns = 0;     // --continuous: back-to-back windows of this length (0 = off)
  size_t heap_limit_bytes = 0;
  SessionOptions session;
  bool interval_auto = false;  // --interval auto: session.interval_bytes chosen from the heap limit
  bool symbolize = true;
  SourceMapSearch source_maps;     // the worker's folder and --source-map-path: where maps may be read
  std::string output;              // -o: the profile (one replica) or the stem of each replica's file
  std::string flamegraph;          // "" = none
  std::string on_heap_limit;       // "" = the near-limit profile of a window goes to `output`
  std::string fallback_dir;        // --fallback-dir: then the temporary folder (tools/heapprof/outputs.h)
  std::vector<int> table_indexes;  // sample types to print, in order
  size_t top_rows = 10;
  bool user_code = false;              // --user-code: the tables in the "your code" view
  std::vector<WorkerRequest> traffic;  // replayed in order and cycled; empty = the synthetic stream
  std::string responses_out;           // --responses-out: every response as a JSON line ("" = none)
  WorkerConfig config;                 // env and compatibility: wrangler config, .dev.vars, the flags
  std::string fetch_handler;           // the module answering the worker's fetch() ("" = none)
  double max_failures = 0.5;           // share of failed requests above which the run exits 1
  std::chrono::milliseconds request_timeout = kDefaultRequestTimeout;  // 0 = none
  // --leaks: the "window" is a leak session: a live snapshot (after a full GC
  // unless --no-gc) when it opens, every `cadence_ns` and when it ends, into a
  // LeakTracker; the report is the growth report, the profile the last snapshot's.
  bool leaks = false;
  int64_t cadence_ns = 0;  // 0: chosen from the first snapshot's cost
  std::string leaks_json;  // "" = none; with replicas, one file per profiled replica (FileFor)
  // --push: each continuous window pushed as it closes (started by the
  // command, stopped after the engine); files are written too only when
  // -o was given.
  std::shared_ptr<remote::WindowPusher> push;
  bool continuous_files = true;
};

// Turns the flags into a Plan, or a usage error message (kInvalidArgument).
Result<Plan> MakePlan(const RunArgs& args);

// The request of --url (--method, --header, --body) as the run's traffic, or
// none (the requests file, read by the command, or the synthetic stream);
// shared by both runtimes so the flags mean the same in each.
Result<std::vector<WorkerRequest>> TrafficFromFlags(const RunArgs& args);

// The file of one replica for an output path: `path` itself when one replica
// is profiled, else `<stem>-<replica>.<ext>` beside it ("a/x.pb.gz", "w-1" ->
// "a/x-w-1.pb.gz"; without -o, "w.pb.gz" -> "w-1.pb.gz").
std::string FileFor(const std::string& path, const std::string& replica, bool only_one);

}  // namespace heapprof::cli
