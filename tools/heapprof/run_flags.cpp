// `heapprof run`'s flags (RunArgs, run_plan.h); the command is run.cpp's RunCommand.
#include <memory>
#include <string>

#include "tools/heapprof/commands.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/flag_values.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/push_flags.h"
#include "tools/heapprof/run_plan.h"

namespace heapprof::cli {

// Runs the command (run.cpp); the exit code.
int RunCommand(const RunArgs& given);

void RegisterRun(Commands& commands) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = commands.Add(
      "run",
      "Run a Workers-style script in an embedded V8 isolate under synthetic requests, profile its heap and "
      "write a pprof file.\nThe worker is an ES module whose default export has fetch(request, env, ctx), or a "
      "script that calls addEventListener('fetch', ...) or defines a global fetch().\n"
      "Ctrl-C (SIGINT) or SIGTERM ends the run early: the profile of the window so far is written (with "
      "--replicas, each profiled replica's; with --continuous, the last, partial window) and the exit code is "
      "130 (143 for SIGTERM); a second one ends heapprof at once.",
      [args] { return RunCommand(*args); });
  AddPushOptions(run, args->push);
  run->add_option("worker", args->worker,
                  "The worker script (.js), or its folder: the wrangler.toml / wrangler.jsonc there names the "
                  "script (main), its bindings and compatibility settings; or that wrangler file itself")
      ->required();
  run->add_option(
         "--requests,-n", args->requests,
         "Stop after N requests (warm-up included). With --runtime workerd: the windows share what the warm-up leaves, "
         "each ending once it has seen its share (requests served while one window closes and the next opens "
         "are counted apart)")
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  run->add_option("--duration,-d")
      ->description("Stop after this much time, e.g. 5s (warm-up included)")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->duration_ns, ParsePositiveDuration));
  run->add_option("--warmup")
      ->description("Requests (200) or time (2s) to serve before the profiling window opens [default: 200]")
      ->type_name("N|DURATION")
      ->check(ParsedInto(&args->warmup, ParseWarmup));
  run->add_option("--window")
      ->description(
          "How long the profiling window stays open, e.g. 2s; the run ends when it closes "
          "[default: the rest of the run]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->window_ns, ParsePositiveDuration));
  run->add_option("--interval")
      ->description(
          "Mean bytes between samples, e.g. 512KiB, 64k, 1MiB, or auto: the interval that gives a function "
          "holding 5 % of --heap-limit ~100 samples (64KiB at 128 MiB)")
      ->type_name("SIZE|auto")
      ->check(ParsedInto(&args->interval_bytes, ParseIntervalOrAuto))
      ->default_str("auto");
  run->add_option("--depth", args->depth, "Stack frames kept per sample")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  run->add_option("--heap-limit")
      ->description("The isolate's heap limit in MiB (or a size like 1GiB)")
      ->type_name("MIB|SIZE")
      ->check(ParsedInto(&args->heap_limit_bytes, ParseHeapLimit))
      ->default_str(DefaultHeapLimitText());
  run->add_flag("--from-start", args->from_start,
                "Open the window before the worker is compiled, so start-up allocations are in the profile");
  run->add_option("-o,--output", args->output, "Where to write the profile [default: <worker-name>.pb.gz]");
  run->add_option("--fallback-dir", args->fallback_dir,
                  "When an output cannot be written (a full disk), write it to this folder instead, then to the "
                  "system's temporary folder; the path is printed and the exit code is 1");
  run->add_option("--flamegraph", args->flamegraph,
                  "Also write an interactive flamegraph page (one self-contained HTML file) of the profile");
  run->add_option("--top", args->top, "Rows per table printed at the end (0: no tables)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  run->add_flag("--user-code", args->user_code, kUserCodeHelp);
  run->add_option("--sample-index", args->sample_index,
                  "Print only this table: inuse_space, alloc_space, inuse_objects or alloc_objects "
                  "[default: inuse_space and alloc_space]");
  run->add_option("--v8-flag", args->v8_flags, "A V8 flag for the isolate, e.g. --v8-flag=--no-opt (repeatable)")
      ->allow_extra_args(false);
  run->add_option("--replicas", args->replicas,
                  "Run N isolates of the worker on threads, each with its own window and files (NAME-<i>.pb.gz)")
      ->check(CLI::Range(1, 64));
  run->add_option(
      "--profile", args->profile_target,
      "With --replicas: profile only this replica (NAME-i, e.g. worker-1); the others keep serving. NS:NAME: "
      "only the isolate of that Durable Object (NAME its idFromName name or 64-hex id), from its creation [default: "
      "all]");
  run->add_option("--continuous")
      ->description("Back-to-back windows of this length, each written to <dir of -o>/<replica>-<start-time>.pb.gz")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->continuous_ns, ParsePositiveDuration));
  run->add_option("--on-heap-limit", args->on_heap_limit,
                  "Near the heap limit, write the in-use profile into FILE, even between windows (without it, the open "
                  "window's near-limit profile goes to -o)");
  run->add_flag("--allow-inlining", args->allow_inlining,
                "Let V8 inline hot functions as in production (by default heapprof turns inlining off so "
                "that allocations are charged to the function that makes them)");
  run->add_flag("--no-gc", args->no_gc,
                "Skip the full GC before the in-use snapshot (garbage not yet collected then counts as in use)");
  run->add_option(
      "--requests-file", args->requests_file,
      "Replay these requests in order, cycling (with either --runtime): JSON lines ({\"method\", \"url\", \"headers\", "
      "\"body\"}) or a HAR file [default: heapprof's synthetic stream]");
  run->add_option("--responses-out", args->responses_out,
                  "Also write every response the worker served, in order, as JSON lines: {\"index\", \"method\", "
                  "\"url\", \"status\", \"headers\", \"body\" (or \"body_base64\")}, or \"error\" for a request "
                  "that threw, rejected or timed out (kept in memory until the run ends). With --runtime workerd: the "
                  "responses as workerd sent them over HTTP (its content-length header included); a handler that "
                  "throws is workerd's 500");
  run->add_option("--url", args->url, "Send this one request, repeated (with --method, --header, --body)");
  run->add_option("--method", args->method, "The method of --url's request")->capture_default_str();
  run->add_option("--header", args->headers, "A header of --url's request, \"Name: value\" (repeatable)")
      ->allow_extra_args(false);
  run->add_option("--body", args->body, "The body of --url's request");
  AddConfigOptions(run, args->config);
  AddFetchHandlerOption(run, args->fetch_handler);
  run->add_option("--max-failures")
      ->description(
          "Exit 1 (profile still written) when more than this share of requests throw, reject, time out "
          "or answer 5xx (with --runtime workerd: answer 5xx, which is how workerd answers a handler that throws or "
          "rejects, time out, or get no response)")
      ->type_name("SHARE")
      ->check(ParsedInto(&args->max_failures, ParseFailureShare))
      ->default_str("50%");
  run->add_option("--object-idle-limit")
      ->description(
          "Evict a Durable Object idle this long (e.g. 30s): its isolate is dropped, its storage kept, and it is "
          "made anew at its next request [default: never]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->object_idle_ns, ParsePositiveDuration));
  run->add_option("--request-timeout")
      ->description(
          "Terminate a request (or the worker's top level) that runs longer, and count it as failed "
          "(0: no limit). With --runtime workerd the limit is heapprof's as the client: it stops waiting, drops the "
          "connection and counts the request as timed out; workerd's own limits still apply inside")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->request_timeout, ParseRequestTimeout))
      ->default_str(DefaultRequestTimeoutText());
  run->add_option("--runtime", args->runtime,
                  "embedded (heapprof's own V8 host) or workerd: serve the worker in a real workerd process and "
                  "profile it through the DevTools protocol (two back-to-back windows, see --sample-types)")
      ->capture_default_str();
  run->add_option("--sample-types", args->sample_types,
                  "With --runtime workerd: inuse, alloc or both (an alloc window, then an in-use window)")
      ->capture_default_str();
  run->add_option("--workerd", args->workerd,
                  "With --runtime workerd: the workerd executable [default: .deps/workerd]");
  run->add_option("--service", args->services,
                  "NAME=WORKER: with --runtime workerd, the worker (its folder or script, with its own wrangler "
                  "config) that the config's services binding to NAME calls [default: the folder beside the worker's "
                  "whose wrangler config has name = NAME] (repeatable)")
      ->type_name("NAME=WORKER")
      ->allow_extra_args(false);
  run->add_flag("--leaks", args->leaks,
                "Instead of a window, a leak session: a live snapshot (after a full GC) when it opens, every "
                "--cadence and at its end; prints which allocation sites grow (growing, bounded, steady, unclear), "
                "how fast (per minute and per 1000 requests) and when the heap reaches its limit; the profile is the "
                "last snapshot's in-use samples with their age (numeric label age, seconds)");
  run->add_option("--cadence")
      ->description("With --leaks: time between snapshots [default: 100 x the first snapshot's cost, >= 1 s]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->cadence_ns, ParsePositiveDuration));
  run->add_option("--leaks-json", args->leaks_json, "With --leaks: also write the growth report as JSON to FILE");
  run->add_flag(
      "--no-source-maps", args->no_source_maps,
      "Keep the generated names and positions of bundled or compiled workers (by default their source "
      "maps are applied: sourceMappingURL comment, inline map or WORKER.js.map), and of the runtime's bundled "
      "libraries (by default named by package file through their embedded map)");
  run->add_option("--source-map-path", args->source_map_paths,
                  "A folder whose tree source maps may also be read from (by default only the worker's folder "
                  "tree is; maps named elsewhere are refused); may be repeated")
      ->check(CLI::ExistingDirectory);
}

}  // namespace heapprof::cli
