// A leak session on a remote V8 through the DevTools protocol (workerd,
// `node --inspect`): one HeapProfiler sampling session without the
// include-collected flags (so the target's V8 keeps a sample while its object
// lives), polled with HeapProfiler.getSamplingProfile at a cadence, each poll
// after HeapProfiler.collectGarbage; every poll is a live snapshot whose
// samples carry V8's `ordinal` as their sample id (docs/statistics.md, "Growth").
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "heapprof/core/leaks.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/status.h"
#include "heapprof/remote/devtools_client.h"

namespace heapprof::remote {

struct RemoteLeakOptions {
  uint64_t interval_bytes = kDefaultIntervalBytes;
  std::chrono::nanoseconds duration{std::chrono::seconds(60)};  // nanoseconds::max(): until `stop`
  // Between snapshots; 0: chosen from the first snapshot's cost (AutoCadence).
  std::chrono::nanoseconds cadence{0};
  bool gc = true;              // HeapProfiler.collectGarbage before each snapshot
  std::function<bool()> stop;  // when it turns true, the session takes its last snapshot now
  // After each snapshot is in the tracker, with the cadence in force.
  std::function<void(size_t snapshots, std::chrono::nanoseconds cadence)> on_snapshot;
  Millis command_timeout{30000};
  std::string target_name;
};

// What the session measured besides the tracker's series.
struct RemoteLeakSession {
  RawSnapshot last;                     // the last snapshot (live samples, info filled)
  bool interrupted = false;             // `stop` ended it early
  int64_t snapshot_nanos_max = 0;       // the slowest snapshot (GC + getSamplingProfile)
  int64_t snapshot_nanos_total = 0;     // all of them
  std::chrono::nanoseconds cadence{0};  // the cadence used
};

// The cadence at which snapshots cost the target at most 1 % of its time:
// 100 times one snapshot's cost, between 1 s and 60 s.
std::chrono::nanoseconds AutoCadence(std::chrono::nanoseconds snapshot_cost);

// Runs the session into `tracker`: a snapshot at the start, one every
// `cadence`, one at the end. kUnavailable when the target's sampler is held
// by someone else or the target goes away; the sampler is stopped again on
// every path where the connection still works.
Result<RemoteLeakSession> TrackRemoteLeaks(DevToolsSession& session, const RemoteLeakOptions& options,
                                           LeakTracker& tracker);

}  // namespace heapprof::remote
