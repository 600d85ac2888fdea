// `heapprof run WORKER.js`: serve synthetic requests to a worker in an
// embedded isolate, profile a window of them, write the pprof file and print
// what holds and what allocates the memory.
#include <fmt/format.h>
#include <v8.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "heapprof/v8/attribution.h"
#include "heapprof/file_io.h"
#include "heapprof/flamegraph.h"
#include "heapprof/pprof.h"
#include "heapprof/report.h"
#include "heapprof/v8/session.h"
#include "heapprof/symbolizer.h"
#include "heapprof/units.h"
#include "heapprof/v8/v8_host.h"
#include "heapprof/v8/worker_runtime.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/progress.h"
#include "tools/heapprof/run_replicas.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
// Without --requests, --duration or --window a run serves this many requests
// (a few seconds for the bundled examples), and stops earlier at kDefaultDuration
// so that a slow worker does not keep a newcomer waiting.
constexpr uint64_t kDefaultRequests = 20000;
constexpr int64_t kDefaultDurationNs = 5'000'000'000;
constexpr uint64_t kDefaultWarmupRequests = 200;

struct RunArgs {
  std::string worker;
  int64_t requests = 0;  // signed, so "-3" is rejected instead of wrapping
  std::string duration;
  std::string warmup;
  std::string window;
  std::string interval = "512KiB";
  int depth = 64;
  std::string heap_limit = "128";
  bool from_start = false;
  bool no_gc = false;
  bool allow_inlining = false;
  bool no_source_maps = false;
  std::vector<std::string> v8_flags;
  std::string output;
  int top = 10;
  std::string sample_index;
  std::string flamegraph;  // also write the interactive flamegraph page here
  int replicas = 1;        // isolates of the worker, profiled through the controller
  std::string profile_target;
  std::string continuous;
  std::string on_heap_limit;
};

// The validated plan of a run; every limit is checked after each request.
struct Plan {
  uint64_t max_requests = kNoLimit;
  int64_t max_duration_ns = kForever;
  uint64_t warmup_requests = 0;  // the window opens after this many requests...
  int64_t warmup_ns = 0;         // ...or after this much time (one of the two is used)
  int64_t window_ns = kForever;  // the run ends when the window closes
  int64_t continuous_ns = 0;     // --continuous: length of each back-to-back window (0 = off)
  size_t heap_limit_bytes = 0;
  SessionOptions session;
  std::string output;
  std::vector<int> table_indexes;  // sample types to print, in order
};

// "2.31 s" / "850 ms" for reports.
std::string Seconds(int64_t ns) {
  if (ns < 1'000'000'000) return fmt::format("{} ms", ns / 1'000'000);
  return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9);
}

