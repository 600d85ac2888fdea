// The controller: routes window requests to registered isolates and runs the
// lifecycle steps on each isolate's thread (interrupt or Pump), while waiting,
// building and encoding happen on the controller's threads: one scheduler
// that wakes windows when they are due, and a fixed pool that builds, encodes
// and delivers. A window is a small state machine (open -> sleeping -> stop ->
// encode -> deliver, or again for a continuous run), so no thread waits for a
// window: a thousand windows need no more threads than one.
//
// Each target has one always-on Sampler (sampler.h), started by its first
// window (or near-limit capture, or live snapshot) and stopped only when the
// target is unregistered. A window is a range of its sample ids, so windows
// on one target overlap freely as long as they share its interval and depth.
#include "heapprof/v8/controller.h"

#include <v8.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/v8/sampler.h"

namespace heapprof {
namespace {

using Step = std::function<void()>;
using Clock = std::chrono::steady_clock;
using Task = std::function<void()>;

// Threads that build, encode and deliver profiles.
constexpr int kPoolThreads = 2;

struct WindowRun;

struct Target {
  std::string name;
  v8::Isolate* isolate = nullptr;

  // Guarded by mu: shared with the controller's threads.
  std::mutex mu;
  std::deque<Step> steps;
  bool alive = true;
  int windows = 0;               // requested (or continuous) windows holding the target
  uint64_t window_interval = 0;  // their sampling interval and depth (while windows > 0)
  int window_depth = 0;
  uint64_t cut = 0;  // EndWindows(name) calls so far

  // Touched only on the isolate's thread.
  std::unique_ptr<Sampler> sampler;
  uint64_t configured_limit = 0;                    // the heap limit reported (not a near-limit raise)
  std::vector<std::weak_ptr<WindowRun>> open_runs;  // runs whose window is open in `sampler`
  ProfileSink near_sink;
  SessionOptions near_options;
  bool near_enabled = false;
  bool near_between_windows = true;  // keep a background window while no requested one is open
  bool near_capturing = false;
  size_t initial_limit = 0;

