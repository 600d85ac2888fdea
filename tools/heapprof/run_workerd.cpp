// `heapprof run WORKER --runtime workerd`. The flags that only the embedded
// host can honour are refused up front; the rest map onto workerd's config,
// the load thread (the user's traffic, the failure policy, --responses-out,
// --requests, with the embedded runtime's parsing and records) and the
// DevTools windows of heapprof attach.
#include "tools/heapprof/run_workerd.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

#include "heapprof/core/estimate.h"
#include "heapprof/core/file_io.h"
#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/units.h"
#include "heapprof/remote/http_client.h"
#include "heapprof/remote/remote_profiler.h"
#include "heapprof/remote/workerd.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/attribution.h"
#include "heapprof/workload/outcomes.h"
#include "heapprof/workload/traffic.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/remote_report.h"
#include "tools/heapprof/run_plan.h"
#include "tools/heapprof/workerd_load.h"
#include "tools/heapprof/workerd_services.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using remote::Millis;

constexpr int64_t kDefaultWindowNs = 2'000'000'000;
constexpr uint64_t kDefaultWarmupRequests = 200;
// At most this many of --requests N are kept for the in-use window's GC (workerd_load.h).
constexpr uint64_t kMaxKicks = 10;
constexpr Millis kStartTimeout{20000};
// --request-timeout 0 (no limit): the client still needs a deadline for its socket.
constexpr Millis kNoTimeout{24 * 3600 * 1000};

// The flags only the embedded host can honour, refused with the reason.
Status RefuseEmbeddedOnly(const RunArgs& args) {
  auto refuse = [](const std::string& flag, const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("{} does not work with --runtime workerd: {}", flag, why));
  };
  if (args.replicas != 1) return refuse("--replicas", "workerd runs one isolate per worker here");
  if (!args.profile_target.empty()) return refuse("--profile", "there are no replicas to pick from");
  if (args.from_start) {
    return refuse("--from-start", "the DevTools protocol can only attach once workerd has loaded the worker");
  }
  if (std::string e = PushFlagsWithoutPush(args.push); !e.empty()) return Error(ErrorCode::kInvalidArgument, e);
  if (!args.push.url.empty()) {
    return refuse("--push",
                  "it pushes the windows of --continuous; start workerd with its inspector "
                  "(--inspector-addr) and run heapprof attach HOST:PORT --continuous D --push URL");
  }
  if (args.continuous_ns) {
    return refuse("--continuous",
                  "start workerd with its inspector (--inspector-addr) and run heapprof attach "
                  "HOST:PORT --continuous D");
  }
  if (!args.on_heap_limit.empty()) {
    return refuse("--on-heap-limit", "the near-heap-limit hook needs the embedded host's V8 API");
  }
  if (args.heap_limit_bytes && *args.heap_limit_bytes != kDefaultHeapLimitBytes) {
    return refuse("--heap-limit", "workerd sets its own limit");
  }
  if (args.depth != 64) return refuse("--depth", "V8's inspector always records 128 frames");
  return Status::Ok();
}

