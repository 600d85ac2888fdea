// The controller's private parts, shared by its three files: the targets
// and window runs (the state both sides touch), and Controller::Impl, whose
// threads and window state machine live in controller_impl.cpp and whose
// steps on each isolate's own thread live in controller_steps.cpp;
// controller.cpp is the public API over them.
#pragma once

#include <v8.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "heapprof/v8/controller.h"
#include "heapprof/v8/sampler.h"

namespace heapprof {
namespace controller_detail {

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

// The targets of each isolate, for its interrupts (controller_steps.cpp).
extern std::mutex g_interrupt_mu;
extern std::multimap<v8::Isolate*, std::weak_ptr<Target>> g_interrupt_targets;

// The target's EndWindows(name) count.
uint64_t TargetCuts(Target& t);

// A window's snapshot as a profile and its pprof bytes.
Result<WindowProfile> Encode(const std::string& target, RawSnapshot raw);

}  // namespace controller_detail

class Controller::Impl {
 public:
  using Clock = controller_detail::Clock;
  using Step = controller_detail::Step;
  using Target = controller_detail::Target;
  using Task = controller_detail::Task;
  using WindowRun = controller_detail::WindowRun;

  Impl();
  ~Impl();

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

  // The pool and the scheduler, and a window's way from open to delivered (controller_impl.cpp).

  uint64_t Cuts();
  // Runs `task` on the pool; after the pool has stopped, on this thread.
  void Submit(Task task);
  void Work();
  // Under `mu`: whether a sleeping window must end before its time.
  bool WokenLocked(const WindowRun& run);
  // The scheduler: hands each sleeping window to the pool when it is due or
  // woken. On shutdown it wakes them all, then the pool drains its queue.
  void Schedule();
  void Shutdown();
  bool Stopping();
  // Starts a run: queues the step that opens its window (it opens at the
  // target's next interrupt or Pump, even the caller's own next Pump).
  void Start(const std::shared_ptr<WindowRun>& run);
  static Status Gone(const WindowRun& run);
  // On the pool: the window opened (or not); it sleeps until due or woken.
  void Opened(const std::shared_ptr<WindowRun>& run, const Status& opened);
  void Sleep(const std::shared_ptr<WindowRun>& run);
  // On the pool: the window is due (`full`) or was woken early.
  void EndWindow(const std::shared_ptr<WindowRun>& run, bool full);
  // On the pool: build, encode, deliver; a continuous run sleeps again.
  void Stopped(const std::shared_ptr<WindowRun>& run, bool again, Result<RawSnapshot> raw);
  // Ends a run that gave up, dropping the window it may have left open.
  void Fail(const std::shared_ptr<WindowRun>& run, const Status& status);
  // Ends a run once: frees the target for the next request, restarts
  // background capture, delivers the last result.
  void Finish(const std::shared_ptr<WindowRun>& run, Result<WindowProfile> result);
  // Reserves a target for a run, or says why not. Windows share the
  // target's sampler, so they may overlap when they sample alike.
  Result<std::shared_ptr<Target>> Reserve(const std::string& name, const SessionOptions& options);

  // On the isolate's thread, or queueing for it (controller_steps.cpp).

  // Queues a step for the isolate's thread and pokes it.
  // False when the target is gone (its isolate may be disposed): nothing is queued.
  static bool Post(const std::shared_ptr<Target>& target, Step step);
  static bool Alive(Target& t);
  static void OnInterrupt(v8::Isolate* isolate, void*);
  static void RunSteps(Target& target);
  // On the isolate's thread: the target's sampler, started (or restarted at
  // another interval or depth, when no window needs the old one) as asked.
  static Status EnsureSampler(Target& t, const SessionOptions& options);
  // On the isolate's thread: starts the sampler for near-limit capture.
  static void StartBackground(Target& t);
  static WindowLabels LabelsOf(const SessionOptions& options);
  // Opens a requested window on the isolate's thread.
  static Status OpenRequested(Target& t, const std::shared_ptr<WindowRun>& run);
  // On the isolate's thread: the run's window closes (with its snapshot) or is dropped.
  static Result<RawSnapshot> CloseRun(Target& t, WindowRun& run, bool full_gc);
  static void ForgetRun(Target& t, WindowRun& run);
  // A window the target's unregistering cut short: what it saw, said so.
  static void NoteUnregistered(RawSnapshot& raw, const WindowRun& run);
  // On the isolate's thread: drops a window left open by a run that gave up.
  static void Release(Target& t, WindowRun& run);
  // Near-heap-limit: raise the limit and capture in an interrupt (on V8 10.2,
  // snapshotting from inside V8's GC-time callbacks proved unsafe), then
  // restore the limit.
  static size_t OnNearHeapLimit(void* data, size_t current, size_t initial);
  // On the isolate's thread, in an interrupt: only the snapshot is taken
  // here; building, encoding and the sink run on the pool. The capture is
  // every sample alive (any age, not only since a window); windows go on.
  static void CaptureNearLimit(v8::Isolate* isolate, void* data);
};

}  // namespace heapprof
