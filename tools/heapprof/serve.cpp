// `heapprof serve WORKER.js`: the worker as a live HTTP service, profiled on
// demand over Go's net/http/pprof paths on a debug listener. The service
// itself is heapprof/serve/live_service.h; this file is flags and lifecycle.
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
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

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

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
  bool leaks = false;                 // --leaks: a leak session on every replica
  std::optional<int64_t> cadence_ns;  // --cadence; empty: 100 x the first snapshot's cost
  std::string leaks_json;             // --leaks-json: each replica's report at shutdown
};

std::string SizeText(uint64_t bytes) {
  if (bytes % (1u << 20) == 0) return fmt::format("{}MiB", bytes >> 20);
  if (bytes % (1u << 10) == 0) return fmt::format("{}KiB", bytes >> 10);
  return std::to_string(bytes);
}

std::string Seconds(std::chrono::nanoseconds d) {
  return fmt::format("{:.1f} s", std::chrono::duration<double>(d).count());
}

int Serve(const ServeArgs& args) {
  LiveServiceOptions options;
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
                      "--replicas with Durable Objects: the objects live in the worker's isolate, and each "
                      "replica would have its own object of every id; serve one replica");
  }
  const std::string worker = config->main;
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
  std::unique_ptr<WindowOutputs> outputs;
  if (args.continuous_every_ns > 0) {
    std::shared_ptr<remote::WindowPusher> push;
    if (!args.push.url.empty()) {
      Result<std::shared_ptr<remote::WindowPusher>> started =
          StartPush("serve", args.push, IdentityOf(config->name, worker, "embedded"));
      if (!started.ok()) return UsageError("serve", started.status().message());
      push = std::move(started).value();
    }
    bool write = !push || args.output_dir_given;
    outputs = std::make_unique<WindowOutputs>("serve", std::move(push), write ? args.output_dir : "");
    if (const remote::WindowPusher* pusher = outputs->push()) {  // the push's counters on /debug/pprof/
      options.debug.index_sections = [pusher] {
        return std::vector<IndexSection>{{"Push to " + pusher->url(), pusher->CounterRows()}};
      };
    }
    outputs->SetFallback(FallbackDirs(args.fallback_dir));
    options.continuous_every = std::chrono::nanoseconds(args.continuous_every_ns);
    options.continuous_sink = [&outputs](const std::string& replica, Result<Profile> window) {
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

  // Signals before the service is up end the command at once; after, gracefully.
  std::mutex mu;
  std::condition_variable cv;
  InterruptWatcher interrupts([&] {
    std::lock_guard<std::mutex> lock(mu);
    cv.notify_all();
  });
  Result<std::unique_ptr<LiveService>> started = LiveService::Start(options);
  if (!started.ok()) return Fail("serve", started.status());
  LiveService& service = *started.value();

  std::string names;
  for (size_t i = 0; i < options.pool.names.size(); ++i) names += (i ? ", " : "") + options.pool.names[i];
  fmt::print("heapprof serve: {} on http://{}/ ({} replica{}: {})\n", fs::path(worker).filename().string(),
             service.address(), args.replicas, args.replicas == 1 ? "" : "s", names);
  fmt::print("heapprof serve: sampling one sample per {} allocated on average{}\n",
             FormatValue(static_cast<int64_t>(options.session.interval_bytes), "bytes"),
             args.interval_bytes ? ""
                                 : fmt::format(" (--interval auto: a function holding 5 % of the {} heap limit gets "
                                               "~100 samples)",
                                               FormatValue(static_cast<int64_t>(args.heap_limit_bytes), "bytes")));
  if (!service.debug_address().empty()) {
    fmt::print(
        "heapprof serve: profiles on {}/debug/pprof/, e.g.\n"
        "  go tool pprof -top '{}/debug/pprof/heap{}'\n",
        service.debug_url(), service.debug_url(),
        fmt::format("{}{}", args.continuous ? "" : "?seconds=10",
                    args.replicas == 1 ? ""
                    : args.continuous  ? "?target=0"
                                       : "&target=0"));
  }
  if (args.leaks) {
    fmt::print("heapprof serve: a leak session on every replica: a live snapshot {}{}, between requests; {}\n",
               args.cadence_ns ? fmt::format("every {:g} s", static_cast<double>(*args.cadence_ns) / 1e9)
                               : std::string("every 100 x the first one's cost (at least 1 s)"),
               args.no_gc ? "" : " after a full GC",
               service.debug_address().empty()
                   ? std::string("the growth reports at exit")
                   : fmt::format("verdicts on http://{}/debug/heapprof/leaks.html{}", service.debug_address(),
                                 args.replicas == 1 ? "" : "?target=0"));
  }
  std::fflush(stdout);
  if (!options.debug_listen.empty() && !IsLoopbackListen(options.debug_listen)) {
    if (options.debug.tokens.empty()) {
      fmt::print(stderr,
                 "heapprof serve: warning: the debug listener {} is reachable from other hosts and has no "
                 "tokens (--debug-insecure): anyone who reaches it can profile every replica\n",
                 service.debug_address());
    } else if (options.debug_tls_certificate.empty()) {
      fmt::print(stderr,
                 "heapprof serve: warning: the debug listener {} is reachable from other hosts; its tokens "
                 "travel in clear text (no --debug-tls-cert), so keep it on a network you trust\n",
                 service.debug_address());
    }
    std::fflush(stderr);
  }

  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [] { return InterruptWatcher::received() != 0; });
  }
  fmt::print(stderr, "heapprof serve: {}: finishing the requests in flight (for at most {})\n",
             SignalName(InterruptWatcher::received()), Seconds(args.shutdown_timeout));
  std::fflush(stderr);
  service.Shutdown();
  LiveServiceSummary summary = service.Summary();
  for (const AbortedRequests& a : summary.aborted) {
    std::string what;
    if (a.running) what = fmt::format("a request still running (for {}) was terminated", Seconds(a.running_for));
    if (a.queued > 0) {
      what +=
          fmt::format("{}{} queued request{} never ran", what.empty() ? "" : "; ", a.queued, a.queued == 1 ? "" : "s");
    }
    fmt::print(stderr, "heapprof serve: {}: pending after the {} shutdown timeout: {}; answered 503\n", a.replica,
               Seconds(args.shutdown_timeout), what);
  }
  for (const TargetStatus& r : summary.replicas) {
    fmt::print("{}: served {} requests, {} failed, {} isolate restart{}\n", r.name, r.requests, r.failures, r.restarts,
               r.restarts == 1 ? "" : "s");
  }
  if (summary.refused > 0) fmt::print("refused {} requests (queue full or shutting down)\n", summary.refused);
  for (const std::string& path : summary.written) fmt::print("wrote {} (the continuous window)\n", path);
  for (const std::string& error : summary.errors) fmt::print(stderr, "heapprof serve: {}\n", error);
  bool leaks_ok = true;
  for (const FinalLeakReport& f : summary.leaks) {
    if (!f.report.ok()) {
      fmt::print(stderr, "heapprof serve: {}: no growth report: {}\n", f.target, f.report.status().message());
      continue;  // a service stopped before its second snapshot is not a failure
    }
    fmt::print("\nLeak session on {}: {} snapshots, the slowest paused it {:.1f} ms ({:.1f} ms in all){}\n{}", f.target,
               f.stats.snapshots, static_cast<double>(f.stats.snapshot_nanos_max) / 1e6,
               static_cast<double>(f.stats.snapshot_nanos_total) / 1e6,
               f.restarts > 0 ? fmt::format("; since its isolate's re-creation #{}", f.restarts) : std::string(),
               FormatLeakReport(f.report.value()));
    if (args.leaks_json.empty()) continue;
    const std::string path = FileFor(args.leaks_json, f.target, summary.leaks.size() == 1);
    if (Status w = WriteFileAtomic(path, f.json); !w.ok()) {
      fmt::print(stderr, "heapprof serve: {}: {}\n", f.target, w.message());
      leaks_ok = false;
    } else {
      fmt::print("Growth report (JSON): {}\n", path);
    }
  }
  bool outputs_ok = leaks_ok;
  if (outputs) {
    outputs->Stop(args.shutdown_timeout);  // the last windows pushed, for at most the shutdown timeout
    outputs->PrintSummary();
    outputs_ok = outputs->ok() && outputs_ok;
  }
  return summary.errors.empty() && outputs_ok ? kExitOk : kExitFailure;
}

}  // namespace

