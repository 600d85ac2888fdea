// `heapprof run`'s engine: replicas on threads, windows through the controller.
#include "tools/heapprof/run_engine.h"
#include "heapprof/runtime/runtime_support.h"
#include "tools/heapprof/outputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "heapprof/core/file_io.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/core/symbolizer.h"
#include "heapprof/core/text.h"
#include "heapprof/core/units.h"
#include "heapprof/runtime/runtime_source_maps.h"
#include "heapprof/workload/traffic.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/progress.h"
#include "tools/heapprof/run_object.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A window the replica closes itself (by request count, time or run end).
constexpr std::chrono::nanoseconds kUntilEnded = std::chrono::hours(24 * 366);

int64_t Since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

// What every replica thread shares with the main thread.
struct Run {
  explicit Run(const Plan& p) : plan(p), progress(StderrIsTerminal()) {}
  const Plan& plan;
  Controller controller;
  std::mutex progress_mu;
  ProgressLine progress;
  Clock::time_point start = Clock::now();
  std::mutex mu;  // guards `done` counts below; `cv` announces changes
  std::condition_variable cv;
  int profiled_done = 0;
  int all_done = 0;
  std::atomic<bool> over{false};  // every profiled window ended: unprofiled replicas stop too

  void Print(const std::string& line) {
    std::lock_guard<std::mutex> lock(progress_mu);
    progress.PrintAbove(line);
  }
};

struct Replica {
  std::string name;
  bool profiled = false;
  std::thread thread;

  std::mutex mu;                     // guards runtime and the sinks' fields of `out`
  WorkerRuntime* runtime = nullptr;  // while it may run JS, for Terminate on a signal
  std::shared_future<Result<WindowProfile>> window;
  uint64_t continuous_id = 0;
  std::atomic<uint64_t> served{0};
  std::atomic<bool> window_open{false};
  std::atomic<size_t> heap_used{0}, heap_limit{0};
  ReplicaOutcome out;  // the thread's own fields; complete after join
};

// Applies source maps (the worker's and the runtime libraries') when the plan
// says so, printing what could not be applied.
void MaybeSymbolize(const Plan& plan, Profile& profile, Run& run) {
  if (!plan.symbolize) return;
  FileSourceMapProvider files(plan.source_maps);
  RuntimeSourceMapProvider maps(&files);
  for (const std::string& w : Symbolize(profile, maps).warnings) run.Print("heapprof run: warning: " + w);
}

// How a failed Dispatch counts, or nullopt when the run cannot go on.
std::optional<RequestFailure> ClassifyFailure(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kDeadlineExceeded:
      return RequestFailure::kTimedOut;
    case ErrorCode::kScriptError:
      return status.message().find(" promise was rejected: ") != std::string::npos ? RequestFailure::kRejected
                                                                                   : RequestFailure::kThrown;
    default:
      return std::nullopt;
  }
}

