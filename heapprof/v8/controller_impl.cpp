// The controller's machinery: the pool that builds, encodes and delivers,
// the scheduler that wakes windows when due, and a window run's way from
// opened to delivered (or failed). See controller_impl.h.
#include "heapprof/v8/controller_impl.h"

#include <fmt/format.h>

#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"

namespace heapprof {
namespace controller_detail {

// V8 drops a pending interrupt unrun when its isolate is disposed, so
// RequestInterrupt gets no heap-allocated data (it would leak); OnInterrupt
// finds its targets here.
std::mutex g_interrupt_mu;
std::multimap<v8::Isolate*, std::weak_ptr<Target>> g_interrupt_targets;

uint64_t TargetCuts(Target& t) {
  std::lock_guard<std::mutex> lock(t.mu);
  return t.cut;
}

Result<WindowProfile> Encode(const std::string& target, RawSnapshot raw) {
  WindowProfile out;
  out.target = target;
  out.profile = BuildProfile(raw);
  HEAPPROF_ASSIGN_OR_RETURN(std::string gz, EncodePprofGzip(out.profile));
  out.pprof_gzip = std::move(gz);
  return out;
}

}  // namespace controller_detail

using controller_detail::Clock;
using controller_detail::Encode;
using controller_detail::g_interrupt_mu;
using controller_detail::g_interrupt_targets;
using controller_detail::kPoolThreads;
using controller_detail::Target;
using controller_detail::WindowRun;

Controller::Impl::Impl() {
  scheduler = std::thread([this] { Schedule(); });
  for (int i = 0; i < kPoolThreads; ++i) pool.emplace_back([this] { Work(); });
}

Controller::Impl::~Impl() {
  Shutdown();
  // Steps still queued for targets that stay registered must never run
  // against this destroyed controller.
  for (auto& [name, target] : by_name) {
    std::lock_guard<std::mutex> tl(target->mu);
    target->steps.clear();
    target->alive = false;
  }
  std::lock_guard<std::mutex> lock(g_interrupt_mu);
  for (auto it = g_interrupt_targets.begin(); it != g_interrupt_targets.end();) {
    std::shared_ptr<Target> t = it->second.lock();
    it = !t || by_name.count(t->name) ? g_interrupt_targets.erase(it) : std::next(it);
  }
}

uint64_t Controller::Impl::Cuts() {
  std::lock_guard<std::mutex> lock(mu);
  return cut;
}

// Runs `task` on the pool; after the pool has stopped, on this thread.
void Controller::Impl::Submit(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!threads_done) {
      tasks.push_back(std::move(task));
      cv.notify_all();
      return;
    }
  }
  task();
}

void Controller::Impl::Work() {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    cv.wait(lock, [&] { return !tasks.empty() || threads_done; });
    if (tasks.empty()) return;
    Task task = std::move(tasks.front());
    tasks.pop_front();
    ++busy_workers;
    lock.unlock();
    task();
    lock.lock();
    --busy_workers;
    cv.notify_all();
  }
}

// Under `mu`: whether a sleeping window must end before its time.
bool Controller::Impl::WokenLocked(const WindowRun& run) {
  if (shutdown || cut != run.cuts || run.cut_alone) return true;
  if (run.continuous_id) {
    auto it = continuous_running.find(run.continuous_id);
    if (it == continuous_running.end() || !it->second) return true;
  }
  std::lock_guard<std::mutex> tl(run.target->mu);
  return !run.target->alive || run.target->cut != run.target_cuts;
}

// The scheduler: hands each sleeping window to the pool when it is due or
// woken. On shutdown it wakes them all, then the pool drains its queue.
void Controller::Impl::Schedule() {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    Clock::time_point now = Clock::now();
    Clock::time_point next = Clock::time_point::max();
    for (auto it = sleeping.begin(); it != sleeping.end();) {
      const std::shared_ptr<WindowRun>& run = *it;
      bool due = !run->forever && now >= run->deadline;
      if (due || WokenLocked(*run)) {
        tasks.push_back([this, r = run, due] { EndWindow(r, due); });
        cv.notify_all();
        it = sleeping.erase(it);
        continue;
      }
      if (!run->forever) next = std::min(next, run->deadline);
      ++it;
    }
    if (shutdown && sleeping.empty() && tasks.empty() && busy_workers == 0) {
      threads_done = true;
      cv.notify_all();
      return;
    }
    if (next == Clock::time_point::max()) {
      cv.wait(lock);
    } else {
      cv.wait_until(lock, next);
    }
  }
}

void Controller::Impl::Shutdown() {
  std::vector<std::shared_ptr<WindowRun>> stranded;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!scheduler.joinable()) return;
    shutdown = true;
  }
  cv.notify_all();
  scheduler.join();
  for (std::thread& t : pool) t.join();
  pool.clear();
  {
    // Runs whose isolate never ran their step (it was idle, not pumped).
    std::lock_guard<std::mutex> lock(mu);
    stranded.assign(active.begin(), active.end());
  }
  for (const std::shared_ptr<WindowRun>& run : stranded) {
    Fail(run, Error(ErrorCode::kFailedPrecondition, "the controller shut down"));
  }
}

bool Controller::Impl::Stopping() {
  std::lock_guard<std::mutex> lock(mu);
  return shutdown;
}

