// `heapprof serve`'s flags.
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>

#include "heapprof/core/units.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/flag_values.h"
#include "tools/heapprof/push_flags.h"
#include "tools/heapprof/serve_args.h"

namespace heapprof::cli {
namespace {

std::string SizeText(uint64_t bytes) {
  if (bytes % (1u << 20) == 0) return fmt::format("{}MiB", bytes >> 20);
  if (bytes % (1u << 10) == 0) return fmt::format("{}KiB", bytes >> 10);
  return std::to_string(bytes);
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
  serve
      ->add_option("worker", args->worker,
                   "The worker script (.js), or its folder, or its wrangler.toml / wrangler.jsonc (whose main is "
                   "the script)")
      ->required();
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
  serve->add_option("--object-idle-limit")
      ->description(
          "Evict a Durable Object idle this long (e.g. 30s): its isolate is dropped (and its target with it), its "
          "storage kept, and it is made anew at its next request, counted as a restart [default: never]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->object_idle_ns, ParsePositiveDuration));
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
