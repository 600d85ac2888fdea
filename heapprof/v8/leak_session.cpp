// LeakSession: snapshots through the controller, answered by this thread's
// own Pump (the isolate runs nothing meanwhile: that wait is the snapshot's
// cost to it), the tracker behind a lock for readers on other threads.
#include "heapprof/v8/leak_session.h"

#include <fmt/format.h>

#include <future>
#include <nlohmann/json.hpp>
#include <utility>

#include "heapprof/v8/heap_limit.h"

namespace heapprof {
namespace {

using Clock = std::chrono::steady_clock;

int64_t Nanos(Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

}  // namespace

LeakSession::LeakSession(Controller& controller, std::string target, v8::Isolate* isolate, LeakSessionOptions options)
    : controller_(controller),
      target_(std::move(target)),
      isolate_(isolate),
      options_(std::move(options)),
      tracker_(options_.leak) {
  if (options_.heap_limit_bytes > 0) {
    // The isolate runs out of memory when V8's old generation is full, before heap used reaches the whole limit.
    tracker_.SetHeapLimit(OldGenerationLimitBytes(options_.heap_limit_bytes),
                          fmt::format("old-generation pages against their share of the {} heap limit, where the "
                                      "isolate runs out of memory",
                                      LeakBytesText(static_cast<double>(options_.heap_limit_bytes))));
  }
}

bool LeakSession::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_.failure.ok();
}

Result<bool> LeakSession::Tick(std::optional<uint64_t> requests) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stats_.failure.ok()) return false;
    if (stats_.snapshots > 0 && Clock::now() - last_ < stats_.cadence) return false;
  }
  HEAPPROF_RETURN_IF_ERROR(SnapshotNow(requests));
  return true;
}

Status LeakSession::SnapshotNow(std::optional<uint64_t> requests) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stats_.failure.ok()) return stats_.failure;
  }
  const Clock::time_point begun = Clock::now();
  if (first_ == Clock::time_point{}) first_ = begun;
  std::future<Result<RawSnapshot>> answer = controller_.LiveSnapshot(target_, options_.full_gc, options_.sampling);
  // Answered by this Pump (posted to this isolate's thread); the loop only guards against a slow controller.
  while (answer.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    controller_.Pump(isolate_);
    if (answer.wait_for(std::chrono::milliseconds(1)) == std::future_status::ready) break;
  }
  Result<RawSnapshot> snap = answer.get();
  // The projection follows the old generation's pages (what reaches V8's limit), not its objects.
  const uint64_t old_pages =
      snap.ok() && options_.heap_limit_bytes > 0 ? OldGenerationNow(isolate_).committed_bytes : 0;

  std::lock_guard<std::mutex> lock(mu_);
  Status added = !snap.ok()                      ? snap.status()
                 : options_.heap_limit_bytes > 0 ? tracker_.Add(snap.value(), requests, old_pages)
                                                 : tracker_.Add(snap.value(), requests);
  const Clock::time_point done = Clock::now();
  const int64_t cost = Nanos(done - begun);
  stats_.snapshot_nanos_max = std::max(stats_.snapshot_nanos_max, cost);
  stats_.snapshot_nanos_total += cost;
  last_ = done;
  if (!added.ok()) {
    stats_.failure = added;
    return added;
  }
  last_snapshot_ = std::move(snap).value();
  if (last_snapshot_.info.inlining_allowed < 0)
    last_snapshot_.info.inlining_allowed = options_.sampling.inlining_allowed;
  stats_.snapshots = tracker_.snapshots();
  stats_.session_nanos = Nanos(begun - first_);
  if (stats_.cadence == std::chrono::nanoseconds::zero()) {
    stats_.cadence = options_.cadence > std::chrono::nanoseconds::zero()
                         ? options_.cadence
                         : LeakAutoCadence(std::chrono::nanoseconds(cost));
  }
  return Status::Ok();
}

Result<LeakReport> LeakSession::Report() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (tracker_.snapshots() < 2) {
    return Error(ErrorCode::kFailedPrecondition,
                 fmt::format("the leak session on {} has {} snapshot{} so far; a growth report needs two{}", target_,
                             tracker_.snapshots(), tracker_.snapshots() == 1 ? "" : "s",
                             stats_.cadence > std::chrono::nanoseconds::zero()
                                 ? fmt::format(" (one is taken every {:g} s)",
                                               std::chrono::duration<double>(stats_.cadence).count())
                                 : std::string()));
  }
  LeakReportOptions options;
  options.look = ++stats_.looks;
  return tracker_.Report(options);
}

std::string LeakSession::ReportJson(const LeakReport& report) const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json root = nlohmann::json::parse(LeakReportJson(report, &tracker_));
  root["target"] = target_;
  const double session_seconds = static_cast<double>(stats_.session_nanos) / 1e9;
  root["session"] = {{"snapshots", stats_.snapshots},
                     {"cadence_seconds", std::chrono::duration<double>(stats_.cadence).count()},
                     {"full_gc", options_.full_gc},
                     {"snapshot_ms_max", static_cast<double>(stats_.snapshot_nanos_max) / 1e6},
                     {"snapshot_ms_total", static_cast<double>(stats_.snapshot_nanos_total) / 1e6},
                     {"seconds", session_seconds},
                     {"paused_share", stats_.session_nanos > 0 ? static_cast<double>(stats_.snapshot_nanos_total) /
                                                                     static_cast<double>(stats_.session_nanos)
                                                               : 0.0},
                     {"looks", stats_.looks}};
  if (!stats_.failure.ok()) root["session"]["failure"] = stats_.failure.message();
  return root.dump();
}

Result<Profile> LeakSession::LastProfile() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (tracker_.snapshots() == 0) {
    return Error(ErrorCode::kFailedPrecondition, "the leak session on " + target_ + " has no snapshot yet");
  }
  return BuildLeakProfile(last_snapshot_, tracker_);
}

RawSnapshot LeakSession::LastSnapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_snapshot_;
}

LeakSessionStats LeakSession::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace heapprof
