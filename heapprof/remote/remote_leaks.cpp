// Polls a remote sampling heap profiler into a LeakTracker. The target's
// heap limit comes from v8.getHeapStatistics() where the target can say it
// (Node's command-line API has `require`); workerd's cannot, and then the
// projection says the limit is not known.
#include "heapprof/remote/remote_leaks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "heapprof/core/heapprofile_tree.h"
#include "heapprof/core/stack_table.h"

namespace heapprof::remote {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// The target's heap limits, 0 where it cannot say: V8's heap_size_limit
// (which includes the young generation's reserve) and, when Node was started
// with --max-old-space-size (on its command line or in NODE_OPTIONS), the old
// generation's limit it set: where the target runs out of memory.
struct HeapLimits {
  uint64_t total = 0;
  uint64_t old_generation = 0;
};

HeapLimits HeapLimit(DevToolsSession& session, Millis timeout) {
  Result<Json> evaluated = session.Call(
      "Runtime.evaluate",
      Json{{"expression",
            "(() => { try { const total = require('v8').getHeapStatistics().heap_size_limit; let old = 0; "
            "const args = [...process.execArgv, ...String(process.env.NODE_OPTIONS || '').split(/\\s+/)]; "
            "for (const a of args) { const m = /^--max[-_]old[-_]space[-_]size=([0-9.]+)$/.exec(a); "
            "if (m) old = Number(m[1]) * 1048576; } return [total, old]; } catch (e) { return [0, 0]; } })()"},
           {"includeCommandLineAPI", true},
           {"returnByValue", true},
           {"silent", true}},
      timeout);
  HeapLimits out;
  if (!evaluated.ok()) return out;
  auto result = evaluated->find("result");
  if (result == evaluated->end() || !result->is_object()) return out;
  auto value = result->find("value");
  if (value == result->end() || !value->is_array() || value->size() != 2) return out;
  auto bytes = [](const Json& x) -> uint64_t {
    return x.is_number() && x.get<double>() > 0 ? static_cast<uint64_t>(x.get<double>()) : 0;
  };
  out.total = bytes((*value)[0]);
  out.old_generation = bytes((*value)[1]);
  return out;
}

}  // namespace

std::chrono::nanoseconds AutoCadence(std::chrono::nanoseconds snapshot_cost) { return LeakAutoCadence(snapshot_cost); }