// Starts a run: queues the step that opens its window (it opens at the
// target's next interrupt or Pump, even the caller's own next Pump).
void Controller::Impl::Start(const std::shared_ptr<WindowRun>& run) {
  {
    std::lock_guard<std::mutex> lock(mu);
    active.insert(run);
  }
  bool posted = Post(run->target, [this, run] {
    Status opened = OpenRequested(*run->target, run);
    Submit([this, run, opened] { Opened(run, opened); });
  });
  if (!posted) Submit([this, run] { Fail(run, Gone(*run)); });
}

Status Controller::Impl::Gone(const WindowRun& run) {
  return Error(ErrorCode::kNotFound, "target " + run.target->name + " was unregistered during the window");
}

// On the pool: the window opened (or not); it sleeps until due or woken.
void Controller::Impl::Opened(const std::shared_ptr<WindowRun>& run, const Status& opened) {
  if (!opened.ok()) return Finish(run, opened);
  Sleep(run);
}

void Controller::Impl::Sleep(const std::shared_ptr<WindowRun>& run) {
  {
    std::unique_lock<std::mutex> lock(mu);
    if (shutdown) {  // the scheduler may be gone
      lock.unlock();
      return Fail(run, Error(ErrorCode::kFailedPrecondition, "the controller shut down"));
    }
    run->forever = run->request.duration >= std::chrono::hours(24 * 365);
    if (!run->forever) run->deadline = Clock::now() + run->request.duration;
    sleeping.insert(run);
  }
  cv.notify_all();
}

// On the pool: the window is due (`full`) or was woken early.
void Controller::Impl::EndWindow(const std::shared_ptr<WindowRun>& run, bool full) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (run->closed_by_unregister) return;  // Unregister answers it
  }
  if (Stopping()) return Fail(run, Error(ErrorCode::kFailedPrecondition, "the controller shut down"));
  if (!Alive(*run->target)) return Fail(run, Gone(*run));
  bool again = run->continuous_id != 0 && full;
  // Stop (and, for a continuous run, start the next window in the same step:
  // the next window's ids start right after this one's).
  bool posted = Post(run->target, [this, run, again] {
    Target& t = *run->target;
    Result<RawSnapshot> raw = Gone(*run);
    bool alive = Alive(t);
    if (alive || run->request.partial_on_unregister) {
      raw = CloseRun(t, *run, alive && run->request.options.gc_before_snapshot);
      if (raw.ok() && !alive) NoteUnregistered(raw.value(), *run);
      if (alive && again && t.sampler) {
        run->mark = t.sampler->OpenWindow(LabelsOf(run->request.options));
        t.open_runs.push_back(run);
      }
    } else {
      Release(t, *run);
    }
    Submit(
        [this, run, again = again && alive, raw = std::move(raw)]() mutable { Stopped(run, again, std::move(raw)); });
  });
  if (!posted) Fail(run, Gone(*run));
}

// On the pool: build, encode, deliver; a continuous run sleeps again.
void Controller::Impl::Stopped(const std::shared_ptr<WindowRun>& run, bool again, Result<RawSnapshot> raw) {
  if (!raw.ok()) return Finish(run, raw.status());
  Result<WindowProfile> profile = Encode(run->target->name, std::move(raw.value()));
  if (!again) return Finish(run, std::move(profile));
  run->deliver(std::move(profile));
  Sleep(run);
}

// Ends a run that gave up, dropping the window it may have left open.
void Controller::Impl::Fail(const std::shared_ptr<WindowRun>& run, const Status& status) {
  Post(run->target, [run] { Release(*run->target, *run); });
  Finish(run, status);
}

// Ends a run once: frees the target for the next request, restarts
// background capture, delivers the last result.
void Controller::Impl::Finish(const std::shared_ptr<WindowRun>& run, Result<WindowProfile> result) {
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (run->finished) return;
    run->finished = true;
    active.erase(run);
    if (run->id != 0) by_id.erase(run->id);
    sleeping.erase(run);
    stopping = shutdown;
  }
  {
    std::lock_guard<std::mutex> lock(run->target->mu);
    --run->target->windows;
  }
  if (!stopping) (void)Post(run->target, [target = run->target] { StartBackground(*target); });
  run->deliver(std::move(result));
  if (run->continuous_id != 0) {
    {
      std::lock_guard<std::mutex> lock(mu);
      continuous_done.insert(run->continuous_id);
    }
    cv.notify_all();
  }
}

// Reserves a target for a run, or says why not. Windows share the
// target's sampler, so they may overlap when they sample alike.
Result<std::shared_ptr<Target>> Controller::Impl::Reserve(const std::string& name, const SessionOptions& options) {
  std::lock_guard<std::mutex> lock(mu);
  if (shutdown) return Error(ErrorCode::kFailedPrecondition, "the controller shut down");
  auto it = by_name.find(name);
  if (it == by_name.end()) return Error(ErrorCode::kNotFound, "no such target: " + name);
  Target& t = *it->second;
  std::lock_guard<std::mutex> tl(t.mu);
  if (t.windows > 0 && (t.window_interval != options.interval_bytes || t.window_depth != options.max_stack_depth)) {
    return Error(ErrorCode::kFailedPrecondition,
                 fmt::format("target {} is already being profiled at an interval of {} bytes (stack depth {}); "
                             "a window at {} bytes (depth {}) can open once those windows end",
                             name, t.window_interval, t.window_depth, options.interval_bytes, options.max_stack_depth));
  }
  ++t.windows;
  t.window_interval = options.interval_bytes;
  t.window_depth = options.max_stack_depth;
  return it->second;
}

}  // namespace heapprof