// One replica's whole life on its thread.
void Serve(Run& run, Replica& r) {
  const Plan& plan = run.plan;
  Controller& controller = run.controller;
  ReplicaOutcome& out = r.out;
  out.name = r.name;
  const Clock::time_point start = Clock::now();
  bool counted_done = false;
  auto mark_done = [&] {
    if (counted_done) return;
    counted_done = true;
    {
      std::lock_guard<std::mutex> lock(run.mu);
      ++run.all_done;
      if (r.profiled) ++run.profiled_done;
    }
    run.cv.notify_all();
  };

  WorkerOptions options;
  options.name = plan.replicas.size() == 1 ? plan.display_name : r.name;
  options.heap_limit_bytes = plan.heap_limit_bytes;
  options.request_timeout = plan.request_timeout;
  options.bindings = plan.config.bindings;
  options.durable_objects = DurableObjectNamespaces(plan.config);
  options.compatibility_flags = FlagsHonoured(plan.config, EmbeddedRuntimeSupport());
  options.fetch_handler = plan.fetch_handler;
  options.durable_object_idle_limit = plan.object_idle_limit;
  options.console = [&run, &out, label = options.name](std::string_view level, std::string_view text) {
    if (level == "error") out.requests.AddConsoleError();
    bool plain = level == "log" || level == "info" || level == "debug";
    run.Print(fmt::format("[{}] {}{}", label, plain ? "" : std::string(level) + ": ", text));
  };
  // --profile NS:NAME: the window is that object's isolate, from its creation
  // (its first event) to the end of the run; the worker's isolate has none.
  SessionOptions session = plan.session;
  session.isolate_name = options.name;
  const bool object_window = r.profiled && !plan.object_target.empty();
  ObjectWindow object(plan.object_target, plan.session);
  Clock::time_point opened{};
  if (object_window) {
    object.Install(
        options,
        [&] {
          out.window_opened = true;
          out.window_opened_at = r.served.load();
          opened = Clock::now();
          run.Print(fmt::format("heapprof run: the window on Durable Object {} opened at its creation (request #{})",
                                plan.object_target, r.served.load() + 1));
        },
        [&](Status failed) { out.failure = std::move(failed); },
        [&](Result<WindowProfile> captured) {
          run.Print(
              fmt::format("heapprof run: Durable Object {} neared its heap limit at request #{}; its in-use "
                          "profile is captured and its window closed",
                          plan.object_target, r.served.load() + 1));
          std::lock_guard<std::mutex> lock(r.mu);
          r.out.near_limit_requests = r.served.load();
          r.out.near_limit.emplace(std::move(captured));
        });
  }
  Result<WorkerRuntime> created = WorkerRuntime::Create(options);
  if (!created.ok()) {
    out.failure = created.status();
    return mark_done();
  }
  WorkerRuntime& runtime = created.value();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.runtime = &runtime;
  }
  // A signal may have arrived before the runtime was published.
  if (InterruptWatcher::received() != 0) runtime.Terminate();

  Status registered = controller.Register(r.name, runtime.isolate());
  if (registered.ok() && ((r.profiled && !object_window) || !plan.on_heap_limit.empty())) {
    // Near the heap limit the open window's in-use profile is kept; with
    // --on-heap-limit also between windows (a background window).
    registered = controller.EnableNearHeapLimitCapture(
        r.name,
        [&r](Result<WindowProfile> p) {
          std::lock_guard<std::mutex> lock(r.mu);
          r.out.near_limit_requests = r.served.load();
          r.out.near_limit.emplace(std::move(p));
        },
        // A leak session's sampler runs all along: a capture near the limit sees every live sample.
        session, /*between_windows=*/!plan.on_heap_limit.empty() || (plan.leaks && r.profiled));
  }
  if (!registered.ok()) out.failure = registered;

  const bool continuous = plan.continuous_ns > 0;
  // --leaks: live snapshots into the session (heapprof/v8/leak_session.h),
  // on this thread between requests: the isolate serves nothing meanwhile,
  // which is the snapshot's cost to the worker.
  bool leaks_active = false;
  auto leak_snapshot = [&](bool due_only) {
    Result<bool> taken =
        due_only ? out.leaks->Tick(r.served.load()) : Result<bool>(out.leaks->SnapshotNow(r.served.load()).ok());
    if (taken.ok() && out.leaks->active()) return;
    leaks_active = false;
    run.Print(fmt::format("heapprof run: {}: the leak session's snapshot failed: {}", r.name,
                          out.leaks->stats().failure.message()));
  };
  auto open_leak_session = [&] {
    LeakSessionOptions leak_options;
    leak_options.cadence = std::chrono::nanoseconds(plan.cadence_ns);
    leak_options.full_gc = plan.session.gc_before_snapshot;
    leak_options.sampling = session;
    // The worker runs out of memory when V8's old generation is full, before heap used reaches the whole limit.
    leak_options.heap_limit_bytes = plan.heap_limit_bytes;
    out.leaks = std::make_unique<heapprof::LeakSession>(controller, r.name, runtime.isolate().get(), leak_options);
    leaks_active = true;
    leak_snapshot(/*due_only=*/false);
    if (!leaks_active) return;
    run.Print(fmt::format("heapprof run: leak session on {}: a live snapshot every {:g} s{}{}", options.name,
                          std::chrono::duration<double>(out.leaks->stats().cadence).count(),
                          plan.cadence_ns > 0 ? "" : " (100 x the first one's cost, at least 1 s)",
                          plan.session.gc_before_snapshot ? ", each after a full GC" : ""));
  };
  auto open_window = [&] {
    out.window_opened = true;
    out.window_opened_at = r.served.load();
    if (plan.leaks) {
      open_leak_session();
      r.window_open = true;
      return;
    }
    if (continuous) {
      fs::path dir = fs::path(plan.output).parent_path();
      if (dir.empty()) dir = ".";
      Result<uint64_t> id = controller.StartContinuous(
          {r.name, std::chrono::nanoseconds(plan.continuous_ns), session}, [&r, &run, dir](Result<WindowProfile> p) {
            Status written = p.status();
            if (p.ok()) MaybeSymbolize(run.plan, p->profile, run);
            if (run.plan.push) {  // queued for the pusher's thread: never waits for the store
              if (p.ok()) {
                run.plan.push->Window(r.name, p->profile);
              } else {
                run.plan.push->Failed(r.name, p.status());
              }
            }
            if (p.ok() && run.plan.continuous_files) {
              std::string path = WindowFilePath(dir.string(), r.name, p->profile.time_nanos);
              // A full disk does not lose the window: a fallback folder takes it, said as it happens.
              Delivery d = WriteOrFallBack(path, FallbackDirs(run.plan.fallback_dir),
                                           [&](const std::string& to) { return WritePprofFile(to, p->profile); });
              if (!d.at_named_path()) {
                written = Error(ErrorCode::kIo,
                                d.failures.front() + (d.written.empty() ? "; no fallback folder took it either"
                                                                        : "; written to " + d.written + " instead"));
              }
            }
            if (!written.ok()) run.Print(fmt::format("heapprof run: {}: {}", r.name, written.message()));
            std::lock_guard<std::mutex> lock(r.mu);
            if (written.ok()) {
              ++r.out.continuous_written;
            } else {
              ++r.out.continuous_failed;
            }
            if (p.ok()) r.out.last_continuous.emplace(std::move(p).value());
          });
      if (!id.ok()) {
        out.failure = id.status();
        out.window_opened = false;
        return;
      }
      r.continuous_id = id.value();
    } else {
      r.window = controller.Profile({r.name, kUntilEnded, session}).share();
    }
    controller.Pump(runtime.isolate());  // the window opens here, before the next request
    r.window_open = true;
  };
  auto window_ended = [&] {
    return r.window.valid() && r.window.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };

  if (out.failure.ok() && r.profiled && !object_window && plan.from_start) {
    open_window();
    opened = Clock::now();
  }
  Status loaded = out.failure.ok() ? runtime.LoadFile(plan.worker) : out.failure;
  out.kind = runtime.kind();
  if (!loaded.ok()) {
    if (InterruptWatcher::received() == 0) out.failure = loaded;
  } else {
    for (;;) {
      uint64_t served = r.served.load();
      if (r.profiled && !object_window && !out.window_opened && served >= plan.warmup_requests &&
          Since(start) >= plan.warmup_ns) {
        open_window();
        opened = Clock::now();
        if (!out.failure.ok()) break;
      }
      if (served >= plan.max_requests || Since(start) >= plan.max_duration_ns || run.over.load() ||
          InterruptWatcher::received() != 0) {
        break;
      }
      if (out.window_opened && !continuous && (window_ended() || object.ended() || Since(opened) >= plan.window_ns)) {
        break;
      }
      const WorkerRequest request =
          plan.traffic.empty() ? SyntheticRequest(served) : plan.traffic[served % plan.traffic.size()];
      Result<WorkerResponse> response = runtime.Dispatch(request);
      if (!plan.responses_out.empty() && (response.ok() || InterruptWatcher::received() == 0)) {
        out.responses += ResponseRecord(served, request, response);
        out.responses += '\n';
      }
      if (!response.ok()) {
        if (InterruptWatcher::received() != 0) break;  // terminated mid-request: not counted
        std::optional<RequestFailure> kind = ClassifyFailure(response.status());
        if (!kind) {  // the heap limit, or the runtime itself failed: the run cannot go on
          out.failure = response.status();
          break;
        }
        // A failed request counts; the run goes on (the report judges the share).
        const std::string& message = response.status().message();
        const std::string prefix = request.method + " " + request.url + ": ";
        out.requests.AddFailure(*kind, message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message);
      } else {
        out.requests.AddResponse(response->status);
      }
      r.served.store(served + 1);
      controller.Pump(runtime.isolate());
      if (leaks_active) leak_snapshot(/*due_only=*/true);
      if ((served & 63) == 0) {
        HeapUsage heap = runtime.heap_usage();
        r.heap_used = heap.used_bytes;
        r.heap_limit = heap.limit_bytes;
      }
    }
  }
  out.heap_limit = out.failure.code() == ErrorCode::kResourceExhausted;
  // The session's last snapshot, unless the isolate is past its limit (the
  // near-limit capture holds what was alive then).
  if (leaks_active && !runtime.heap_limit_reached()) leak_snapshot(/*due_only=*/false);
  out.served = r.served.load();
  out.serving_ns = Since(start);
  out.heap = runtime.heap_usage();
  if (out.window_opened) out.window_requests = out.served - out.window_opened_at;

  // Close the window now and answer the controller until it has ended.
  if (out.window_opened) {
    controller.EndWindows(r.name);
    while (controller.Profiling(r.name)) {
      controller.Pump(runtime.isolate());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (object_window) {
    Result<WindowProfile> window = object.Close();
    if (window.status().code() == ErrorCode::kResourceExhausted) {
      // Closed near the object's heap limit: the near-limit capture holds its profile.
    } else if (window.ok() || out.window_opened) {
      out.window.emplace(std::move(window));
    } else if (out.failure.ok() && InterruptWatcher::received() == 0) {
      out.failure = window.status();
    }
  }
  // After the window: reading them allocates in the isolate.
  if (Result<std::vector<DurableObjectReport>> objects = runtime.DurableObjects(); objects.ok()) {
    out.durable_objects = std::move(objects.value());
  }
  r.window_open = false;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.runtime = nullptr;
  }
  (void)controller.Unregister(r.name);
  mark_done();
}

}  // namespace