  Controller::Impl* owner_impl = nullptr;  // for the near-limit interrupt
  // Guarded by the controller's mutex: near-limit captures being encoded.
  int near_pending = 0;
};

// One requested window, or a continuous series of them.
struct WindowRun {
  std::shared_ptr<Target> target;
  WindowRequest request;
  uint64_t continuous_id = 0;
  uint64_t cuts = 0;         // the controller's EndWindows count at the request
  uint64_t target_cuts = 0;  // the target's
  ProfileSink deliver;
  // On the isolate's thread: the open window.
  std::optional<WindowMark> mark;
  // Guarded by the controller's mutex.
  Clock::time_point deadline;
  bool forever = false;  // until woken
  bool finished = false;
  bool closed_by_unregister = false;  // Unregister ended it; the scheduler's wake-up does nothing
  uint64_t id = 0;                    // for EndWindow
  bool cut_alone = false;             // EndWindow(id) was called
};

// The targets of each isolate, for its interrupts. V8 drops a pending
// interrupt unrun when its isolate is disposed, so RequestInterrupt gets no
// heap-allocated data (it would leak); OnInterrupt finds its targets here.
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

}  // namespace

class Controller::Impl {
 public:
  Impl() {
    scheduler = std::thread([this] { Schedule(); });
    for (int i = 0; i < kPoolThreads; ++i) pool.emplace_back([this] { Work(); });
  }
  ~Impl() {
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

  // Registers a target (Controller::Register).
  Status Add(const std::string& name, v8::Isolate* isolate, uint64_t configured_limit);

  mutable std::mutex mu;
  std::condition_variable cv;  // every change below; the scheduler and the pool wait on it
  bool shutdown = false;
  bool threads_done = false;
  std::map<std::string, std::shared_ptr<Target>> by_name;
  std::map<v8::Isolate*, std::shared_ptr<Target>> by_isolate;
  std::map<uint64_t, bool> continuous_running;
  std::set<uint64_t> continuous_done;
  uint64_t next_id = 1;
  uint64_t cut = 0;                       // EndWindows calls so far: a window requested before the latest one ends
  std::atomic<uint64_t> steps_posted{0};  // steps queued so far, on every target (Controller::StepsPosted)
  std::set<std::shared_ptr<WindowRun>> active;         // not yet finished
  std::map<uint64_t, std::weak_ptr<WindowRun>> by_id;  // requested windows, for EndWindow
  std::set<std::shared_ptr<WindowRun>> sleeping;       // window open, waiting to be due
  std::deque<Task> tasks;
  int busy_workers = 0;
  std::thread scheduler;
  std::vector<std::thread> pool;

  uint64_t Cuts() {
    std::lock_guard<std::mutex> lock(mu);
    return cut;
  }

  // Runs `task` on the pool; after the pool has stopped, on this thread.
  void Submit(Task task) {
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

  void Work() {
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
  bool WokenLocked(const WindowRun& run) {
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
  void Schedule() {
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

  void Shutdown() {
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

  bool Stopping() {
    std::lock_guard<std::mutex> lock(mu);
    return shutdown;
  }

  // Queues a step for the isolate's thread and pokes it.
  // False when the target is gone (its isolate may be disposed): nothing is queued.
  static bool Post(const std::shared_ptr<Target>& target, Step step) {
    // Under the lock: Unregister (on the isolate's thread, before disposal)
    // cannot slip between the check and the interrupt request.
    std::lock_guard<std::mutex> lock(target->mu);
    if (!target->alive) return false;
    target->steps.push_back(std::move(step));
    target->owner_impl->steps_posted.fetch_add(1, std::memory_order_acq_rel);  // under target->mu: see StepsPosted
    target->isolate->RequestInterrupt(&Impl::OnInterrupt, nullptr);
    return true;
  }

  static bool Alive(Target& t) {
    std::lock_guard<std::mutex> lock(t.mu);
    return t.alive;
  }

  static void OnInterrupt(v8::Isolate* isolate, void*) {
    std::vector<std::shared_ptr<Target>> targets;
    {
      std::lock_guard<std::mutex> lock(g_interrupt_mu);
      auto [begin, end] = g_interrupt_targets.equal_range(isolate);
      for (auto it = begin; it != end; ++it) {
        if (std::shared_ptr<Target> t = it->second.lock()) targets.push_back(std::move(t));
      }
    }
    for (const std::shared_ptr<Target>& t : targets) RunSteps(*t);
  }

  static void RunSteps(Target& target) {
    for (;;) {
      Step step;
      {
        std::lock_guard<std::mutex> lock(target.mu);
        if (target.steps.empty()) return;
        step = std::move(target.steps.front());
        target.steps.pop_front();
      }
      step();
    }
  }

  // On the isolate's thread: the target's sampler, started (or restarted at
  // another interval or depth, when no window needs the old one) as asked.
  static Status EnsureSampler(Target& t, const SessionOptions& options) {
    if (t.sampler) {
      const SamplerOptions& running = t.sampler->options();
      if (running.interval_bytes == options.interval_bytes && running.max_stack_depth == options.max_stack_depth) {
        return Status::Ok();
      }
      if (t.sampler->stats().open_windows > 0) {
        return Error(ErrorCode::kFailedPrecondition,
                     fmt::format("target {} is already being profiled at an interval of {} bytes (stack depth {}); "
                                 "a window at {} bytes (depth {}) can open once those windows end",
                                 t.name, running.interval_bytes, running.max_stack_depth, options.interval_bytes,
                                 options.max_stack_depth));
      }
      t.sampler.reset();  // no window needs the old interval: start again at the new one
    }
    SamplerOptions so = SamplerOptionsFrom(options);
    so.heap_limit_bytes = t.configured_limit;
    HEAPPROF_ASSIGN_OR_RETURN(t.sampler, Sampler::Start(t.isolate, so));
    return Status::Ok();
  }

  // On the isolate's thread: starts the sampler for near-limit capture.
  static void StartBackground(Target& t) {
    if (!t.near_enabled || !t.near_between_windows || t.sampler || t.near_capturing) return;
    (void)EnsureSampler(t, t.near_options);
  }

  static WindowLabels LabelsOf(const SessionOptions& options) {
    return WindowLabels{options.isolate_name, options.inlining_allowed};
  }

  // Opens a requested window on the isolate's thread.
  static Status OpenRequested(Target& t, const std::shared_ptr<WindowRun>& run) {
    {
      std::lock_guard<std::mutex> lock(t.mu);
      if (!t.alive) return Error(ErrorCode::kNotFound, "target " + t.name + " was unregistered");
    }
    HEAPPROF_RETURN_IF_ERROR(EnsureSampler(t, run->request.options));
    run->mark = t.sampler->OpenWindow(LabelsOf(run->request.options));
    t.open_runs.push_back(run);
    return Status::Ok();
  }

  // On the isolate's thread: the run's window closes (with its snapshot) or is dropped.
  static Result<RawSnapshot> CloseRun(Target& t, WindowRun& run, bool full_gc) {
    if (!run.mark || !t.sampler) return Error(ErrorCode::kFailedPrecondition, "the window was not open");
    Result<RawSnapshot> raw = t.sampler->CloseWindow(*run.mark, full_gc);
    run.mark.reset();
    ForgetRun(t, run);
    return raw;
  }

  static void ForgetRun(Target& t, WindowRun& run) {
    t.open_runs.erase(std::remove_if(t.open_runs.begin(), t.open_runs.end(),
                                     [&](const std::weak_ptr<WindowRun>& w) {
                                       std::shared_ptr<WindowRun> r = w.lock();
                                       return !r || r.get() == &run;
                                     }),
                      t.open_runs.end());
  }

  // A window the target's unregistering cut short: what it saw, said so.
  static void NoteUnregistered(RawSnapshot& raw, const WindowRun& run) {
    raw.info.notes.push_back(fmt::format(
        "window_end: target {} was unregistered (its isolate ended, e.g. a replica restart) {:.3f} s into the "
        "window; this is what the window saw until then",
        run.target->name, static_cast<double>(raw.info.duration_nanos) / 1e9));
  }

  // Starts a run: queues the step that opens its window (it opens at the
  // target's next interrupt or Pump, even the caller's own next Pump).
  void Start(const std::shared_ptr<WindowRun>& run) {
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

  static Status Gone(const WindowRun& run) {
    return Error(ErrorCode::kNotFound, "target " + run.target->name + " was unregistered during the window");
  }

  // On the pool: the window opened (or not); it sleeps until due or woken.
  void Opened(const std::shared_ptr<WindowRun>& run, const Status& opened) {
    if (!opened.ok()) return Finish(run, opened);
    Sleep(run);
  }

  void Sleep(const std::shared_ptr<WindowRun>& run) {
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
  void EndWindow(const std::shared_ptr<WindowRun>& run, bool full) {
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
  void Stopped(const std::shared_ptr<WindowRun>& run, bool again, Result<RawSnapshot> raw) {
    if (!raw.ok()) return Finish(run, raw.status());
    Result<WindowProfile> profile = Encode(run->target->name, std::move(raw.value()));
    if (!again) return Finish(run, std::move(profile));
    run->deliver(std::move(profile));
    Sleep(run);
  }

  // Ends a run that gave up, dropping the window it may have left open.
  void Fail(const std::shared_ptr<WindowRun>& run, const Status& status) {
    Post(run->target, [run] { Release(*run->target, *run); });
    Finish(run, status);
  }

  // On the isolate's thread: drops a window left open by a run that gave up.
  static void Release(Target& t, WindowRun& run) {
    if (run.mark && t.sampler) t.sampler->AbandonWindow(*run.mark);
    run.mark.reset();
    ForgetRun(t, run);
  }

  // Ends a run once: frees the target for the next request, restarts
  // background capture, delivers the last result.
  void Finish(const std::shared_ptr<WindowRun>& run, Result<WindowProfile> result) {
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
  Result<std::shared_ptr<Target>> Reserve(const std::string& name, const SessionOptions& options) {
    std::lock_guard<std::mutex> lock(mu);
    if (shutdown) return Error(ErrorCode::kFailedPrecondition, "the controller shut down");
    auto it = by_name.find(name);
    if (it == by_name.end()) return Error(ErrorCode::kNotFound, "no such target: " + name);
    Target& t = *it->second;
    std::lock_guard<std::mutex> tl(t.mu);
    if (t.windows > 0 && (t.window_interval != options.interval_bytes || t.window_depth != options.max_stack_depth)) {
      return Error(
          ErrorCode::kFailedPrecondition,
          fmt::format("target {} is already being profiled at an interval of {} bytes (stack depth {}); "
                      "a window at {} bytes (depth {}) can open once those windows end",
                      name, t.window_interval, t.window_depth, options.interval_bytes, options.max_stack_depth));
    }
    ++t.windows;
    t.window_interval = options.interval_bytes;
    t.window_depth = options.max_stack_depth;
    return it->second;
  }

  // Near-heap-limit: raise the limit and capture in an interrupt (on V8 10.2,
  // snapshotting from inside V8's GC-time callbacks proved unsafe), then
  // restore the limit.
  static size_t OnNearHeapLimit(void* data, size_t current, size_t initial) {
    auto* target = static_cast<Target*>(data);
    if (target->near_capturing) return current + current / 4;
    target->near_capturing = true;
    target->initial_limit = initial;
    target->isolate->RequestInterrupt(&Impl::CaptureNearLimit, target);
    return current + current / 2 + 16u * 1024 * 1024;
  }

  // On the isolate's thread, in an interrupt: only the snapshot is taken
  // here; building, encoding and the sink run on the pool. The capture is
  // every sample alive (any age, not only since a window); windows go on.
  static void CaptureNearLimit(v8::Isolate* isolate, void* data) {
    auto* target = static_cast<Target*>(data);
    Result<RawSnapshot> raw =
        Error(ErrorCode::kFailedPrecondition, "no profiling window was open when the isolate neared its heap limit");
    if (target->sampler && (target->near_between_windows || target->sampler->stats().open_windows > 0)) {
      raw = target->sampler->LiveSnapshot(target->near_options.gc_before_snapshot);
    }
    if (raw.ok()) {
      raw->info.isolate_name = target->near_options.isolate_name;
      raw->info.notes.push_back("trigger: near heap limit");
    }
    Impl* impl = target->owner_impl;
    {
      std::lock_guard<std::mutex> lock(impl->mu);
      ++target->near_pending;
    }
    impl->Submit([impl, target, sink = target->near_sink, raw = std::move(raw)]() mutable {
      if (raw.ok()) {
        sink(Encode(target->name, std::move(raw.value())));
      } else {
        sink(raw.status());
      }
      {
        std::lock_guard<std::mutex> lock(impl->mu);
        --target->near_pending;
      }
      impl->cv.notify_all();
    });
    // Hand the limit back; an earlier near-limit callback (if any) takes over.
    isolate->RemoveNearHeapLimitCallback(&Impl::OnNearHeapLimit, target->initial_limit);
    target->near_enabled = false;
  }
};

Controller::Controller() : impl_(std::make_unique<Impl>()) {}
Controller::~Controller() { Shutdown(); }

void Controller::Shutdown() { impl_->Shutdown(); }

Status Controller::Register(const std::string& name, v8::Isolate* isolate) {
  if (isolate != nullptr) {
    // The limit before any near-limit raise: the one reported in profiles.
    v8::HeapStatistics heap;
    isolate->GetHeapStatistics(&heap);
    return impl_->Add(name, isolate, heap.heap_size_limit());
  }
  return impl_->Add(name, isolate, 0);
}

Status Controller::Impl::Add(const std::string& name, v8::Isolate* isolate, uint64_t configured_limit) {
  if (isolate == nullptr || name.empty())
    return Error(ErrorCode::kInvalidArgument, "a target needs a name and an isolate");
  std::lock_guard<std::mutex> lock(mu);
  if (by_name.count(name)) return Error(ErrorCode::kInvalidArgument, "target " + name + " is already registered");
  if (by_isolate.count(isolate)) {
    return Error(ErrorCode::kInvalidArgument, "this isolate is already registered as " + by_isolate[isolate]->name);
  }
  auto target = std::make_shared<Target>();
  target->name = name;
  target->isolate = isolate;
  target->owner_impl = this;
  target->configured_limit = configured_limit;
  by_name[name] = target;
  by_isolate[isolate] = target;
  std::lock_guard<std::mutex> interrupt_lock(g_interrupt_mu);
  g_interrupt_targets.emplace(isolate, target);
  return Status::Ok();
}

Status Controller::Unregister(const std::string& name) {
  std::shared_ptr<Target> target;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->by_name.find(name);
    if (it == impl_->by_name.end()) return Error(ErrorCode::kNotFound, "no such target: " + name);
    target = it->second;
    impl_->by_name.erase(it);
    impl_->by_isolate.erase(target->isolate);
  }
  {
    std::lock_guard<std::mutex> lock(g_interrupt_mu);
    auto [begin, end] = g_interrupt_targets.equal_range(target->isolate);
    for (auto it = begin; it != end;) {
      it = it->second.lock() == target ? g_interrupt_targets.erase(it) : std::next(it);
    }
  }
  // The windows open now are answered here (not by the scheduler's wake-up).
  std::vector<std::shared_ptr<WindowRun>> open;
  for (const std::weak_ptr<WindowRun>& w : target->open_runs) {
    if (std::shared_ptr<WindowRun> run = w.lock()) open.push_back(std::move(run));
  }
  {
    // Under the controller's mutex too: its waiters check `alive` under it.
    std::lock_guard<std::mutex> lock(impl_->mu);
    for (const std::shared_ptr<WindowRun>& run : open) run->closed_by_unregister = true;
    std::lock_guard<std::mutex> tl(target->mu);
    target->alive = false;
  }
  impl_->cv.notify_all();
  // We are on the isolate's thread: run what waits, then close any window.
  v8::Isolate::Scope scope(target->isolate);
  v8::HandleScope handles(target->isolate);
  Impl::RunSteps(*target);
  for (const std::shared_ptr<WindowRun>& run : open) {
    if (!run->mark) continue;  // a queued step closed it
    if (run->request.partial_on_unregister) {
      Result<RawSnapshot> raw = Impl::CloseRun(*target, *run, /*full_gc=*/false);
      if (raw.ok()) Impl::NoteUnregistered(raw.value(), *run);
      impl_->Submit(
          [impl = impl_.get(), run, raw = std::move(raw)]() mutable { impl->Stopped(run, false, std::move(raw)); });
    } else {
      Impl::Release(*target, *run);
      impl_->Submit([impl = impl_.get(), run] { impl->Finish(run, Impl::Gone(*run)); });
    }
  }
  if (target->near_enabled) {
    target->isolate->RemoveNearHeapLimitCallback(&Impl::OnNearHeapLimit, 0);
    target->near_enabled = false;
  }
  target->open_runs.clear();
  target->sampler.reset();
  // A near-limit capture still being encoded reaches its sink before we return.
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return target->near_pending == 0; });
  return Status::Ok();
}

std::vector<std::string> Controller::Targets() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<std::string> names;
  for (const auto& [name, _] : impl_->by_name) names.push_back(name);
  return names;
}

void Controller::Pump(v8::Isolate* isolate) {
  std::shared_ptr<Target> target;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->by_isolate.find(isolate);
    if (it == impl_->by_isolate.end()) return;
    target = it->second;
  }
  {
    std::lock_guard<std::mutex> lock(target->mu);
    if (target->steps.empty()) return;
  }
  v8::Isolate::Scope scope(isolate);
  v8::HandleScope handles(isolate);
  Impl::RunSteps(*target);
}

Status Controller::Register(const std::string& name, Isolate& isolate) {
  return impl_->Add(name, isolate.get(), isolate.heap_limit_bytes());
}

void Controller::Pump(Isolate& isolate) { Pump(isolate.get()); }

uint64_t Controller::StepsPosted() const { return impl_->steps_posted.load(std::memory_order_acquire); }

std::future<Result<WindowProfile>> Controller::Profile(const WindowRequest& request) {
  return Profile(request, nullptr);
}

void Controller::EndWindow(uint64_t window_id) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->by_id.find(window_id);
    if (it == impl_->by_id.end()) return;
    if (std::shared_ptr<WindowRun> run = it->second.lock()) run->cut_alone = true;
  }
  impl_->cv.notify_all();
}

std::future<Result<WindowProfile>> Controller::Profile(const WindowRequest& request, uint64_t* window_id) {
  if (window_id != nullptr) *window_id = 0;
  auto promise = std::make_shared<std::promise<Result<WindowProfile>>>();
  std::future<Result<WindowProfile>> future = promise->get_future();
  Result<std::shared_ptr<Target>> target = impl_->Reserve(request.target, request.options);
  if (!target.ok()) {
    promise->set_value(target.status());
    return future;
  }
  auto run = std::make_shared<WindowRun>();
  run->target = target.value();
  run->request = request;
  run->cuts = impl_->Cuts();
  run->target_cuts = TargetCuts(*run->target);
  run->deliver = [promise](Result<WindowProfile> r) { promise->set_value(std::move(r)); };
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    run->id = impl_->next_id++;
    impl_->by_id[run->id] = run;
  }
  if (window_id != nullptr) *window_id = run->id;
  impl_->Start(run);
  return future;
}

Result<uint64_t> Controller::StartContinuous(const WindowRequest& request, ProfileSink sink) {
  if (request.duration <= std::chrono::nanoseconds::zero()) {
    return Error(ErrorCode::kInvalidArgument, "a continuous window needs a positive length");
  }
  if (!sink) return Error(ErrorCode::kInvalidArgument, "a continuous run needs a sink");
  HEAPPROF_ASSIGN_OR_RETURN(std::shared_ptr<Target> target, impl_->Reserve(request.target, request.options));
  auto run = std::make_shared<WindowRun>();
  run->target = target;
  run->request = request;
  run->cuts = impl_->Cuts();
  run->target_cuts = TargetCuts(*run->target);
  run->deliver = std::move(sink);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    run->continuous_id = impl_->next_id++;
    impl_->continuous_running[run->continuous_id] = true;
  }
  impl_->Start(run);
  return run->continuous_id;
}

void Controller::EndWindows() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    ++impl_->cut;
  }
  impl_->cv.notify_all();
}

