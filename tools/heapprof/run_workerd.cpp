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
#include "heapprof/remote/workerd_load.h"
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
#include "tools/heapprof/run_workerd_parts.h"
#include "tools/heapprof/workerd_services.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using remote::Millis;

constexpr Millis kStartTimeout{20000};

}  // namespace

int RunInWorkerd(const RunArgs& args, const WorkerConfig& config) {
  WorkerdRunPlan plan;
  if (int code = PlanWorkerdRun(args, plan); code != kExitOk) return code;
  const uint64_t warmup_requests = plan.warmup_requests, window_requests = plan.window_requests;
  const int64_t warmup_ns = plan.warmup_ns, window_ns = plan.window_ns;
  const std::chrono::milliseconds request_timeout = plan.request_timeout;
  const uint64_t interval = plan.interval, kicks = plan.kicks;
  const bool gc_kick = plan.gc_kick;

  InterruptWatcher interrupts([] {});
  remote::WorkerdSpec spec;
  spec.binary = remote::FindWorkerd(args.workerd);
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
  const std::string startup_output = workerd.Output();
  // workerd serves on when a namespace's class is not exported; every call to it would fail.
  if (std::vector<std::string> missing = remote::UnexportedDurableObjectClasses(startup_output); !missing.empty()) {
    return Fail("run", fmt::format("workerd: no worker exports the Durable Object class {} that its namespace names "
                                   "(export it from the worker whose migrations or bindings declare it, or give "
                                   "--ignore-config-key durable_objects)",
                                   fmt::join(missing, ", ")));
  }
  const std::vector<std::string> unknown = remote::UnknownV8Flags(startup_output, spec.v8_flags);
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
  remote::WorkerdLoad load({.server = workerd.http(),
                            .traffic = std::move(plan.traffic),
                            .timeout = request_timeout.count() == 0 ? kNoTimeout : Millis(request_timeout.count()),
                            .record = !args.responses_out.empty(),
                            .exceptions = exceptions,
                            .interrupted = [] { return InterruptWatcher::received() != 0; }});
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
  options.types = plan.types;
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

  WorkerdRunResult result{.profile = &profiled->profile,
                          .load = &load,
                          .target_name = options.target_name,
                          .runtime = options.runtime,
                          .outbound = spec.outbound,
                          .module_name = workerd.module_name(),
                          .elapsed_ns = elapsed_ns,
                          .warmed = warmed,
                          .inlining = inlining};
  return ReportWorkerdRun(args, config, plan, result);
}

}  // namespace heapprof::cli