std::string Bytes(uint64_t bytes) { return FormatValue(static_cast<int64_t>(bytes), "bytes"); }

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Turns the flags into a Plan, or a usage error message.
Result<Plan> MakePlan(const RunArgs& args) {
  Plan plan;
  auto bad = [](std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); };
  bool bounded = false;
  if (args.requests > 0) {
    plan.max_requests = static_cast<uint64_t>(args.requests);
    bounded = true;
  }
  if (!args.duration.empty()) {
    plan.max_duration_ns = ParseDuration(args.duration).value();
    if (plan.max_duration_ns <= 0) return bad("--duration must be more than 0");
    bounded = true;
  }
  if (!args.window.empty()) {
    plan.window_ns = ParseDuration(args.window).value();
    if (plan.window_ns <= 0) return bad("--window must be more than 0");
    bounded = true;
  }
  if (!args.continuous.empty()) {
    plan.continuous_ns = ParseDuration(args.continuous).value();
    if (plan.continuous_ns <= 0) return bad("--continuous must be more than 0");
  }
  if (!bounded) {
    plan.max_requests = kDefaultRequests;
    plan.max_duration_ns = kDefaultDurationNs;
  }

  if (args.from_start) {
    if (!args.warmup.empty()) {
      return bad("--from-start opens the window before the worker is loaded, so there is no warm-up; "
                 "drop --warmup or --from-start");
    }
  } else if (args.warmup.empty()) {
    plan.warmup_requests = kDefaultWarmupRequests;
  } else if (AllDigits(args.warmup)) {
    plan.warmup_requests = std::stoull(args.warmup);
  } else {
    Result<int64_t> warmup = ParseDuration(args.warmup);
    if (!warmup.ok()) {
      return bad("--warmup takes a number of requests (200) or a duration (2s): " + warmup.status().message());
    }
    plan.warmup_ns = warmup.value();
  }
  if (plan.max_requests != kNoLimit && plan.warmup_requests >= plan.max_requests) {
    if (!args.warmup.empty()) {
      return bad(fmt::format("the warm-up ({} requests) leaves nothing to profile within --requests {}",
                             plan.warmup_requests, plan.max_requests));
    }
    plan.warmup_requests = plan.max_requests / 10;  // a short run: keep most of it in the window
  }
  if (plan.max_duration_ns != kForever && plan.warmup_ns >= plan.max_duration_ns) {
    return bad(fmt::format("the warm-up ({}) leaves nothing to profile within --duration {}", args.warmup,
                           args.duration));
  }

  uint64_t interval = ParseSize(args.interval).value();
  if (interval == 0 || interval > (1ull << 30)) return bad("--interval must be between 1 byte and 1 GiB");
  plan.session.interval_bytes = interval;
  plan.session.max_stack_depth = args.depth;
  plan.session.gc_before_snapshot = !args.no_gc;

  uint64_t heap_limit = 0;
  if (AllDigits(args.heap_limit)) {
    heap_limit = std::stoull(args.heap_limit.substr(0, 9)) * 1024 * 1024;
  } else {
    Result<uint64_t> parsed = ParseSize(args.heap_limit);
    if (!parsed.ok()) return bad("--heap-limit takes MiB (128) or a size (1GiB): " + parsed.status().message());
    heap_limit = parsed.value();
  }
  if (heap_limit < 8u * 1024 * 1024 || heap_limit > 64ull * 1024 * 1024 * 1024) {
    return bad("--heap-limit must be between 8 MiB and 64 GiB");
  }
  plan.heap_limit_bytes = static_cast<size_t>(heap_limit);

  if (args.sample_index.empty()) {
    plan.table_indexes = {kInuseSpace, kAllocSpace};
  } else {
    static const char* kTypes[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"};
    int found = -1;
    for (int i = 0; i < 4; ++i) {
      if (args.sample_index == kTypes[i] || args.sample_index == std::to_string(i)) found = i;
    }
    if (found < 0) {
      return bad("unknown --sample-index \"" + args.sample_index +
                 "\"; use alloc_objects, alloc_space, inuse_objects or inuse_space");
    }
    plan.table_indexes = {found};
  }

  if (args.output.empty()) {
    plan.output = fs::path(args.worker).stem().string() + ".pb.gz";
  } else {
    plan.output = args.output;
  }
  return plan;
}

// What the tables say about each sample type, for a newcomer.
std::string TableTitle(int index, bool gc, bool near_limit) {
  if (near_limit && (index == kInuseSpace || index == kInuseObjects)) {
    return index == kInuseSpace ? "Memory in use near the heap limit (inuse_space, captured before V8 stopped the worker):"
                                : "Objects in use near the heap limit (inuse_objects):";
  }
  switch (index) {
    case kInuseSpace:
      return gc ? "Memory still in use when the window closed (inuse_space, after a full GC):"
                : "Memory still in use when the window closed (inuse_space, no GC before the snapshot):";
    case kAllocSpace: return "Memory allocated during the window, freed or not (alloc_space):";
    case kInuseObjects: return "Objects still in use when the window closed (inuse_objects):";
    case kAllocObjects: return "Objects allocated during the window (alloc_objects):";
  }
  return "";
}