void Controller::EndWindows(const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->by_name.find(name);
    if (it == impl_->by_name.end()) return;
    std::lock_guard<std::mutex> tl(it->second->mu);
    ++it->second->cut;
  }
  impl_->cv.notify_all();
}

bool Controller::Profiling(const std::string& name) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->by_name.find(name);
  if (it == impl_->by_name.end()) return false;
  std::lock_guard<std::mutex> tl(it->second->mu);
  return it->second->windows > 0;
}

void Controller::StopContinuous(uint64_t id) {
  std::unique_lock<std::mutex> lock(impl_->mu);
  auto it = impl_->continuous_running.find(id);
  if (it == impl_->continuous_running.end()) return;
  it->second = false;
  impl_->cv.notify_all();
  // Wait until the last (partial) window is delivered and the run has ended.
  impl_->cv.wait(lock, [&] { return impl_->shutdown || impl_->continuous_done.count(id) > 0; });
  impl_->continuous_running.erase(id);
  impl_->continuous_done.erase(id);
}

namespace {
// A promise that is always kept: destroyed unanswered (its step dropped at
// shutdown), it answers with an error.
struct SnapshotPromise {
  std::promise<Result<RawSnapshot>> promise;
  bool answered = false;
  void Answer(Result<RawSnapshot> r) {
    if (answered) return;
    answered = true;
    promise.set_value(std::move(r));
  }
  ~SnapshotPromise() { Answer(Error(ErrorCode::kFailedPrecondition, "the controller shut down")); }
};
}  // namespace

