// One or two DevTools sampling windows -> one RawSnapshot -> BuildProfile, so
// a remote profile is scaled, merged and laid out exactly like an embedded one.
#include "heapprof/remote/remote_profiler.h"
#include "heapprof/core/stack_table.h"

#include <fmt/format.h>

#include "heapprof/core/heapprofile_tree.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/core/raw_snapshot.h"

namespace heapprof::remote {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string SecondsText(std::chrono::nanoseconds ns) {
  return fmt::format("{:.2f} s", static_cast<double>(ns.count()) / 1e9);
}

// One sampling window on the target, from start to the profile it held.
class Window {
 public:
  Window(DevToolsSession& session, const RemoteWindowOptions& options) : session_(session), options_(options) {}

  // Starts the sampler (with the include-collected flags for an alloc window).
  Status Start(bool include_collected) {
    Result<Json> started = session_.Call("HeapProfiler.startSampling",
                                         Json{{"samplingInterval", options_.interval_bytes},
                                              {"includeObjectsCollectedByMajorGC", include_collected},
                                              {"includeObjectsCollectedByMinorGC", include_collected}},
                                         options_.command_timeout);
    if (!started.ok()) return started.status();
    running_ = true;
    return Status::Ok();
  }

  // Stops the sampler and returns its profile ({head, samples}).
  Result<Json> Stop(bool gc_first) {
    if (gc_first) {
      Result<Json> gc = session_.Call("HeapProfiler.collectGarbage", Json::object(), options_.command_timeout);
      if (!gc.ok()) return gc.status();
    }
    Result<Json> stopped = session_.Call("HeapProfiler.stopSampling", Json::object(), options_.command_timeout);
    running_ = false;
    if (!stopped.ok()) return stopped.status();
    auto profile = stopped->find("profile");
    if (profile == stopped->end() || !profile->is_object()) {
      return Error(ErrorCode::kDataLoss, "protocol error: HeapProfiler.stopSampling returned no profile");
    }
    return std::move(*profile);
  }

  // A window that failed half-way leaves the target's sampler stopped.
  ~Window() {
    if (running_) (void)session_.Call("HeapProfiler.stopSampling", Json::object(), std::chrono::seconds(2));
  }

 private:
  DevToolsSession& session_;
  const RemoteWindowOptions& options_;
  bool running_ = false;
};

}  // namespace

std::string_view SampleTypesName(RemoteSampleTypes types) {
  switch (types) {
    case RemoteSampleTypes::kBoth:
      return "both";
    case RemoteSampleTypes::kAlloc:
      return "alloc";
    case RemoteSampleTypes::kInuse:
      return "inuse";
  }
  return "both";
}

Result<RemoteSampleTypes> ParseSampleTypes(std::string_view name) {
  for (RemoteSampleTypes t : {RemoteSampleTypes::kBoth, RemoteSampleTypes::kAlloc, RemoteSampleTypes::kInuse}) {
    if (name == SampleTypesName(t)) return t;
  }
  return Error(ErrorCode::kInvalidArgument, fmt::format("unknown sample types \"{}\"; use inuse, alloc or both", name));
}

Status CheckSamplerFree(DevToolsSession& session, Millis timeout) {
  if (Result<Json> enabled = session.Call("HeapProfiler.enable", Json::object(), timeout); !enabled.ok()) {
    return enabled.status();
  }
  // V8's inspector starts a second sampler over a running one without a word
  // and would hand us (and then stop) someone else's window: ask first.
  Result<Json> running = session.Call("HeapProfiler.getSamplingProfile", Json::object(), timeout);
  if (running.ok()) {
    return Error(ErrorCode::kUnavailable,
                 "the target's sampling heap profiler is already running (DevTools' Memory panel \"Allocation "
                 "sampling\" or another profiler holds it); stop that recording and try again");
  }
  if (running.status().code() != ErrorCode::kFailedPrecondition) return running.status();  // not a "not started" reply
  return Status::Ok();
}