Result<RemoteLeakSession> TrackRemoteLeaks(DevToolsSession& session, const RemoteLeakOptions& options,
                                           LeakTracker& tracker) {
  if (options.interval_bytes == 0) return Error(ErrorCode::kInvalidArgument, "the sampling interval must be > 0");
  if (options.cadence < std::chrono::nanoseconds(0)) {
    return Error(ErrorCode::kInvalidArgument, "the snapshot cadence must be > 0");
  }
  const Millis timeout = options.command_timeout;
  if (Result<Json> enabled = session.Call("HeapProfiler.enable", Json::object(), timeout); !enabled.ok()) {
    return enabled.status();
  }
  Result<Json> running = session.Call("HeapProfiler.getSamplingProfile", Json::object(), timeout);
  if (running.ok()) {
    return Error(ErrorCode::kUnavailable,
                 "the target's sampling heap profiler is already running (DevTools' Memory panel \"Allocation "
                 "sampling\" or another profiler holds it); stop that recording and try again");
  }
  if (running.status().code() != ErrorCode::kFailedPrecondition) return running.status();
  const HeapLimits limits = HeapLimit(session, timeout);
  const uint64_t limit = limits.total;
  if (limits.old_generation > 0) {
    tracker.SetHeapLimit(limits.old_generation,
                         fmt::format("--max-old-space-size: the old generation's, where the target runs out of memory; "
                                     "V8's heap_size_limit of {} adds the young generation's reserve",
                                     LeakBytesText(static_cast<double>(limits.total))));
  }

  // Without the include flags: V8 drops a sample when its object dies.
  Result<Json> started = session.Call("HeapProfiler.startSampling",
                                      Json{{"samplingInterval", options.interval_bytes},
                                           {"includeObjectsCollectedByMajorGC", false},
                                           {"includeObjectsCollectedByMinorGC", false}},
                                      timeout);
  if (!started.ok()) return started.status();
  struct StopSampler {
    DevToolsSession& session;
    bool armed = true;
    ~StopSampler() {
      if (armed) (void)session.Call("HeapProfiler.stopSampling", Json::object(), std::chrono::seconds(2));
    }
  } stopper{session};

  RemoteLeakSession out;
  auto stop = [&] { return options.stop && options.stop(); };
  auto snapshot = [&]() -> Status {
    const Clock::time_point begun = Clock::now();
    if (options.gc) {
      if (Result<Json> gc = session.Call("HeapProfiler.collectGarbage", Json::object(), timeout); !gc.ok()) {
        return gc.status();
      }
    }
    const int64_t taken = UnixNanosNow();
    Result<Json> profile = session.Call("HeapProfiler.getSamplingProfile", Json::object(), timeout);
    if (!profile.ok()) return profile.status();
    auto tree = profile->find("profile");
    if (tree == profile->end() || !tree->is_object()) {
      return Error(ErrorCode::kDataLoss, "protocol error: HeapProfiler.getSamplingProfile returned no profile");
    }
    internal::StackTable table;
    SampledWindow kind;
    kind.live = true;
    kind.allocated = false;
    kind.interval_bytes = options.interval_bytes;  // the protocol's sizes are scaled: back to object sizes
    Result<RawSnapshot> snap = SamplingProfileSnapshot(*tree, kind, table);
    if (!snap.ok()) return Error(snap.status().code(), "the target's sampling profile: " + snap.status().message());
    snap->frames = table.TakeFrames();
    snap->stacks = table.TakeStacks();
    WindowInfo& info = snap->info;
    info.start_unix_nanos = taken;
    info.interval_bytes = options.interval_bytes;
    info.max_stack_depth = 128;
    info.isolate_name = options.target_name;
    info.strategy = "devtools-protocol";
    info.gc_before_snapshot = options.gc;
    info.heap_limit_bytes = limit;
    if (Result<Json> heap = session.Call("Runtime.getHeapUsage", Json::object(), timeout); heap.ok()) {
      info.heap_used_bytes = heap->value("usedSize", uint64_t{0});
    }
    const int64_t cost = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - begun).count();
    out.snapshot_nanos_max = std::max(out.snapshot_nanos_max, cost);
    out.snapshot_nanos_total += cost;
    if (Status s = tracker.Add(*snap); !s.ok()) return s;
    out.last = std::move(snap.value());
    if (out.cadence == std::chrono::nanoseconds(0)) {
      out.cadence =
          options.cadence > std::chrono::nanoseconds(0) ? options.cadence : AutoCadence(std::chrono::nanoseconds(cost));
    }
    if (options.on_snapshot) options.on_snapshot(tracker.snapshots(), out.cadence);
    return Status::Ok();
  };

  if (Status s = snapshot(); !s.ok()) return s;
  const Clock::time_point start = Clock::now();
  const bool forever = options.duration == std::chrono::nanoseconds::max();
  while (true) {
    const std::chrono::nanoseconds elapsed = Clock::now() - start;
    if (!forever && elapsed >= options.duration) break;
    std::chrono::nanoseconds wait = out.cadence;
    if (!forever) wait = std::min(wait, options.duration - elapsed);
    if (Status s = session.Wait(wait, stop); !s.ok()) return s;
    if (stop()) {
      out.interrupted = true;
      break;
    }
    if (Status s = snapshot(); !s.ok()) return s;
  }
  // The last snapshot closes the session (unless the loop just took it at the end).
  if (out.interrupted || tracker.snapshots() < 2) {
    if (Status s = snapshot(); !s.ok()) return s;
  }
  stopper.armed = false;
  if (Result<Json> stopped = session.Call("HeapProfiler.stopSampling", Json::object(), timeout); !stopped.ok()) {
    return stopped.status();
  }
  return out;
}

}  // namespace heapprof::remote