std::future<Result<RawSnapshot>> Controller::LiveSnapshot(const std::string& name, bool full_gc) {
  return LiveSnapshot(name, full_gc, SessionOptions{});
}

std::future<Result<RawSnapshot>> Controller::LiveSnapshot(const std::string& name, bool full_gc,
                                                          const SessionOptions& options) {
  auto answer = std::make_shared<SnapshotPromise>();
  std::future<Result<RawSnapshot>> future = answer->promise.get_future();
  std::shared_ptr<Target> target;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->shutdown) {
      answer->Answer(Error(ErrorCode::kFailedPrecondition, "the controller shut down"));
      return future;
    }
    auto it = impl_->by_name.find(name);
    if (it != impl_->by_name.end()) target = it->second;
  }
  if (!target) {
    answer->Answer(Error(ErrorCode::kNotFound, "no such target: " + name));
    return future;
  }
  bool posted = Impl::Post(target, [target, full_gc, options, answer] {
    Target& t = *target;
    if (!Impl::Alive(t)) return answer->Answer(Error(ErrorCode::kNotFound, "target " + t.name + " was unregistered"));
    bool started_now = !t.sampler;
    if (started_now) {
      if (Status s = Impl::EnsureSampler(t, options); !s.ok()) return answer->Answer(s);
    }
    Result<RawSnapshot> raw = t.sampler->LiveSnapshot(full_gc);
    if (raw.ok()) {
      raw->info.isolate_name = options.isolate_name.empty() ? t.name : options.isolate_name;
      if (started_now) raw->info.notes.push_back("sampler: started by this snapshot");
    }
    answer->Answer(std::move(raw));
  });
  if (!posted) answer->Answer(Error(ErrorCode::kNotFound, "target " + name + " was unregistered"));
  return future;
}

