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
#include "tools/heapprof/serve_args.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

std::string Seconds(std::chrono::nanoseconds d) {
  return fmt::format("{:.1f} s", std::chrono::duration<double>(d).count());
}

}  // namespace

int Serve(const ServeArgs& args) {
  ServePlan plan;
  if (int code = PlanServe(args, plan); code != kExitOk) return code;
  LiveServiceOptions& options = plan.options;
  const std::string& worker = plan.worker;

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
  if (WindowOutputs* outputs = plan.outputs.get()) {
    outputs->Stop(args.shutdown_timeout);  // the last windows pushed, for at most the shutdown timeout
    outputs->PrintSummary();
    outputs_ok = outputs->ok() && outputs_ok;
  }
  return summary.errors.empty() && outputs_ok ? kExitOk : kExitFailure;
}

}  // namespace heapprof::cli
