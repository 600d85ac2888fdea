#include "heapprof/serve/pool_profile_source.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <utility>

#include "heapprof/core/symbolizer.h"
#include "heapprof/runtime/runtime_source_maps.h"

namespace heapprof {

PoolProfileSource::PoolProfileSource(Controller& controller, WorkerPool& pool, SessionOptions session,
                                     std::optional<SourceMapSearch> source_maps)
    : controller_(controller), pool_(pool), session_(std::move(session)), source_maps_(std::move(source_maps)) {}

PoolProfileSource::~PoolProfileSource() { StopRotation(); }

// The replicas, then the Durable Objects whose isolates live now: a replica's
// number (target=N) stays the same as objects come and go.
std::vector<TargetStatus> PoolProfileSource::Targets() {
  std::vector<TargetStatus> targets = pool_.Stats();
  for (TargetStatus& object : pool_.ObjectStats()) targets.push_back(std::move(object));
  return targets;
}

std::vector<CaptureFile> PoolProfileSource::Captures() { return pool_.Captures(); }

Result<std::string> PoolProfileSource::LeakReportJson(const std::string& target) {
  if (leaks_ == nullptr) return ProfileSource::LeakReportJson(target);
  return leaks_->ReportJson(target);
}

namespace {
// A continuous window's length: until it is cut (a year, in practice never).
constexpr std::chrono::nanoseconds kUntilCut = std::chrono::hours(24 * 365);
}  // namespace

std::future<Result<WindowProfile>> PoolProfileSource::Open(const std::string& target, std::chrono::nanoseconds duration,
                                                           uint64_t* window_id) {
  WindowRequest request{target, duration, session_};
  request.options.isolate_name = target;
  // A replica that restarts mid-window answers with what the window saw.
  request.partial_on_unregister = true;
  return controller_.Profile(request, window_id);
}

namespace {
// How long a window waits for a restarting replica to be registered again.
constexpr auto kRestartWait = std::chrono::seconds(10);
}  // namespace

Result<Profile> PoolProfileSource::Window(const std::string& target, std::chrono::nanoseconds duration,
                                          CancelSignal& cancel) {
  // While a replica restarts (its isolate recreated after the heap limit or a
  // runaway request) it is not a target for a moment: wait for it rather
  // than answer "no such target" for a replica the pool has.
  const auto give_up = std::chrono::steady_clock::now() + kRestartWait;
  for (;;) {
    uint64_t window_id = 0;
    std::future<Result<WindowProfile>> window = Open(target, duration, &window_id);
    // Cancelling ends this window only: others on the target (they overlap) go on.
    uint64_t id = cancel.OnCancel([this, window_id] { controller_.EndWindow(window_id); });
    Result<WindowProfile> seen = window.get();
    cancel.Remove(id);
    bool restarting = !seen.ok() && seen.status().code() == ErrorCode::kNotFound && pool_.Find(target) >= 0 &&
                      !cancel.cancelled() && std::chrono::steady_clock::now() < give_up;
    if (!restarting) return Finish(std::move(seen));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void PoolProfileSource::StartContinuous(std::chrono::nanoseconds every, WindowSink sink) {
  for (const TargetStatus& t : pool_.Stats()) {
    auto c = std::make_unique<Continuous>();
    c->window = Open(t.name, kUntilCut, &c->id);
    continuous_[t.name] = std::move(c);
  }
  if (every > std::chrono::nanoseconds::zero()) {
    every_ = every;
    sink_ = std::move(sink);
    rotation_ = std::thread([this] { Rotate(); });
  }
}

Result<Profile> PoolProfileSource::Cut(const std::string& target, Continuous& c) {
  // The next window opens first: windows are ranges of one sampler's ids and
  // may overlap, so what is allocated while this one closes is in the next.
  uint64_t closing = c.id;
  std::future<Result<WindowProfile>> closed = std::move(c.window);
  c.window = Open(target, kUntilCut, &c.id);
  controller_.EndWindow(closing);
  Result<WindowProfile> window = closed.get();
  if (!window.ok()) {
    return Error(window.status().code(), window.status().message() + " (a new continuous window is open now)");
  }
  return Finish(std::move(window));
}

void PoolProfileSource::Rotate() {
  auto next = std::chrono::steady_clock::now() + every_;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(rotation_mu_);
      if (rotation_cv_.wait_until(lock, next, [this] { return rotation_stop_; })) return;
    }
    next += every_;
    for (auto& [name, c] : continuous_) {
      Result<Profile> window = Error(ErrorCode::kInternal, "not cut");
      {
        std::lock_guard<std::mutex> lock(c->mu);
        window = Cut(name, *c);
        if (window.ok()) c->last = window.value();
      }
      if (sink_) sink_(name, std::move(window));
    }
    // A cut that took longer than the period (a slow GC) does not make the
    // next windows shorter to catch up.
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + every_;
  }
}

void PoolProfileSource::StopRotation() {
  {
    std::lock_guard<std::mutex> lock(rotation_mu_);
    rotation_stop_ = true;
  }
  rotation_cv_.notify_all();
  if (rotation_.joinable()) rotation_.join();
}

Result<Profile> PoolProfileSource::SinceContinuousStart(const std::string& target) {
  auto it = continuous_.find(target);
  if (it == continuous_.end()) {
    return Error(ErrorCode::kFailedPrecondition, "no continuous window is open on " + target);
  }
  Continuous& c = *it->second;
  std::lock_guard<std::mutex> lock(c.mu);
  if (every_ > std::chrono::nanoseconds::zero()) {  // rotating: the last closed window, whole
    if (c.last) return *c.last;
    return Error(ErrorCode::kUnavailable,
                 fmt::format("the first continuous window on {} has not closed yet: it closes within {} ms", target,
                             std::chrono::duration_cast<std::chrono::milliseconds>(every_).count()));
  }
  return Cut(target, c);
}

std::vector<std::pair<std::string, Result<Profile>>> PoolProfileSource::EndContinuous() {
  std::vector<std::pair<std::string, Result<Profile>>> out;
  for (auto& [name, c] : continuous_) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (!c->window.valid()) continue;
    controller_.EndWindows(name);
    out.emplace_back(name, Finish(c->window.get()));
  }
  return out;
}

Result<Profile> PoolProfileSource::Finish(Result<WindowProfile> window) {
  HEAPPROF_RETURN_IF_ERROR(window);
  Profile profile = std::move(window->profile);
  if (source_maps_) {
    FileSourceMapProvider files(*source_maps_);
    RuntimeSourceMapProvider maps(&files);
    (void)Symbolize(profile, maps);
  }
  return profile;
}

}  // namespace heapprof