Result<RemoteProfile> ProfileRemote(DevToolsSession& session, const RemoteWindowOptions& options) {
  if (options.interval_bytes == 0) return Error(ErrorCode::kInvalidArgument, "the sampling interval must be > 0");
  if (Status s = CheckSamplerFree(session, options.command_timeout); !s.ok()) return s;

  auto stop = [&] { return options.stop && options.stop(); };
  const bool both = options.types == RemoteSampleTypes::kBoth;
  const bool want_alloc = options.types != RemoteSampleTypes::kInuse;
  const bool want_inuse = options.types != RemoteSampleTypes::kAlloc;

  RemoteProfile out;
  internal::StackTable table;
  RawSnapshot snapshot;
  const int64_t start_unix = UnixNanosNow();
  const Clock::time_point start = Clock::now();
  std::chrono::nanoseconds alloc_length{0}, inuse_length{0};
  uint64_t alloc_samples = 0, inuse_samples = 0;

  auto run_window = [&](bool alloc, std::chrono::nanoseconds length, std::chrono::nanoseconds* measured,
                        uint64_t* samples) -> Status {
    Window window(session, options);
    if (Status s = window.Start(alloc); !s.ok()) return s;
    if (options.on_window) options.on_window(alloc ? "alloc" : "inuse");
    const Clock::time_point opened = Clock::now();
    auto over = [&] { return stop() || (options.window_full && options.window_full()); };
    if (Status s = session.Wait(length, over); !s.ok()) return s;
    *measured = Clock::now() - opened;
    out.interrupted = out.interrupted || stop();
    Result<Json> tree = window.Stop(!alloc && options.gc_before_inuse);
    if (!tree.ok()) return tree.status();
    SampledWindow kind;
    kind.live = !alloc;
    kind.allocated = alloc;
    kind.interval_bytes = options.interval_bytes;  // the protocol's sizes are scaled: back to object sizes
    Result<RawSnapshot> part = SamplingProfileSnapshot(tree.value(), kind, table);
    if (!part.ok()) return Error(part.status().code(), "the target's sampling profile: " + part.status().message());
    *samples = part->samples.size();
    for (RawSample& s : part->samples) snapshot.samples.push_back(s);
    for (std::string& note : part->info.notes) snapshot.info.notes.push_back(std::move(note));
    return Status::Ok();
  };

  if (want_alloc) {
    if (Status s = run_window(true, options.window, &alloc_length, &alloc_samples); !s.ok()) return s;
  }
  if (want_inuse) {
    if (both && out.interrupted) {
      out.inuse_window_skipped = true;
    } else {
      // The second window as long as the first really was, so both see the same
      // traffic; a window that ends on a count (window_full) ends on its own count
      // instead: capped at the first one's time, a slower second window (a GC, a
      // loaded machine) saw fewer requests than its share.
      std::chrono::nanoseconds length = both && !options.window_full ? alloc_length : options.window;
      if (Status s = run_window(false, length, &inuse_length, &inuse_samples); !s.ok()) return s;
    }
  }

  WindowInfo& info = snapshot.info;
  info.start_unix_nanos = start_unix;
  info.duration_nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  info.interval_bytes = options.interval_bytes;
  info.max_stack_depth = 128;  // V8's inspector samples 128 frames deep
  info.isolate_name = options.target_name;
  info.strategy = "devtools-protocol";
  info.gc_before_snapshot = options.gc_before_inuse;
  info.inlining_allowed = options.inlining_allowed;
  if (Result<Json> heap = session.Call("Runtime.getHeapUsage", Json::object(), options.command_timeout); heap.ok()) {
    info.heap_used_bytes = heap->value("usedSize", uint64_t{0});
  }
  std::vector<std::string> notes;
  if (!options.runtime.empty()) notes.push_back("runtime: " + options.runtime);
  if (both && !out.inuse_window_skipped) {
    notes.push_back(fmt::format(
        "windows: two back-to-back DevTools sampling windows; alloc_* from the first ({}, "
        "includeObjectsCollectedByMajorGC/MinorGC: every sampled allocation, freed or not), inuse_* from the second "
        "({}, no include flags{}: what it allocated that was still alive at its end)",
        SecondsText(alloc_length), SecondsText(inuse_length), options.gc_before_inuse ? ", full GC first" : ""));
  } else if (want_alloc) {
    notes.push_back(
        fmt::format("windows: one DevTools sampling window ({}, includeObjectsCollectedByMajorGC/MinorGC): "
                    "alloc_* only; inuse_* {}",
                    SecondsText(alloc_length),
                    out.inuse_window_skipped ? "not measured (interrupted before the in-use window)"
                                             : "not measured (--sample-types alloc)"));
  } else {
    notes.push_back(
        fmt::format("windows: one DevTools sampling window ({}, no include flags{}): inuse_* only; "
                    "alloc_* not measured (--sample-types inuse)",
                    SecondsText(inuse_length), options.gc_before_inuse ? ", full GC first" : ""));
  }
  notes.push_back(fmt::format("window_samples: alloc {} inuse {}", alloc_samples, inuse_samples));
  if (out.interrupted) notes.push_back("interrupted: yes (the last window was cut short)");
  for (const std::string& n : options.notes) notes.push_back(n);
  for (std::string& n : info.notes) notes.push_back(std::move(n));
  info.notes = std::move(notes);

  snapshot.frames = table.TakeFrames();
  snapshot.stacks = table.TakeStacks();
  out.profile = BuildProfile(snapshot);
  return out;
}

}  // namespace heapprof::remote
