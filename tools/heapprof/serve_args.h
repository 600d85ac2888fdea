// `heapprof serve WORKER`: its flags (serve_flags.cpp), their check into the
// service's options (serve_plan.cpp) and the command (serve.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/http/http_server.h"
#include "heapprof/http/pprof_endpoints.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/serve/live_service.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/push_flags.h"
#include "tools/heapprof/run_plan.h"

namespace heapprof::cli {

struct ServeArgs {
  std::string worker;
  std::string listen = "127.0.0.1:8787";
  std::string debug_listen = "127.0.0.1:6060";
  int replicas = 1;
  size_t queue = 64;
  // Parsed once by the flags' checks (tools/heapprof/flag_values.h).
  std::chrono::milliseconds request_timeout{kDefaultRequestTimeout};  // 0 = none
  std::chrono::milliseconds shutdown_timeout{10'000};
  uint64_t heap_limit_bytes = kDefaultHeapLimitBytes;
  std::optional<uint64_t> interval_bytes;  // empty: --interval auto
  int depth = 64;
  bool no_gc = false;
  bool allow_inlining = false;
  bool no_source_maps = false;
  std::vector<std::string> source_map_paths;
  std::string on_heap_limit;
  bool continuous = false;
  int64_t continuous_every_ns = 0;  // --continuous D: windows cut every D (0: when scraped)
  CLI::Option* continuous_option = nullptr;
  bool output_dir_given = false;
  PushFlags push;
  ConfigFlags config;  // --config, --env-json, --kv-data, --compatibility-*, --ignore-config-key
  std::string fetch_handler;
  std::string output_dir = ".";
  std::string fallback_dir;
  std::vector<std::string> v8_flags;
  // The listeners' and the debug endpoints' limits: their defaults are the libraries'.
  std::string token_file;
  std::string tls_cert, tls_key;
  bool debug_insecure = false;
  bool replica_prefix = false;
  size_t client_windows = PprofEndpointOptions{}.max_windows_per_client;
  size_t windows_per_minute = PprofEndpointOptions{}.windows_per_minute;
  size_t max_connections = HttpServerOptions{}.max_connections;
  uint64_t max_buffered = HttpServerOptions{}.max_buffered_bytes;
  bool leaks = false;                     // --leaks: a leak session on every replica
  std::optional<int64_t> cadence_ns;      // --cadence; empty: 100 x the first snapshot's cost
  std::string leaks_json;                 // --leaks-json: each replica's report at shutdown
  std::optional<int64_t> object_idle_ns;  // --object-idle-limit: Durable Objects idle this long are evicted
};

// What the flags make: the service's options, the windows' outputs (--continuous D), the worker's script.
struct ServePlan {
  LiveServiceOptions options;
  std::unique_ptr<WindowOutputs> outputs;
  std::string worker;
};

// Checks the flags and fills `plan`; kExitOk, or the exit code after saying what is wrong.
int PlanServe(const ServeArgs& args, ServePlan& plan);

// Runs the command; the exit code.
int Serve(const ServeArgs& args);

}  // namespace heapprof::cli