Result<EngineOutcome> RunEngine(const Plan& plan) {
  Run run(plan);
  std::vector<std::unique_ptr<Replica>> replicas;
  for (const std::string& name : plan.replicas) {
    auto r = std::make_unique<Replica>();
    r->name = name;
    r->profiled = std::find(plan.profiled.begin(), plan.profiled.end(), name) != plan.profiled.end();
    replicas.push_back(std::move(r));
  }

  // Ctrl-C / SIGTERM: the windows end at once, the JS running now is
  // terminated, and what the windows hold is written. (A second signal ends
  // heapprof at once.)
  InterruptWatcher interrupts([&] {
    run.controller.EndWindows();
    for (auto& r : replicas) {
      std::lock_guard<std::mutex> lock(r->mu);
      if (r->runtime) r->runtime->Terminate();
    }
    run.cv.notify_all();
  });
  for (auto& r : replicas) {
    Replica* raw = r.get();
    r->thread = std::thread([&run, raw] { Serve(run, *raw); });
  }

  // Wait until every profiled replica is done (then the others stop too),
  // drawing the progress line on a terminal.
  const int profiled = static_cast<int>(plan.profiled.size());
  const int total = static_cast<int>(replicas.size());
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(run.mu);
      run.cv.wait_for(lock, std::chrono::milliseconds(100),
                      [&] { return run.profiled_done == profiled || run.all_done == total; });
      if (run.profiled_done == profiled || run.all_done == total) break;
    }
    if (!run.progress.enabled()) continue;
    uint64_t served = 0;
    int open = 0;
    for (auto& r : replicas) {
      served += r->served.load();
      open += r->window_open.load() ? 1 : 0;
    }
    std::string state =
        open > 0 ? (total == 1 ? "window open" : fmt::format("{} windows open", open)) : std::string("warming up");
    std::lock_guard<std::mutex> lock(run.progress_mu);
    run.progress.Show(fmt::format("heapprof: {} requests  {:.1f}s  {}  heap {} / {}", served, Since(run.start) / 1e9,
                                  state, FormatValue(static_cast<int64_t>(replicas[0]->heap_used.load()), "bytes"),
                                  FormatValue(static_cast<int64_t>(replicas[0]->heap_limit.load()), "bytes")));
  }
  run.over = true;
  EngineOutcome outcome;
  for (auto& r : replicas) {
    r->thread.join();
    if (r->continuous_id != 0) run.controller.StopContinuous(r->continuous_id);  // its last window is delivered
    if (r->window.valid()) r->out.window.emplace(r->window.get());
  }
  interrupts.StopWatching();
  {
    std::lock_guard<std::mutex> lock(run.progress_mu);
    run.progress.Clear();
  }
  outcome.elapsed_ns = Since(run.start);
  outcome.signal = InterruptWatcher::received();
  run.controller.Shutdown();
  for (auto& r : replicas) {
    std::lock_guard<std::mutex> lock(r->mu);
    outcome.replicas.push_back(std::move(r->out));
  }
  return outcome;
}

}  // namespace heapprof::cli
