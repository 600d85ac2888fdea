// A leak session on one isolate registered with a Controller: live snapshots
// of its always-on sampler (Controller::LiveSnapshot) at a cadence, taken on
// the isolate's own thread between tasks, into a LeakTracker whose report
// (verdicts per site, rates, projection to the limit) any thread may read
// while the session goes on. `heapprof run --leaks` and `heapprof serve
// --leaks` drive their replicas with it; an embedder calls Tick() from its
// loop where it would call Controller::Pump(). The statistics:
// docs/statistics.md ("Growth").
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "heapprof/core/leaks.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/status.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/session.h"

namespace v8 {
class Isolate;
}  // namespace v8

namespace heapprof {

struct LeakSessionOptions {
  // Between snapshots; 0: 100 x the first snapshot's cost, between 1 s and
  // 60 s (LeakAutoCadence: the snapshots then take at most ~1 % of the time).
  std::chrono::nanoseconds cadence{0};
  bool full_gc = true;  // a full GC before each snapshot (without it `died` comes late)
  // The sampler's interval and depth if this session starts it (a running
  // sampler keeps its own), and the isolate's name in the snapshots.
  SessionOptions sampling;
  // The isolate's configured heap limit (IsolateOptions::heap_limit_bytes,
  // WorkerOptions::heap_limit_bytes): the projection then follows V8's old
  // generation's pages against their share of it, where the isolate runs out
  // of memory. 0: heap used against the snapshots' own limit.
  uint64_t heap_limit_bytes = 0;
  LeakOptions leak;  // the verdicts' levels
};

// What a session measured besides its tracker.
struct LeakSessionStats {
  size_t snapshots = 0;
  std::chrono::nanoseconds cadence{0};  // in force (0 before the first snapshot)
  int64_t snapshot_nanos_max = 0;       // the slowest snapshot: the isolate ran nothing meanwhile
  int64_t snapshot_nanos_total = 0;
  int64_t session_nanos = 0;  // from the first snapshot's start to the last one's
  int looks = 0;              // reports taken so far (each is a look)
  Status failure;             // a snapshot failed: the session ended there
};

class LeakSession {
 public:
  // `target` is the isolate's name in `controller`; `isolate` is that
  // isolate. Nothing happens until the first Tick or SnapshotNow.
  LeakSession(Controller& controller, std::string target, v8::Isolate* isolate, LeakSessionOptions options);
  LeakSession(const LeakSession&) = delete;
  LeakSession& operator=(const LeakSession&) = delete;

  // On the isolate's thread, between tasks (no JavaScript running): takes a
  // snapshot when one is due (the first call, then every cadence) and
  // returns whether it took one. `requests` = requests served so far, when
  // the caller counts them (rates per 1000 requests, the projection in
  // requests). A failed snapshot ends the session (stats().failure) and
  // returns the error; later calls do nothing.
  Result<bool> Tick(std::optional<uint64_t> requests = std::nullopt);
  // The same, now, whether due or not (e.g. the session's last snapshot).
  Status SnapshotNow(std::optional<uint64_t> requests = std::nullopt);
  bool active() const;  // no snapshot has failed

  // Any thread, while the session goes on: the report over every snapshot
  // so far. Each call is the session's next look (docs/statistics.md, "Many
  // sites, many looks"): its verdicts spend that look's share of alpha, so a
  // live page read again and again stays at alpha over all its looks.
  // kFailedPrecondition before two snapshots.
  Result<LeakReport> Report() const;
  // A report of this session as JSON (LeakReportJson, with the live series
  // of the top sites for a chart) and the session's own figures under
  // "session" (snapshots, cadence, the snapshots' pause, looks).
  std::string ReportJson(const LeakReport& report) const;
  // The in-use profile of the last snapshot, each sample labelled with its
  // age (BuildLeakProfile); kFailedPrecondition before the first snapshot.
  Result<Profile> LastProfile() const;
  // The last snapshot itself (empty before the first).
  RawSnapshot LastSnapshot() const;
  LeakSessionStats stats() const;
  const std::string& target() const { return target_; }

  // Runs `f(tracker)` under the session's lock (e.g. a report with other options).
  template <typename F>
  auto WithTracker(F&& f) const {
    std::lock_guard<std::mutex> lock(mu_);
    return f(static_cast<const LeakTracker&>(tracker_));
  }

 private:
  Controller& controller_;
  std::string target_;
  v8::Isolate* isolate_;
  LeakSessionOptions options_;
  std::chrono::steady_clock::time_point first_{}, last_{};

  mutable std::mutex mu_;  // guards everything below
  LeakTracker tracker_;
  RawSnapshot last_snapshot_;
  mutable LeakSessionStats stats_;
};

}  // namespace heapprof