Status Controller::EnableNearHeapLimitCapture(const std::string& name, ProfileSink sink, const SessionOptions& options,
                                              bool between_windows) {
  std::shared_ptr<Target> target;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->by_name.find(name);
    if (it == impl_->by_name.end()) return Error(ErrorCode::kNotFound, "no such target: " + name);
    target = it->second;
  }
  if (!sink) return Error(ErrorCode::kInvalidArgument, "near-limit capture needs a sink");
  if (target->near_enabled)
    return Error(ErrorCode::kFailedPrecondition, "near-limit capture is already on for " + name);
  target->near_sink = std::move(sink);
  target->near_options = options;
  target->near_enabled = true;
  target->near_between_windows = between_windows;
  target->near_capturing = false;
  target->isolate->AddNearHeapLimitCallback(&Impl::OnNearHeapLimit, target.get());
  v8::Isolate::Scope scope(target->isolate);
  v8::HandleScope handles(target->isolate);
  Impl::StartBackground(*target);
  return Status::Ok();
}

ProfileSink RotatingFileSink(const std::string& directory, const std::string& name,
                             std::function<void(const Status&)> on_error) {
  return [directory, name, on_error](Result<WindowProfile> r) {
    if (!r.ok()) {
      if (on_error) on_error(r.status());
      return;
    }
    std::string path = WindowFilePath(directory, name, r->profile.time_nanos);
    Status s = WriteFileAtomic(path, r->pprof_gzip);
    if (!s.ok() && on_error) on_error(s);
  };
}

}  // namespace heapprof