// workerd: --workerd, $HEAPPROF_WORKERD, the project's .deps/workerd, or PATH.
std::string FindWorkerd(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("HEAPPROF_WORKERD"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path dir = exe.parent_path(); !ec && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    fs::path candidate = dir / ".deps/workerd/bin/workerd";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string_view rest(path);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / "workerd";
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  return ".deps/workerd/bin/workerd";
}

// "by status: 200 x3051, 404 x3", as the embedded runtime's report writes
// it, then what else the requests came to, each count saying what it counts.
std::string Histogram(const std::map<int, uint64_t>& statuses) {
  std::string out;
  for (const auto& [status, count] : statuses) {
    out += fmt::format("{}{} x{}", out.empty() ? "" : ", ", status, count);
  }
  return "by status: " + (out.empty() ? std::string("none") : out);
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

int RunInWorkerd(const RunArgs& args, const WorkerConfig& config) {
  if (Status s = RefuseEmbeddedOnly(args); !s.ok()) return UsageError("run", s.message());
  Result<remote::RemoteSampleTypes> types = remote::ParseSampleTypes(args.sample_types);
  if (!types.ok()) return UsageError("run", types.status().message());
  if (Result<std::vector<int>> indexes = TableIndexes(args.sample_index); !indexes.ok()) {
    return UsageError("run", indexes.status().message());
  }
  // auto: as the embedded host chooses it for the platform's 128 MB limit, which workerd's isolates share.
  const uint64_t interval = args.interval_bytes.value_or(static_cast<uint64_t>(AutoInterval(kDefaultHeapLimitBytes)));
  uint64_t warmup_requests = args.warmup ? args.warmup->requests : kDefaultWarmupRequests;
  const int64_t warmup_ns = args.warmup ? args.warmup->ns : 0;
  const int windows = types.value() == remote::RemoteSampleTypes::kBoth ? 2 : 1;
  // --requests N, warm-up included, as in the embedded runtime: the windows
  // share what the warm-up leaves, each ending once it has seen its share
  // (or its time is up, with --window or --duration too).
  uint64_t window_requests = 0;
  // Requests kept back for the in-use window's close: workerd runs the GC
  // before the snapshot only once its isolate has a request to serve.
  uint64_t kicks = 0;
  const bool gc_kick = types.value() != remote::RemoteSampleTypes::kAlloc && !args.no_gc;
  if (args.requests > 0) {
    const uint64_t n = static_cast<uint64_t>(args.requests);
    if (warmup_ns > 0) {
      return UsageError("run",
                        "with --runtime workerd, --requests counts the warm-up in requests: give --warmup "
                        "as a number of requests");
    }
    if (warmup_requests >= n) {
      if (args.warmup) {
        return UsageError("run", fmt::format("the warm-up ({} requests) leaves nothing to profile within --requests {}",
                                             warmup_requests, n));
      }
      warmup_requests = n / 10;  // a short run: keep most of it in the windows
    }
    if (gc_kick) kicks = std::clamp<uint64_t>((n - warmup_requests) / 20, 1, kMaxKicks);
    window_requests = (n - warmup_requests - std::min(kicks, n - warmup_requests)) / windows;
    if (window_requests == 0) {
      return UsageError(
          "run", fmt::format("--requests {} leaves no request for each of the {} windows after the "
                             "warm-up of {}{}",
                             n, windows, warmup_requests,
                             kicks > 0 ? fmt::format(" and the {} kept for the in-use window's GC", kicks) : ""));
    }
  }
  int64_t window_ns = kDefaultWindowNs;
  if (args.window_ns) {
    window_ns = *args.window_ns;
  } else if (args.duration_ns) {
    window_ns = (*args.duration_ns - warmup_ns) / windows;
  } else if (window_requests > 0) {
    window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(kNoTimeout).count();  // the count ends it
  }
  if (window_ns <= 0)
    return UsageError("run", "the window must be longer than 0 (check --window, --duration, --warmup)");
  Result<std::vector<WorkerRequest>> traffic = TrafficFromFlags(args);
  if (!traffic.ok()) return UsageError("run", traffic.status().message());
  const double max_failures = args.max_failures.value_or(0.5);
  const std::chrono::milliseconds request_timeout = args.request_timeout.value_or(kDefaultRequestTimeout);
  const std::string output = args.output.empty() ? fs::path(args.worker).stem().string() + ".pb.gz" : args.output;
  if (!fs::is_regular_file(args.worker)) {
    return Fail("run",
                fs::exists(args.worker) ? args.worker + " is not a file" : "no such worker file: " + args.worker);
  }
  std::vector<std::string> inputs = {args.worker};
  if (!args.requests_file.empty()) inputs.push_back(args.requests_file);
  if (Status s = CheckOutputs(inputs, {output, args.flamegraph, args.responses_out}); !s.ok()) return Fail("run", s);
  if (Status s = CheckFallbackDir(args.fallback_dir); !s.ok()) return Fail("run", s);
  if (!args.requests_file.empty()) {
    Result<std::vector<WorkerRequest>> read = ReadRequestsFile(args.requests_file);
    if (!read.ok()) return Fail("run", read.status());
    traffic = std::move(read);
  }

  InterruptWatcher interrupts([] {});
  remote::WorkerdSpec spec;
  spec.binary = FindWorkerd(args.workerd);
  spec.worker = remote::WorkerdWorkerFor(config, WorkerdServiceName(config), args.worker);
  Result<std::vector<remote::WorkerdWorker>> services = WorkerdServices(config, args.services);
  if (!services.ok()) return Fail("run", services.status());
  spec.services = std::move(services).value();
  if (!args.fetch_handler.empty()) {
    if (Status s = CheckFetchHandler(args.fetch_handler); !s.ok()) return Fail("run", s);
    spec.outbound = args.fetch_handler;  // every worker's globalOutbound
  }
  if (!args.allow_inlining) spec.v8_flags = NoInliningFlags();
  spec.v8_flags.insert(spec.v8_flags.end(), args.v8_flags.begin(), args.v8_flags.end());
  Result<remote::WorkerdProcess> started = remote::WorkerdProcess::Start(spec, kStartTimeout);
  if (!started.ok()) return Fail("run", started.status());
  remote::WorkerdProcess& workerd = started.value();
  // V8 names a flag it does not know on stderr; workerd passes that through.
  const std::string startup_output = workerd.Output();
  // workerd serves on when a namespace's class is not exported; every call to it would fail.
  if (std::vector<std::string> missing = remote::UnexportedDurableObjectClasses(startup_output); !missing.empty()) {
    return Fail("run", fmt::format("workerd: no worker exports the Durable Object class {} that its namespace names "
                                   "(export it from the worker whose migrations or bindings declare it, or give "
                                   "--ignore-config-key durable_objects)",
                                   fmt::join(missing, ", ")));
  }
  std::vector<std::string> unknown;
  for (const std::string& flag : spec.v8_flags) {
    if (startup_output.find("flag " + flag) != std::string::npos ||
        startup_output.find("flag \"" + flag) != std::string::npos) {
      unknown.push_back(flag);
    }
  }
  for (const std::string& flag : args.v8_flags) {
    if (std::find(unknown.begin(), unknown.end(), flag) != unknown.end()) {
      return Fail("run", "workerd's V8 does not know the flag " + flag);
    }
  }
  int inlining = args.allow_inlining                                                                 ? 1
                 : std::find(unknown.begin(), unknown.end(), "--no-turbo-inlining") == unknown.end() ? 0
                                                                                                     : 1;

  // The worker's uncaught exceptions, from workerd's log, with the stacks'
  // module names made the scripts' paths (for their source maps).
  uint64_t log_offset = 0;
  std::vector<std::pair<std::string, std::string>> modules = {
      {fs::path(spec.worker.script).filename().string(), fs::absolute(spec.worker.script).lexically_normal().string()}};
  for (const remote::WorkerdWorker& w : spec.services) {
    modules.emplace_back(fs::path(w.script).filename().string(), fs::absolute(w.script).lexically_normal().string());
  }
  auto exceptions = [&workerd, &log_offset, modules] {
    std::vector<remote::WorkerdException> found = remote::ParseWorkerdExceptions(workerd.OutputSince(&log_offset));
    for (remote::WorkerdException& e : found) {
      for (const auto& [module, path] : modules) e.description = remote::WithModulePath(e.description, module, path);
    }
    return found;
  };
  WorkerdLoad load({.server = workerd.http(),
                    .traffic = std::move(traffic).value(),
                    .timeout = request_timeout.count() == 0 ? kNoTimeout : Millis(request_timeout.count()),
                    .record = !args.responses_out.empty(),
                    .exceptions = exceptions});
  (void)workerd.OutputSince(&log_offset);  // startup's lines are not a request's
  if (window_requests > 0) load.Hold();    // after the warm-up, only the windows' shares
  const Clock::time_point start = Clock::now();
  load.Serve(warmup_requests);
  load.Start();
  while (warmup_ns > 0 && Clock::now() - start < std::chrono::nanoseconds(warmup_ns) &&
         InterruptWatcher::received() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const uint64_t warmed = load.answered();
  if (InterruptWatcher::received() != 0) {
    load.Stop();
    Fail("run", fmt::format("interrupted by {} during the warm-up; no profile written",
                            SignalName(InterruptWatcher::received())));
    return InterruptedExitCode(InterruptWatcher::received());
  }

  Result<remote::DevToolsSession> session = [&]() -> Result<remote::DevToolsSession> {
    Result<std::vector<remote::InspectorTarget>> targets = remote::ListTargets(workerd.inspector(), Millis(5000));
    if (!targets.ok()) return targets.status();
    // One target per worker (its service's name): the KV stores, service
    // bindings' workers and the outbound worker are others.
    auto it = std::find_if(targets->begin(), targets->end(),
                           [&](const remote::InspectorTarget& t) { return t.id == spec.worker.service; });
    if (it == targets->end() && targets->size() == 1) it = targets->begin();
    if (it == targets->end() || it->websocket_url.empty()) {
      return Error(ErrorCode::kUnavailable, "workerd's inspector lists no worker " + spec.worker.service);
    }
    return remote::DevToolsSession::Connect(it->websocket_url, Millis(5000));
  }();
  if (!session.ok()) return Fail("run", session.status());

  remote::RemoteWindowOptions options;
  options.interval_bytes = interval;
  options.window = std::chrono::nanoseconds(window_ns);
  options.types = types.value();
  options.gc_before_inuse = !args.no_gc;
  options.stop = [] { return InterruptWatcher::received() != 0; };
  uint64_t window_target = 0;  // the count at which the open window has seen its share
  std::string window_kind;
  if (window_requests > 0) {
    options.window_full = [&] {
      if (load.answered() < window_target) return false;
      if (window_kind == "inuse" && gc_kick) load.Kick(kicks);
      return true;
    };
  }
  options.on_window = [&](std::string_view kind) {
    window_kind = std::string(kind);
    if (window_requests > 0) window_target = load.Allow(window_requests);
    const std::string length =
        window_requests == 0 ? fmt::format("{:.2f} s", static_cast<double>(window_ns) / 1e9)
        : args.window_ns || args.duration_ns
            ? fmt::format("{} requests or {:.2f} s", window_requests, static_cast<double>(window_ns) / 1e9)
            : fmt::format("{} requests", window_requests);
    fmt::print(stderr, "heapprof run: {} window open for {} in workerd\n", kind == "inuse" ? "in-use" : "allocation",
               length);
  };
  options.target_name = fs::path(args.worker).filename().string();
  options.runtime = "workerd";
  if (Result<std::string> version = remote::InspectorVersion(workerd.inspector(), Millis(2000)); version.ok()) {
    options.runtime = version.value();  // "workerd"
  }
  options.inlining_allowed = inlining;
  options.notes.push_back(fmt::format(
      "v8_flags: {} (workerd config v8Flags{})",
      spec.v8_flags.empty() ? std::string("none") : fmt::format("{}", fmt::join(spec.v8_flags, " ")),
      unknown.empty() ? ", all accepted" : "; unknown to its V8: " + fmt::format("{}", fmt::join(unknown, " "))));
  options.notes.push_back("compatibility_date: " + spec.worker.compatibility_date);
  if (!spec.worker.compatibility_flags.empty()) {
    options.notes.push_back(fmt::format("compatibility_flags: {}", fmt::join(spec.worker.compatibility_flags, " ")));
  }
  Result<remote::RemoteProfile> profiled = remote::ProfileRemote(session.value(), options);
  load.Stop();
  load.Unkick();
  if (profiled.ok() && args.requests > 0 && InterruptWatcher::received() == 0) {
    // What the windows' shares and the GC's requests left of N, after the
    // windows: the run serves exactly N.
    const uint64_t n = static_cast<uint64_t>(args.requests);
    load.Serve(n > load.sent() ? n - load.sent() : 0);
  }
  const int64_t elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  const bool workerd_alive = workerd.Running();
  const std::string workerd_output = workerd.Output();
  workerd.Stop();
  if (!profiled.ok()) {
    return Fail("run", profiled.status().message() +
                           (workerd_alive ? "" : "\nworkerd exited; its output:\n" + workerd_output) +
                           "\n(no profile written)");
  }

  const RequestOutcomes outcomes = load.outcomes();
  std::string statuses = Histogram(outcomes.statuses());
  if (outcomes.timed_out() > 0) {
    statuses += "; " + Plural(outcomes.timed_out(), "request timed out", "requests timed out");
  }
  if (load.no_response() > 0) {
    statuses += "; " + Plural(load.no_response(), "request got no response", "requests got no response");
  }
  const uint64_t threw = outcomes.thrown() + outcomes.rejected() - load.no_response();
  if (threw > 0)
    statuses += "; " + Plural(threw, "request threw or rejected (workerd answered 500)",
                              "requests threw or rejected (workerd answered 500)");
  const uint64_t total = outcomes.requests();
  Profile& profile = profiled->profile;
  profile.comments.push_back(profile.AddString(fmt::format("responses {}", statuses)));
  // workerd names the module by its file name; point the frames at the file, for the source maps.
  const std::string absolute = fs::absolute(args.worker).lexically_normal().string();
  for (std::string& s : profile.strings) {
    if (s == workerd.module_name()) s = absolute;
  }

  RemoteReport report;
  report.command = "run";
  report.output = output;
  report.fallback_dir = args.fallback_dir;
  report.flamegraph = args.flamegraph;
  report.sample_index = args.sample_index;
  report.types = types.value();
  report.gc = !args.no_gc;
  report.symbolize = !args.no_source_maps;
  const fs::path worker_dir = fs::path(args.worker).parent_path();
  report.roots = {worker_dir.empty() ? std::string(".") : worker_dir.string()};
  report.roots.insert(report.roots.end(), args.source_map_paths.begin(), args.source_map_paths.end());
  report.interval_bytes = interval;
  report.top = static_cast<size_t>(std::max(args.top, 0));
  report.user_code = args.user_code;
  report.headline = fmt::format("Profiled {} in {}: {} requests in {:.2f} s", options.target_name, options.runtime,
                                total, static_cast<double>(elapsed_ns) / 1e9);
  report.details.push_back(fmt::format("warm-up  {} requests before the first window", warmed));
  if (load.extra_kicks() > 0) {
    report.details.push_back(fmt::format("{} beyond --requests {}: workerd's inspector waited that long for its GC",
                                         Plural(load.extra_kicks(), "request", "requests"), args.requests));
  }
  report.details.push_back(
      fmt::format("responses {}{}", statuses,
                  load.empty_bodies() > 0
                      ? "; " + Plural(load.empty_bodies(), "response had an empty body", "responses had an empty body")
                      : std::string()));
  report.details.push_back(fmt::format("inlining {} (workerd config v8Flags)", inlining == 0 ? "off" : "allowed"));
  if (!spec.outbound.empty()) {
    report.details.push_back(
        fmt::format("subrequests answered by {} (--fetch-handler: every worker's globalOutbound)", spec.outbound));
  }
  report.more_samples_hint = "Profile a longer window (--window)";
  int code = ReportRemoteProfile(profile, report);
  if (std::string described = DescribeConfig(config); !described.empty()) fmt::print("\n{}\n", described);
  if (total > 0) {
    // The worker's own exceptions with their stacks, mapped to its sources.
    SourceMapSearch search;
    search.roots = report.roots;
    FileSourceMapProvider maps(search);
    fmt::print("\n{}", FormatOutcomes(outcomes, report.symbolize ? &maps : nullptr));
  }
  if (outcomes.failed() > 0) {
    fmt::print(stderr, "heapprof run: {} of {} requests failed ({}); first errors:\n", outcomes.failed(), total,
               statuses);
    for (const WorkerdLoad::Failure& f : load.first_failures()) fmt::print(stderr, "  #{} {}\n", f.index + 1, f.text);
  }
  if (!args.responses_out.empty()) {
    std::string written;
    if (!DeliverReported(
            "run", "responses file", args.responses_out, FallbackDirs(args.fallback_dir),
            [&](const std::string& p) { return WriteFileAtomic(p, load.responses()); }, &written)) {
      return std::max(code, int{kExitFailure});
    }
  }
  if (code != kExitOk) return code;
  if (total == 0) return Fail("run", "no request was answered: the profile is of an idle worker");
  if (FailureVerdict verdict = JudgeFailures(outcomes, max_failures); verdict.too_many) {
    return Fail("run", verdict.message + "; the profile is written all the same");
  }
  if (int signal = InterruptWatcher::received(); signal != 0) return InterruptedExitCode(signal);
  return kExitOk;
}

}  // namespace heapprof::cli