void RegisterServe(Commands& commands) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* serve = commands.Add("serve",
                                 "Serve a worker over HTTP and profile it on demand: go tool pprof "
                                 "http://127.0.0.1:6060/debug/pprof/heap?seconds=10",
                                 [args] {
                                   args->continuous = args->continuous_option->count() > 0;
                                   return Serve(*args);
                                 });
  serve->add_option("worker", args->worker, "The worker script (.js)")->required();
  serve->add_option("--listen", args->listen, "Where the worker answers: HOST:PORT (port 0 picks a free one)")
      ->capture_default_str();
  serve
      ->add_option("--debug-listen", args->debug_listen,
                   "Where /debug/pprof/ answers: HOST:PORT, or 'off' (keep it on loopback: it runs profiling windows)")
      ->capture_default_str();
  serve
      ->add_option("--debug-token-file", args->token_file,
                   "Require a token on the debug listener: a file with lines 'NAME SECRET PATTERN...' (a pattern "
                   "names the targets the token may profile: worker-1, worker-*, *); requests send "
                   "'Authorization: Bearer SECRET'")
      ->check(CLI::ExistingFile);
  serve
      ->add_option("--debug-tls-cert", args->tls_cert,
                   "The debug listener speaks HTTPS only, with this certificate (PEM: the certificate, then its "
                   "intermediates); needs --debug-tls-key")
      ->type_name("FILE");
  serve->add_option("--debug-tls-key", args->tls_key, "The private key of --debug-tls-cert (PEM, without a passphrase)")
      ->type_name("FILE");
  serve->add_flag("--debug-insecure", args->debug_insecure,
                  "Let --debug-listen take an address other hosts can reach without --debug-token-file");
  serve
      ->add_option("--debug-client-windows", args->client_windows,
                   "Profiling windows one client (a token, or an address) may hold at once; more get 429")
      ->check(CLI::Range(size_t{1}, size_t{1} << 16))
      ->capture_default_str();
  serve
      ->add_option("--debug-windows-per-minute", args->windows_per_minute,
                   "Profiling windows one client may open in any minute; more get 429 with Retry-After")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  serve
      ->add_option("--max-connections", args->max_connections,
                   "Open connections per listener; one more is answered 503 and closed")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  serve->add_option("--max-buffered")
      ->description(
          "Request bodies buffered at once over all connections of a listener (a request that would go "
          "beyond gets 503)")
      ->type_name("SIZE")
      ->check(ParsedInto(&args->max_buffered,
                         [](const std::string& text) -> Result<uint64_t> {
                           Result<uint64_t> bytes = ParseSize(text);
                           if (!bytes.ok() || bytes.value() < 1024)
                             return Error(ErrorCode::kInvalidArgument, "must be a size of at least 1KiB");
                           return bytes;
                         }))
      ->default_str(SizeText(args->max_buffered));
  serve->add_flag("--replica-prefix", args->replica_prefix,
                  "With one replica, still take a /@NAME/ path prefix as the replica's (with several it always is)");
  serve
      ->add_option("--replicas", args->replicas,
                   "Isolates of the worker, each on its own thread; a request picks one by the header "
                   "X-Heapprof-Replica: N or the path prefix /@N/, else round-robin")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  serve->add_option("--queue", args->queue, "Requests waiting per replica before new ones get 503")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  serve->add_option("--request-timeout")
      ->description(
          "A request running longer is terminated (503) and its isolate recreated; 0 = no limit while "
          "serving (at SIGTERM/Ctrl-C --shutdown-timeout still ends it)")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->request_timeout, ParseRequestTimeout))
      ->default_str(DefaultRequestTimeoutText());
  serve->add_option("--shutdown-timeout")
      ->description(
          "At SIGTERM/Ctrl-C, how long the requests already received may run on; those still running "
          "then are terminated, those still queued never run, and all are answered 503")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->shutdown_timeout, ParseTimeout))
      ->default_str("10s");
  serve->add_option("--heap-limit")
      ->description("Each isolate's heap limit in MiB (or a size like 1GiB)")
      ->type_name("MIB|SIZE")
      ->check(ParsedInto(&args->heap_limit_bytes, ParseHeapLimit))
      ->default_str(DefaultHeapLimitText());
  serve->add_option("--interval")
      ->description(
          "Mean bytes between samples in a window, e.g. 512KiB, 64k, or auto: the interval that gives a "
          "function holding 5 % of --heap-limit ~100 samples (64KiB at 128 MiB), as heapprof run chooses")
      ->type_name("SIZE|auto")
      ->check(ParsedInto(&args->interval_bytes, ParseIntervalOrAuto))
      ->default_str("auto");
  serve->add_option("--depth", args->depth, "Stack frames kept per sample")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  serve->add_option("--on-heap-limit", args->on_heap_limit,
                    "Directory for near-heap-limit captures (in-use profiles taken before an isolate is stopped); "
                    "listed on /debug/pprof/");
  args->continuous_option =
      serve->add_option("--continuous")
          ->description(
              "Keep a window open on every replica: /debug/pprof/heap without seconds= returns what it has "
              "seen since it opened (and opens the next); at SIGTERM each replica's last window is written to "
              "--output-dir. With a length D (--continuous 60s) each window closes after D and is written "
              "to --output-dir (or pushed, with --push), and the scrape returns the last closed one")
          ->type_name("[D]")
          ->expected(0, 1)
          ->check(CLI::Validator(
              [args](std::string& text) -> std::string {
                if (text.empty()) return "";
                Result<int64_t> ns = ParsePositiveDuration(text);
                if (!ns.ok()) return ns.status().message() + " (a window length, e.g. 60s; the worker comes first)";
                args->continuous_every_ns = ns.value();
                return "";
              },
              ""));
  serve
      ->add_option("--output-dir", args->output_dir,
                   "Where --continuous writes the last windows at SIGTERM (with D: every window)")
      ->each([args](const std::string&) { args->output_dir_given = true; })
      ->capture_default_str();
  AddPushOptions(serve, args->push);
  serve->add_option("--fallback-dir", args->fallback_dir,
                    "When --output-dir cannot take a --continuous window, or --on-heap-limit a capture (a full disk), "
                    "write it here instead, then to the system's temporary folder; the path is printed and the exit "
                    "code is 1");
  serve->add_flag("--leaks", args->leaks,
                  "A leak session on every replica while it serves: a live snapshot (after a full GC) every --cadence "
                  "between requests; /debug/heapprof/leaks.html?target=T shows which allocation sites grow "
                  "(growing, bounded, steady, unclear), how fast and when the heap reaches its limit "
                  "(/debug/heapprof/leaks: JSON); each replica's report is printed at exit");
  serve->add_option("--cadence")
      ->description("With --leaks: time between snapshots [default: 100 x the first snapshot's cost, >= 1 s]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->cadence_ns, ParsePositiveDuration));
  serve->add_option("--leaks-json", args->leaks_json,
                    "With --leaks: also write each replica's growth report at exit as JSON to FILE (with replicas, "
                    "FILE-NAME.json)");
  AddConfigOptions(serve, args->config);
  AddFetchHandlerOption(serve, args->fetch_handler);
  serve->add_option("--v8-flag", args->v8_flags, "A V8 flag for the isolates, e.g. --v8-flag=--no-opt (repeatable)")
      ->allow_extra_args(false);
  serve->add_flag("--allow-inlining", args->allow_inlining,
                  "Let V8 inline (faster; an inlined helper's allocations are charged to its caller)");
  serve->add_flag("--no-gc", args->no_gc,
                  "No full GC before a window's in-use snapshot (in-use then includes garbage)");
  serve->add_flag("--no-source-maps", args->no_source_maps, "Keep generated names and lines in profiles");
  serve
      ->add_option("--source-map-path", args->source_map_paths,
                   "A folder whose tree source maps may also be read from (by default only the worker's folder "
                   "tree is); may be repeated")
      ->check(CLI::ExistingDirectory);
}

}  // namespace heapprof::cli
