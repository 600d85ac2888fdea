// `heapprof serve`'s flags checked and turned into the service's options.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/estimate.h"
#include "heapprof/core/file_io.h"
#include "heapprof/core/leaks.h"
#include "heapprof/core/report.h"
#include "heapprof/core/units.h"
#include "heapprof/http/http_server.h"
#include "heapprof/http/pprof_endpoints.h"
#include "heapprof/runtime/runtime_support.h"
#include "heapprof/serve/live_service.h"
#include "heapprof/v8/attribution.h"
#include "heapprof/v8/v8_host.h"
#include "heapprof/workload/worker_config.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/flag_values.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/push_flags.h"
#include "tools/heapprof/run_plan.h"
#include "tools/heapprof/serve_args.h"

namespace heapprof::cli {

namespace fs = std::filesystem;

int PlanServe(const ServeArgs& args, ServePlan& plan) {
  LiveServiceOptions& options = plan.options;
  options.listen = args.listen;
  options.debug_listen = args.debug_listen == "off" ? "" : args.debug_listen;
  for (const std::string* listen : {&options.listen, &options.debug_listen}) {
    if (listen->empty()) continue;
    if (Result<std::pair<std::string, uint16_t>> a = ParseListenAddress(*listen); !a.ok()) {
      return UsageError("serve", a.status().message());
    }
  }

  if (args.tls_cert.empty() != args.tls_key.empty()) {
    return UsageError("serve", "--debug-tls-cert and --debug-tls-key go together: the certificate and its private key");
  }
  if (!args.tls_cert.empty()) {
    if (options.debug_listen.empty()) {
      return UsageError("serve", "--debug-tls-cert with --debug-listen off: there is no debug listener to serve HTTPS");
    }
    if (Status s = CheckTlsFiles(args.tls_cert, args.tls_key); !s.ok()) return Fail("serve", s);
    options.debug_tls_certificate = args.tls_cert;
    options.debug_tls_key = args.tls_key;
  }
  if (!args.token_file.empty()) {
    Result<std::vector<AccessToken>> tokens = ReadTokenFile(args.token_file);
    if (!tokens.ok()) return Fail("serve", tokens.status());
    options.debug.tokens = std::move(tokens).value();
  }
  options.debug_insecure = args.debug_insecure;
  options.debug.max_windows_per_client = args.client_windows;
  options.debug.windows_per_minute = args.windows_per_minute;
  options.limits.max_connections = args.max_connections;
  options.limits.max_buffered_bytes = static_cast<size_t>(args.max_buffered);
  if (args.replica_prefix) options.replica_prefix = true;

  // The worker's env, as heapprof run gives it: WORKER is its script or its
  // folder; the wrangler config, .dev.vars, --env-json, --kv-data.
  Result<WorkerConfig> config = LoadCheckedConfig("serve", args.worker, args.config, EmbeddedRuntimeSupport());
  if (!config.ok()) return Fail("serve", config.status());
  if (!config->durable_objects.empty() && args.replicas != 1) {
    return UsageError("serve",
                      "--replicas with Durable Objects: each "
                      "replica would have its own object of every id; serve one replica");
  }
  if (Status s = CheckObjectIdleLimit(args.object_idle_ns.has_value(), config.value()); !s.ok()) {
    return UsageError("serve", s.message());
  }
  plan.worker = config->main;
  const std::string& worker = plan.worker;
  if (!fs::is_regular_file(worker)) return Fail("serve", worker + " is not a file");
  std::error_code ec;
  if (!args.on_heap_limit.empty() && !fs::is_directory(args.on_heap_limit, ec)) {
    return Fail("serve", "--on-heap-limit needs an existing directory, not " + args.on_heap_limit);
  }
  if (std::string e = PushFlagsWithoutPush(args.push); !e.empty()) return UsageError("serve", e);
  if (!args.push.url.empty() && args.continuous_every_ns == 0) {
    return UsageError("serve",
                      "--push pushes each window of --continuous D as it closes: give the window's length, "
                      "e.g. --continuous 60s");
  }
  if (args.continuous && !fs::is_directory(args.output_dir, ec)) {
    return Fail("serve", "--output-dir needs an existing directory, not " + args.output_dir);
  }
  if (!args.fallback_dir.empty() && !args.continuous && args.on_heap_limit.empty()) {
    return UsageError("serve",
                      "--fallback-dir is where --continuous's windows and --on-heap-limit's captures go when "
                      "their folder cannot take them; without either serve writes no profile");
  }
  if (!args.fallback_dir.empty() && !fs::is_directory(args.fallback_dir, ec)) {
    return Fail("serve", "--fallback-dir needs an existing folder, not " + args.fallback_dir);
  }

  // --leaks, --cadence, --leaks-json: as heapprof run takes them.
  if (!args.leaks && (args.cadence_ns || !args.leaks_json.empty())) {
    return UsageError("serve", "--cadence and --leaks-json belong to --leaks");
  }
  if (!args.leaks_json.empty()) {
    if (Status s = CheckOutputs({worker}, {args.leaks_json}); !s.ok()) return Fail("serve", s);
  }
  if (args.leaks) {
    LeakSessionOptions leaks;
    leaks.cadence = std::chrono::nanoseconds(args.cadence_ns.value_or(0));
    options.leaks = leaks;
  }

  options.pool.worker_options.durable_objects = DurableObjectNamespaces(config.value());
  if (args.object_idle_ns) {
    options.pool.worker_options.durable_object_idle_limit =
        std::max(std::chrono::milliseconds(1), std::chrono::milliseconds(*args.object_idle_ns / 1'000'000));
  }
  options.pool.worker_options.bindings = std::move(config->bindings);
  options.pool.worker_options.compatibility_flags = FlagsHonoured(config.value(), EmbeddedRuntimeSupport());
  if (Status s = CheckFetchHandler(args.fetch_handler); !s.ok()) return Fail("serve", s);
  options.pool.worker_options.fetch_handler = args.fetch_handler;

  if (Status s = InitializeWorkerV8(args.allow_inlining, args.v8_flags); !s.ok()) return Fail("serve", s);

  // --interval auto, as heapprof run chooses it: from each isolate's heap limit.
  options.session.interval_bytes =
      args.interval_bytes ? *args.interval_bytes : static_cast<uint64_t>(AutoInterval(args.heap_limit_bytes));
  options.session.max_stack_depth = args.depth;
  options.session.gc_before_snapshot = !args.no_gc;
  options.session.inlining_allowed = InliningAllowedAfterInit();
  if (!args.no_source_maps) {  // from the worker's folder tree and --source-map-path, nowhere else
    fs::path worker_dir = fs::path(worker).parent_path();
    SourceMapSearch search;
    search.roots = {worker_dir.empty() ? std::string(".") : worker_dir.string()};
    search.roots.insert(search.roots.end(), args.source_map_paths.begin(), args.source_map_paths.end());
    options.source_maps = search;
  }
  options.continuous = args.continuous;
  options.continuous_dir = args.output_dir;
  // --continuous D: each closed window pushed (--push) and/or written (without
  // --push, or with --output-dir too).
  if (args.continuous_every_ns > 0) {
    std::shared_ptr<remote::WindowPusher> push;
    if (!args.push.url.empty()) {
      Result<std::shared_ptr<remote::WindowPusher>> started =
          StartPush("serve", args.push, IdentityOf(config->name, worker, "embedded"));
      if (!started.ok()) return UsageError("serve", started.status().message());
      push = std::move(started).value();
    }
    bool write = !push || args.output_dir_given;
    plan.outputs = std::make_unique<WindowOutputs>("serve", std::move(push), write ? args.output_dir : "");
    if (const remote::WindowPusher* pusher = plan.outputs->push()) {  // the push's counters on /debug/pprof/
      options.debug.index_sections = [pusher] {
        return std::vector<IndexSection>{{"Push to " + pusher->url(), pusher->CounterRows()}};
      };
    }
    plan.outputs->SetFallback(FallbackDirs(args.fallback_dir));
    options.continuous_every = std::chrono::nanoseconds(args.continuous_every_ns);
    options.continuous_sink = [outputs = plan.outputs.get()](const std::string& replica, Result<Profile> window) {
      outputs->Window(replica, std::move(window));
    };
  }
  options.fallback_dir = args.fallback_dir;
  options.pool.worker = worker;
  options.pool.names = ReplicaNames(worker, args.replicas);
  options.pool.worker_options.heap_limit_bytes = static_cast<size_t>(args.heap_limit_bytes);
  options.pool.queue_limit = args.queue;
  options.pool.worker_options.request_timeout = args.request_timeout;
  options.shutdown_timeout = args.shutdown_timeout;
  options.pool.capture_dir = args.on_heap_limit;
  options.pool.capture_options = options.session;
  return kExitOk;
}

}  // namespace heapprof::cli