void PrintTables(const Profile& profile, const Plan& plan, size_t rows, bool near_limit = false) {
  if (rows == 0) return;
  if (profile.samples.empty()) {
    fmt::print("\nNo samples: the window allocated less than about one sampling interval ({}).\n"
               "Serve more requests (--requests, --duration) or sample more often (--interval 64KiB).\n",
               Bytes(plan.session.interval_bytes));
    return;
  }
  bool builtins = false, runtime_frames = false;
  for (int index : plan.table_indexes) {
    TopOptions options;
    options.sample_index = index;
    options.rows = rows;
    fmt::print("\n{}\n{}", TableTitle(index, plan.session.gc_before_snapshot, near_limit),
               FormatTopTable(profile, options));
    std::vector<FunctionTotal> totals = FunctionTotals(profile, index);
    for (size_t i = 0; i < std::min(rows, totals.size()); ++i) {
      builtins = builtins || totals[i].filename.empty();
      runtime_frames = runtime_frames || totals[i].filename == "heapprof:runtime";
    }
  }
  // One line per kind of unfamiliar row, so a first reader can tell them apart.
  if (builtins) {
    fmt::print("\nRows without a file are V8 built-ins (Map, set, exec...) charged for what they allocate for\n"
               "their caller, or VM states: (V8 API) is work done from C++, such as the request objects the\n"
               "runtime builds; (anonymous) without a file is where V8 resumes async functions.\n");
  }
  if (runtime_frames) {
    fmt::print("heapprof:runtime rows are heapprof's own worker runtime (Request, Headers, Response, URL).\n");
  }
}

// One sentence per table's winner: the answer, before the details.
void PrintSummary(const Profile& profile, const Plan& plan) {
  for (int index : plan.table_indexes) {
    std::vector<FunctionTotal> totals = FunctionTotals(profile, index);
    int64_t total = profile.Total(index);
    if (totals.empty() || total <= 0 || totals[0].flat <= 0) continue;
    const FunctionTotal& top = totals[0];
    std::string where = top.filename.empty() ? "" : fmt::format(" ({}:{})", fs::path(top.filename).filename().string(), top.start_line);
    std::string_view unit = profile.str(profile.sample_types[index].unit);
    const char* verb = index == kInuseSpace || index == kInuseObjects ? "holds" : "allocated";
    fmt::print("{} {} {:.1f}% of {} ({}).\n", top.name + where, verb,
               100.0 * static_cast<double>(top.flat) / static_cast<double>(total), FormatValue(total, unit),
               profile.str(profile.sample_types[index].type));
  }
}

// The state the near-heap-limit hook shares with the request loop.
struct Window {
  WorkerRuntime* runtime = nullptr;
  std::optional<Session> session;
  std::optional<Result<Profile>> near_limit_profile;
  Clock::time_point opened;
  uint64_t opened_at_request = 0;
};

