// A `heapprof run` replica's options (its isolate's, its near-limit capture)
// and its windows: one until the run ends, --continuous's rotating files and
// pushes, --leaks' session (run_replica.h).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>

#include "heapprof/core/file_io.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/symbolizer.h"
#include "heapprof/runtime/runtime_source_maps.h"
#include "heapprof/runtime/runtime_support.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/run_replica.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

// A window the replica closes itself (by request count, time or run end).
constexpr std::chrono::nanoseconds kUntilEnded = std::chrono::hours(24 * 366);

}  // namespace

void MaybeSymbolize(const Plan& plan, Profile& profile, Run& run) {
  if (!plan.symbolize) return;
  FileSourceMapProvider files(plan.source_maps);
  RuntimeSourceMapProvider maps(&files);
  for (const std::string& w : Symbolize(profile, maps).warnings) run.Print("heapprof run: warning: " + w);
}

WorkerReplicaOptions ReplicaThread::MakeOptions() {
  WorkerReplicaOptions replica;
  replica.name = r_.name;
  replica.worker = plan_.worker;
  replica.controller = &controller_;
  if ((r_.profiled && !object_window_) || !plan_.on_heap_limit.empty()) {
    // Near the heap limit the open window's in-use profile is kept; with
    // --on-heap-limit also between windows (a background window).
    replica.near_limit_sink = [&r = r_](Result<WindowProfile> p) {
      std::lock_guard<std::mutex> lock(r.mu);
      r.out.near_limit_requests = r.served.load();
      r.out.near_limit.emplace(std::move(p));
    };
    // A leak session's sampler runs all along: a capture near the limit sees every live sample.
    replica.near_limit_between_windows = !plan_.on_heap_limit.empty() || (plan_.leaks && r_.profiled);
  }
  // A window from the start sees the module's top level.
  replica.before_load = [this](WorkerReplica&) {
    if (r_.profiled && !object_window_ && plan_.from_start) {
      OpenWindow();
      opened_ = Clock::now();
    }
    return out_.failure;
  };
  replica.between_requests = [this](WorkerReplica&) {
    if (leaks_active_) LeakSnapshot(/*due_only=*/true);
  };
  WorkerOptions& options = replica.worker_options;
  options.name = plan_.replicas.size() == 1 ? plan_.display_name : r_.name;
  options.heap_limit_bytes = plan_.heap_limit_bytes;
  options.request_timeout = plan_.request_timeout;
  options.bindings = plan_.config.bindings;
  options.durable_objects = DurableObjectNamespaces(plan_.config);
  options.compatibility_flags = FlagsHonoured(plan_.config, EmbeddedRuntimeSupport());
  options.fetch_handler = plan_.fetch_handler;
  options.durable_object_idle_limit = plan_.object_idle_limit;
  options.console = [&run = run_, &out = out_, label = options.name](std::string_view level, std::string_view text) {
    if (level == "error") out.requests.AddConsoleError();
    bool plain = level == "log" || level == "info" || level == "debug";
    run.Print(fmt::format("[{}] {}{}", label, plain ? "" : std::string(level) + ": ", text));
  };
  session_ = plan_.session;
  session_.isolate_name = options.name;
  replica.near_limit_options = session_;
  // --profile NS:NAME: the window is that object's isolate, from its creation
  // (its first event) to the end of the run; the worker's isolate has none.
  if (!object_window_) return replica;
  object_.Install(
      options,
      [this] {
        out_.window_opened = true;
        out_.window_opened_at = r_.served.load();
        opened_ = Clock::now();
        run_.Print(fmt::format("heapprof run: the window on Durable Object {} opened at its creation (request #{})",
                               plan_.object_target, r_.served.load() + 1));
      },
      [this](Status failed) { out_.failure = std::move(failed); },
      [this](Result<WindowProfile> captured) {
        run_.Print(
            fmt::format("heapprof run: Durable Object {} neared its heap limit at request #{}; its in-use "
                        "profile is captured and its window closed",
                        plan_.object_target, r_.served.load() + 1));
        std::lock_guard<std::mutex> lock(r_.mu);
        r_.out.near_limit_requests = r_.served.load();
        r_.out.near_limit.emplace(std::move(captured));
      });
  return replica;
}

// --leaks: live snapshots into the session (heapprof/v8/leak_session.h), on
// this thread between requests: the isolate serves nothing meanwhile, which
// is the snapshot's cost to the worker.
void ReplicaThread::LeakSnapshot(bool due_only) {
  Result<bool> taken =
      due_only ? out_.leaks->Tick(r_.served.load()) : Result<bool>(out_.leaks->SnapshotNow(r_.served.load()).ok());
  if (taken.ok() && out_.leaks->active()) return;
  leaks_active_ = false;
  run_.Print(fmt::format("heapprof run: {}: the leak session's snapshot failed: {}", r_.name,
                         out_.leaks->stats().failure.message()));
}

void ReplicaThread::OpenLeakSession() {
  LeakSessionOptions leak_options;
  leak_options.cadence = std::chrono::nanoseconds(plan_.cadence_ns);
  leak_options.full_gc = plan_.session.gc_before_snapshot;
  leak_options.sampling = session_;
  // The worker runs out of memory when V8's old generation is full, before heap used reaches the whole limit.
  leak_options.heap_limit_bytes = plan_.heap_limit_bytes;
  out_.leaks = std::make_unique<heapprof::LeakSession>(controller_, r_.name, runtime().isolate().get(), leak_options);
  leaks_active_ = true;
  LeakSnapshot(/*due_only=*/false);
  if (!leaks_active_) return;
  run_.Print(fmt::format("heapprof run: leak session on {}: a live snapshot every {:g} s{}{}", session_.isolate_name,
                         std::chrono::duration<double>(out_.leaks->stats().cadence).count(),
                         plan_.cadence_ns > 0 ? "" : " (100 x the first one's cost, at least 1 s)",
                         plan_.session.gc_before_snapshot ? ", each after a full GC" : ""));
}

// --continuous: each window symbolized, pushed (queued for the pusher's
// thread: never waits for the store) and/or written to its file.
void ReplicaThread::OpenContinuous() {
  fs::path dir = fs::path(plan_.output).parent_path();
  if (dir.empty()) dir = ".";
  Result<uint64_t> id = controller_.StartContinuous(
      {r_.name, std::chrono::nanoseconds(plan_.continuous_ns), session_},
      [&r = r_, &run = run_, dir](Result<WindowProfile> p) {
        Status written = p.status();
        if (p.ok()) MaybeSymbolize(run.plan, p->profile, run);
        if (run.plan.push) {
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
    out_.failure = id.status();
    out_.window_opened = false;
    return;
  }
  r_.continuous_id = id.value();
}

void ReplicaThread::OpenWindow() {
  out_.window_opened = true;
  out_.window_opened_at = r_.served.load();
  if (plan_.leaks) {
    OpenLeakSession();
    r_.window_open = true;
    return;
  }
  if (continuous_) {
    OpenContinuous();
    if (!out_.window_opened) return;
  } else {
    r_.window = controller_.Profile({r_.name, kUntilEnded, session_}).share();
  }
  controller_.Pump(runtime().isolate());  // the window opens here, before the next request
  r_.window_open = true;
}

bool ReplicaThread::WindowEnded() const {
  return r_.window.valid() && r_.window.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

}  // namespace heapprof::cli