// The controller-driven run: replicas on threads, windows requested while they serve.
ReplicaRun ReplicaPlan(const RunArgs& args, const Plan& plan) {
  ReplicaRun run;
  run.worker = args.worker;
  run.replicas = args.replicas;
  run.target = args.profile_target;
  run.duration_ns = plan.max_duration_ns != kForever ? plan.max_duration_ns : kDefaultDurationNs;
  run.warmup_ns = plan.warmup_ns > 0 ? plan.warmup_ns : std::min<int64_t>(run.duration_ns / 5, 1'000'000'000);
  run.continuous = plan.continuous_ns > 0;
  run.window_ns = run.continuous ? plan.continuous_ns
                  : plan.window_ns != kForever ? plan.window_ns
                                               : std::max<int64_t>(run.duration_ns - run.warmup_ns, 1'000'000);
  run.on_heap_limit = args.on_heap_limit;
  run.heap_limit_bytes = plan.heap_limit_bytes;
  run.session = plan.session;
  run.output = plan.output;
  run.top = args.top;
  return run;
}

int RunWorker(const RunArgs& args) {
  Result<Plan> planned = MakePlan(args);
  if (!planned.ok()) return UsageError("run", planned.status().message());
  Plan& plan = planned.value();

  if (!fs::is_regular_file(args.worker)) {
    return Fail("run", fs::exists(args.worker) ? args.worker + " is not a file"
                                               : "no such worker file: " + args.worker);
  }
  // Unwritable outputs are found before the run, not after it.
  for (const std::string& output : {plan.output, args.flamegraph, args.on_heap_limit}) {
    fs::path out_dir = fs::path(output).parent_path();
    std::error_code ec;
    if (output.empty() || out_dir.empty() || fs::is_directory(out_dir, ec)) continue;
    return Fail("run", "cannot write " + output + ": " +
                           (fs::exists(out_dir, ec) ? out_dir.string() + " is not a directory"
                                                    : "no such directory " + out_dir.string()));
  }

  // Exact attribution: unless --allow-inlining, the optimizing tiers do not
  // inline, so a helper's allocations are not charged to its caller.
  V8InitOptions v8_options;
  if (!args.allow_inlining) v8_options.flags = NoInliningFlags();
  v8_options.flags.insert(v8_options.flags.end(), args.v8_flags.begin(), args.v8_flags.end());
  if (Status s = InitializeV8(v8_options); !s.ok()) return Fail("run", s);
  for (const std::string& flag : V8UnknownFlags()) {
    if (std::find(args.v8_flags.begin(), args.v8_flags.end(), flag) != args.v8_flags.end()) {
      return Fail("run", "V8 " + V8RuntimeVersion() + " does not know the flag " + flag);
    }
  }
  if (args.replicas > 1 || !args.continuous.empty() || !args.on_heap_limit.empty() || !args.profile_target.empty()) {
    return RunReplicas(ReplicaPlan(args, plan));
  }
  plan.session.inlining_allowed = InliningAllowedAfterInit();

  ProgressLine progress(StderrIsTerminal());
  std::string worker_name = fs::path(args.worker).filename().string();
  auto window = std::make_shared<Window>();

  WorkerOptions options;
  options.name = worker_name;
  options.heap_limit_bytes = plan.heap_limit_bytes;
  options.console = [&progress, worker_name](std::string_view level, std::string_view text) {
    bool plain = level == "log" || level == "info" || level == "debug";
    progress.PrintAbove(fmt::format("[{}] {}{}", worker_name, plain ? "" : std::string(level) + ": ", text));
  };
  // Near the limit: keep the in-use profile of the open window before V8 ends the script.
  options.on_near_heap_limit = [window](v8::Isolate*, size_t) {
    if (window->session && window->runtime) {
      window->near_limit_profile.emplace(window->runtime->StopSession(std::move(*window->session)));
      window->session.reset();
    }
  };
  Result<WorkerRuntime> created = WorkerRuntime::Create(options);
  if (!created.ok()) return Fail("run", created.status());
  WorkerRuntime& runtime = created.value();
  window->runtime = &runtime;
  // Ctrl-C or SIGTERM: cut the running request short (TerminateExecution may
  // be called from any thread), then write the window so far.
  v8::Isolate* v8_isolate = runtime.isolate().get();
  InterruptWatcher interrupts([v8_isolate] { v8_isolate->TerminateExecution(); });

  const Clock::time_point start = Clock::now();
  uint64_t served = 0;
  auto open_window = [&]() -> Status {
    Result<Session> session = runtime.StartSession(plan.session);
    if (!session.ok()) return Error(session.status().code(), "cannot start profiling: " + session.status().message());
    window->session.emplace(std::move(session).value());
    window->opened = Clock::now();
    window->opened_at_request = served;
    return Status::Ok();
  };
  auto elapsed_ns = [](Clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - since).count();
  };

  // Writes whatever profile the heap limit left us, and says so.
  auto heap_limit_exit = [&](const Status& failure) -> int {
    progress.Clear();
    Fail("run", failure.message() + (served > 0 ? fmt::format(" (after {} requests)", served) : ""));
    if (!window->near_limit_profile) {
      fmt::print(stderr, "No profile was written: the profiling window was not open when the limit was reached{}.\n",
                 args.from_start ? "" : " (try --from-start or a shorter --warmup)");
      return kExitFailure;
    }
    if (!window->near_limit_profile->ok()) {
      return Fail("run", "capturing the profile near the heap limit failed: " +
                             window->near_limit_profile->status().message());
    }
    const Profile& profile = window->near_limit_profile->value();
    if (Status s = WritePprofFile(plan.output, profile); !s.ok()) return Fail("run", s);
    fmt::print("Wrote the in-use profile captured near the heap limit to {}\n", plan.output);
    PrintTables(profile, plan, static_cast<size_t>(args.top), /*near_limit=*/true);
    return kExitFailure;
  };

  if (args.from_start) {
    if (Status s = open_window(); !s.ok()) return Fail("run", s);
  }
  Status loaded = runtime.LoadFile(args.worker);
  if (!loaded.ok() && InterruptWatcher::received() == 0) {
    if (loaded.code() == ErrorCode::kResourceExhausted) return heap_limit_exit(loaded);
    return Fail("run", loaded);
  }

  Clock::time_point last_draw{};
  auto draw = [&](bool force) {
    if (!progress.enabled()) return;
    Clock::time_point now = Clock::now();
    if (!force && now - last_draw < std::chrono::milliseconds(100)) return;
    last_draw = now;
    HeapUsage heap = runtime.heap_usage();
    std::string state = window->session ? fmt::format("window open {:.1f}s", elapsed_ns(window->opened) / 1e9)
                                        : std::string("warming up");
    progress.Show(fmt::format("heapprof: {} requests  {:.1f}s  {}  heap {} / {}", served,
                              elapsed_ns(start) / 1e9, state, Bytes(heap.used_bytes), Bytes(heap.limit_bytes)));
  };

  bool window_done = !loaded.ok();  // interrupted while loading
  while (!window_done) {
    bool warm = served >= plan.warmup_requests && elapsed_ns(start) >= plan.warmup_ns;
    if (!window->session && warm) {
      if (Status s = open_window(); !s.ok()) return Fail("run", s);
    }
    Result<WorkerResponse> response = runtime.Dispatch(SyntheticRequest(served));
    if (!response.ok() && InterruptWatcher::received() != 0) break;  // terminated mid-request: not counted
    if (!response.ok()) {
      if (response.status().code() == ErrorCode::kResourceExhausted) return heap_limit_exit(response.status());
      progress.Clear();
      return Fail("run", response.status().message() + fmt::format("\n(request #{}; no profile written)", served + 1));
    }
    ++served;
    draw(false);
    bool run_over = served >= plan.max_requests || elapsed_ns(start) >= plan.max_duration_ns;
    bool window_over = window->session && elapsed_ns(window->opened) >= plan.window_ns;
    window_done = run_over || window_over || InterruptWatcher::received() != 0;
  }
  draw(true);
  progress.Clear();
  const int signal = InterruptWatcher::received();
  if (signal != 0) {
    // No more terminations from here on, and none pending for the snapshot's GC.
    interrupts.StopWatching();
    v8_isolate->CancelTerminateExecution();
    if (!window->session) {
      Fail("run", fmt::format("interrupted by {} {} ({} requests served); no profile written", SignalName(signal),
                              runtime.kind() == WorkerKind::kNotLoaded ? "while loading the worker"
                                                                        : "during the warm-up",
                              served));
      return InterruptedExitCode(signal);
    }
    fmt::print(stderr, "heapprof run: interrupted by {} after {} requests; writing the profile of the window so far\n",
               SignalName(signal), served);
  }
  if (!window->session) {
    return Fail("run", fmt::format("the run ended after {} requests, before the warm-up was over; no profile "
                                   "written (shorten --warmup or lengthen the run)",
                                   served));
  }
  int64_t window_ns = elapsed_ns(window->opened);
  uint64_t window_requests = served - window->opened_at_request;
  HeapUsage heap = runtime.heap_usage();
  Result<Profile> profile = runtime.StopSession(std::move(*window->session));
  window->session.reset();
  if (!profile.ok()) return Fail("run", "building the profile failed: " + profile.status().message());
  if (!args.no_source_maps) {  // original names and .ts lines for bundled or compiled workers
    FileSourceMapProvider maps;
    for (const std::string& w : Symbolize(profile.value(), maps).warnings) {
      fmt::print(stderr, "heapprof run: warning: {}\n", w);
    }
  }
  if (Status s = WritePprofFile(plan.output, profile.value()); !s.ok()) return Fail("run", s);

  fmt::print("Profiled {} ({}): {} requests in {}\n", worker_name, WorkerKindName(runtime.kind()), served,
             Seconds(elapsed_ns(start)));
  if (args.from_start) {
    fmt::print("  window   from before the worker was loaded: start-up and {} requests, {}\n", window_requests,
               Seconds(window_ns));
  } else {
    fmt::print("  window   {} requests, {}, after a warm-up of {} requests\n", window_requests, Seconds(window_ns),
               window->opened_at_request);
  }
  fmt::print("  sampling one sample per {} allocated on average; values are estimates of the real totals\n",
             Bytes(plan.session.interval_bytes));
  fmt::print("  heap     {} used of the {} limit at the end\n", Bytes(heap.used_bytes), Bytes(heap.limit_bytes));
  fmt::print("Wrote {}\n", plan.output);
  if (!args.flamegraph.empty()) {
    FlamegraphOptions page_options;
    page_options.title = fmt::format("heapprof run {}", worker_name);
    Result<std::string> page = RenderFlamegraphHtml(profile.value(), page_options);
    // An empty window is a result, not a failure: the profile is written, the page cannot be.
    if (!page.ok()) {
      fmt::print(stderr, "No flamegraph written: {}\n", page.status().message());
    } else if (Status s = WriteFileAtomic(args.flamegraph, page.value()); !s.ok()) {
      return Fail("run", s);
    } else {
      fmt::print("Wrote {}\n", args.flamegraph);
    }
  }
  PrintTables(profile.value(), plan, static_cast<size_t>(args.top));
  fmt::print("\n");
  PrintSummary(profile.value(), plan);
  fmt::print("\nMore: heapprof top {0} --cum    go tool pprof -top -sample_index=alloc_space {0}\n", plan.output);
  if (int late = InterruptWatcher::received(); late != 0) {  // (also a signal while the profile was written)
    fmt::print(stderr, "heapprof run: the run was interrupted by {}; {} holds the window up to then\n",
               SignalName(late), plan.output);
    return InterruptedExitCode(late);
  }
  return kExitOk;
}

}  // namespace

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
      [args] { return RunWorker(*args); });
  run->add_option("worker", args->worker, "The worker script (.js)")->required();
  run->add_option("--requests,-n", args->requests, "Stop after N requests (warm-up included)")
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  run->add_option("--duration,-d", args->duration, "Stop after this much time, e.g. 5s (warm-up included)")
      ->check(DurationValidator());
  run->add_option("--warmup", args->warmup,
                  "Requests (200) or time (2s) to serve before the profiling window opens [default: 200]");
  run->add_option("--window", args->window,
                  "How long the profiling window stays open, e.g. 2s; the run ends when it closes "
                  "[default: the rest of the run]")
      ->check(DurationValidator());
  run->add_option("--interval", args->interval, "Mean bytes between samples, e.g. 512KiB, 64k, 1MiB")
      ->check(SizeValidator())
      ->capture_default_str();
  run->add_option("--depth", args->depth, "Stack frames kept per sample")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  run->add_option("--heap-limit", args->heap_limit, "The isolate's heap limit in MiB (or a size like 1GiB)")
      ->capture_default_str();
  run->add_flag("--from-start", args->from_start,
                "Open the window before the worker is compiled, so start-up allocations are in the profile");
  run->add_option("-o,--output", args->output, "Where to write the profile [default: <worker-name>.pb.gz]");
  run->add_option("--flamegraph", args->flamegraph,
                  "Also write an interactive flamegraph page (one self-contained HTML file) of the profile");
  run->add_option("--top", args->top, "Rows per table printed at the end (0: no tables)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  run->add_option("--sample-index", args->sample_index,
                  "Print only this table: inuse_space, alloc_space, inuse_objects or alloc_objects "
                  "[default: inuse_space and alloc_space]");
  run->add_option("--v8-flag", args->v8_flags, "A V8 flag for the isolate, e.g. --v8-flag=--no-opt (repeatable)")
      ->allow_extra_args(false);
  run->add_option("--replicas", args->replicas,
                  "Run N isolates of the worker on threads, profiled through the controller while they serve")
      ->check(CLI::Range(1, 64));
  run->add_option("--profile", args->profile_target,
                  "With --replicas: profile only this replica (NAME#i) [default: all]");
  run->add_option("--continuous", args->continuous,
                  "Back-to-back windows of this length, each written to <dir of -o>/<replica>-<start-time>.pb.gz")
      ->check(DurationValidator());
  run->add_option("--on-heap-limit", args->on_heap_limit,
                  "Capture the in-use profile into FILE when an isolate nears its heap limit");
  run->add_flag("--allow-inlining", args->allow_inlining,
                "Let V8 inline hot functions as in production (by default heapprof turns inlining off so "
                "that allocations are charged to the function that makes them)");
  run->add_flag("--no-gc", args->no_gc,
                "Skip the full GC before the in-use snapshot (garbage not yet collected then counts as in use)");
  run->add_flag("--no-source-maps", args->no_source_maps,
                "Keep the generated names and positions of bundled or compiled workers (by default their source "
                "maps are applied: sourceMappingURL comment, inline map or WORKER.js.map)");
}

}  // namespace heapprof::cli
