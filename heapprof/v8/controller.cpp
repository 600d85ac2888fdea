// The controller: routes window requests to registered isolates and runs the
// lifecycle steps on each isolate's thread (interrupt or Pump), while waiting,
// building and encoding happen on the controller's threads.
#include "heapprof/v8/controller.h"

#include <v8.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "heapprof/file_io.h"
#include "heapprof/pprof.h"
#include "heapprof/profile_builder.h"

namespace heapprof {
namespace {

using Step = std::function<void()>;

// Which kind of window a target's open session belongs to.
enum class Owner { kNone, kRequest, kBackground };

struct Target {
  std::string name;
  v8::Isolate* isolate = nullptr;

  // Guarded by mu: shared with the controller's threads.
  std::mutex mu;
  std::deque<Step> steps;
  bool alive = true;
  bool requested = false;  // a requested (or continuous) window holds the target
  uint64_t cut = 0;        // EndWindows(name) calls so far

  // Touched only on the isolate's thread.
  std::optional<Session> session;
  Owner owner = Owner::kNone;
  ProfileSink near_sink;
  SessionOptions near_options;
  bool near_enabled = false;
  bool near_between_windows = true;  // keep a background window while no requested one is open
  bool near_capturing = false;
  size_t initial_limit = 0;
};

// A one-shot value handed from the isolate's thread to a controller thread,
// guarded by the controller's mutex and announced on its condition.
template <typename T>
struct Handoff {
  std::optional<T> value;
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
  Result<std::string> gz = EncodePprofGzip(out.profile);
  if (!gz.ok()) return gz.status();
  out.pprof_gzip = std::move(gz.value());
  return out;
}

}  // namespace

class Controller::Impl {
 public:
  ~Impl() { Shutdown(); }

  template <typename T>
  void Set(Handoff<T>& h, T v) {
    {
      std::lock_guard<std::mutex> lock(mu);
      h.value.emplace(std::move(v));
    }
    cv.notify_all();
  }

  mutable std::mutex mu;
  std::condition_variable cv;  // wakes sleeping windows on shutdown/unregister/stop
  bool shutdown = false;
  std::map<std::string, std::shared_ptr<Target>> by_name;
  std::map<v8::Isolate*, std::shared_ptr<Target>> by_isolate;
  std::vector<std::thread> threads;
  std::map<uint64_t, bool> continuous_running;
  std::set<uint64_t> continuous_done;
  uint64_t next_id = 1;
  uint64_t cut = 0;  // EndWindows calls so far: a window requested before the latest one ends

  uint64_t Cuts() {
    std::lock_guard<std::mutex> lock(mu);
    return cut;
  }

  void Shutdown() {
    std::vector<std::thread> joining;
    {
      std::lock_guard<std::mutex> lock(mu);
      shutdown = true;
      joining.swap(threads);
    }
    cv.notify_all();
    for (std::thread& t : joining) t.join();
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

  // Waits for a step's result; gives up on shutdown or when the target dies
  // (both notify `cv` under `mu`, as Set does).
  template <typename T>
  std::optional<T> Await(Handoff<T>& h, Target& target) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] {
      if (h.value || shutdown) return true;
      std::lock_guard<std::mutex> tl(target.mu);
      return !target.alive;
    });
    return std::move(h.value);
  }

  // Sleeps for a window's length; false when woken by shutdown, unregister,
  // stop, or an EndWindows call after the request (`cuts` and `target_cuts`:
  // the global and per-target counts then). A duration of a year or more
  // means until woken.
  bool Sleep(std::chrono::nanoseconds d, const std::shared_ptr<Target>& target, uint64_t continuous_id,
             uint64_t cuts, uint64_t target_cuts) {
    std::unique_lock<std::mutex> lock(mu);
    auto woken = [&] {
      if (shutdown || cut != cuts) return true;
      if (continuous_id && !continuous_running[continuous_id]) return true;
      std::lock_guard<std::mutex> tl(target->mu);
      return !target->alive || target->cut != target_cuts;
    };
    if (d >= std::chrono::hours(24 * 365)) {
      cv.wait(lock, woken);
      return false;
    }
    return !cv.wait_for(lock, d, woken);
  }

  // On the isolate's thread: closes whatever window is open, returns its data.
  static Result<RawSnapshot> CloseSession(Target& t) {
    if (!t.session) return Error(ErrorCode::kFailedPrecondition, "no window is open");
    Session s = std::move(*t.session);
    t.session.reset();
    t.owner = Owner::kNone;
    return std::move(s).Stop();
  }

  // On the isolate's thread: (re)opens the near-limit background window.
  static void StartBackground(Target& t) {
    if (!t.near_enabled || !t.near_between_windows || t.session || t.near_capturing) return;
    Result<Session> s = Session::Start(t.isolate, t.near_options);
    if (s.ok()) {
      t.session.emplace(std::move(s.value()));
      t.owner = Owner::kBackground;
    }
  }

  // Opens a requested window on the isolate's thread (replacing a background one).
  static Status OpenRequested(Target& t, const SessionOptions& options) {
    {
      std::lock_guard<std::mutex> lock(t.mu);
      if (!t.alive) return Error(ErrorCode::kNotFound, "target " + t.name + " was unregistered");
    }
    if (t.owner == Owner::kBackground) t.session.reset();
    Result<Session> s = Session::Start(t.isolate, options);
    if (!s.ok()) return s.status();
    t.session.emplace(std::move(s.value()));
    t.owner = Owner::kRequest;
    return Status::Ok();
  }

  // Posts the step that opens a requested window; the caller's thread learns
  // its outcome from `started` (the window opens at the target's next
  // interrupt or Pump, even when that is the caller's own next Pump).
  bool PostOpen(const std::shared_ptr<Target>& target, const SessionOptions& options,
                const std::shared_ptr<Handoff<Status>>& started) {
    return Post(target, [this, target, started, options] { Set(*started, OpenRequested(*target, options)); });
  }

  // The rest of one requested or continuous run, on a controller thread,
  // once PostOpen queued the opening step (`posted`: whether it could).
  void RunWindows(std::shared_ptr<Target> target, WindowRequest request, uint64_t continuous_id, uint64_t cuts,
                  uint64_t target_cuts, std::shared_ptr<Handoff<Status>> started, bool posted,
                  std::function<void(Result<WindowProfile>)> deliver) {
    const Status shut_down = Error(ErrorCode::kFailedPrecondition, "the controller shut down");
    const Status gone =
        Error(ErrorCode::kNotFound, "target " + target->name + " was unregistered during the window");
    auto fail = [&](const Status& s) {
      Post(target, [target] { Release(*target); });
      Finish(target, [&] { deliver(s); });
    };
    if (!posted) return fail(gone);
    std::optional<Status> start_status = Await(*started, *target);
    if (!start_status) return fail(Stopping() ? shut_down : gone);
    if (!start_status->ok()) return Finish(target, [&] { deliver(*start_status); });

    for (;;) {
      bool full = Sleep(request.duration, target, continuous_id, cuts, target_cuts);
      if (Stopping()) return fail(shut_down);
      if (!Alive(*target)) return fail(gone);
      bool again = continuous_id != 0 && full;
      // Stop (and, for a continuous run, start the next window in the same step).
      auto stopped = std::make_shared<Handoff<Result<RawSnapshot>>>();
      bool stop_posted = Post(target, [this, target, stopped, again, options = request.options] {
        if (target->owner != Owner::kRequest) {
          Set(*stopped, Result<RawSnapshot>(Error(
                            ErrorCode::kFailedPrecondition,
                            Alive(*target) ? "the window ended early: the isolate neared its heap limit"
                                           : "target " + target->name + " was unregistered during the window")));
          return;
        }
        if (!Alive(*target)) {
          Release(*target);
          Set(*stopped, Result<RawSnapshot>(
                            Error(ErrorCode::kNotFound, "target " + target->name + " was unregistered during the window")));
          return;
        }
        Result<RawSnapshot> raw = CloseSession(*target);
        if (again) (void)OpenRequested(*target, options);
        Set(*stopped, std::move(raw));
      });
      if (!stop_posted) return fail(gone);
      std::optional<Result<RawSnapshot>> raw = Await(*stopped, *target);
      if (!raw) return fail(Stopping() ? shut_down : gone);
      if (!raw->ok()) return Finish(target, [&] { deliver(raw->status()); });
      Result<WindowProfile> profile = Encode(target->name, std::move(raw->value()));
      if (!again) return Finish(target, [&] { deliver(std::move(profile)); });
      deliver(std::move(profile));
    }
  }

  // On the isolate's thread: drops a requested window left open by a run that gave up.
  static void Release(Target& t) {
    if (t.owner == Owner::kRequest) {
      t.session.reset();
      t.owner = Owner::kNone;
    }
  }

  // Ends a run: frees the target for the next request, restarts background capture.
  void Finish(const std::shared_ptr<Target>& target, const std::function<void()>& deliver) {
    {
      std::lock_guard<std::mutex> lock(target->mu);
      target->requested = false;
    }
    bool stopping;
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = shutdown;
    }
    if (!stopping) (void)Post(target, [target] { StartBackground(*target); });
    deliver();
  }

  // Reserves a target for a run, or says why not.
  Result<std::shared_ptr<Target>> Reserve(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu);
    if (shutdown) return Error(ErrorCode::kFailedPrecondition, "the controller shut down");
    auto it = by_name.find(name);
    if (it == by_name.end()) return Error(ErrorCode::kNotFound, "no such target: " + name);
    std::lock_guard<std::mutex> tl(it->second->mu);
    if (it->second->requested) {
      return Error(ErrorCode::kFailedPrecondition, "target " + name + " is already being profiled");
    }
    it->second->requested = true;
    return it->second;
  }

  void Spawn(std::function<void()> body) {
    std::lock_guard<std::mutex> lock(mu);
    threads.emplace_back(std::move(body));
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

  static void CaptureNearLimit(v8::Isolate* isolate, void* data) {
    auto* target = static_cast<Target*>(data);
    Result<RawSnapshot> raw = CloseSession(*target);
    ProfileSink sink = target->near_sink;
    if (raw.ok()) {
      raw->info.notes.push_back("trigger: near heap limit");
      sink(Encode(target->name, std::move(raw.value())));
    } else {
      sink(raw.status());
    }
    // Hand the limit back; an earlier near-limit callback (if any) takes over.
    isolate->RemoveNearHeapLimitCallback(&Impl::OnNearHeapLimit, target->initial_limit);
    target->near_enabled = false;
  }
};

Controller::Controller() : impl_(std::make_unique<Impl>()) {}
Controller::~Controller() { Shutdown(); }

void Controller::Shutdown() { impl_->Shutdown(); }

Status Controller::Register(const std::string& name, v8::Isolate* isolate) {
  if (isolate == nullptr || name.empty()) return Error(ErrorCode::kInvalidArgument, "a target needs a name and an isolate");
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->by_name.count(name)) return Error(ErrorCode::kInvalidArgument, "target " + name + " is already registered");
  if (impl_->by_isolate.count(isolate)) {
    return Error(ErrorCode::kInvalidArgument, "this isolate is already registered as " + impl_->by_isolate[isolate]->name);
  }
  auto target = std::make_shared<Target>();
  target->name = name;
  target->isolate = isolate;
  impl_->by_name[name] = target;
  impl_->by_isolate[isolate] = target;
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
  {
    // Under the controller's mutex too: its waiters check `alive` under it.
    std::lock_guard<std::mutex> lock(impl_->mu);
    std::lock_guard<std::mutex> tl(target->mu);
    target->alive = false;
  }
  impl_->cv.notify_all();
  // We are on the isolate's thread: run what waits, then close any window.
  v8::Isolate::Scope scope(target->isolate);
  v8::HandleScope handles(target->isolate);
  Impl::RunSteps(*target);
  if (target->near_enabled) {
    target->isolate->RemoveNearHeapLimitCallback(&Impl::OnNearHeapLimit, 0);
    target->near_enabled = false;
  }
  target->session.reset();
  target->owner = Owner::kNone;
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

Status Controller::Register(const std::string& name, Isolate& isolate) { return Register(name, isolate.get()); }

void Controller::Pump(Isolate& isolate) { Pump(isolate.get()); }

std::future<Result<WindowProfile>> Controller::Profile(const WindowRequest& request) {
  auto promise = std::make_shared<std::promise<Result<WindowProfile>>>();
  std::future<Result<WindowProfile>> future = promise->get_future();
  Result<std::shared_ptr<Target>> target = impl_->Reserve(request.target);
  if (!target.ok()) {
    promise->set_value(target.status());
    return future;
  }
  std::shared_ptr<Target> t = target.value();
  uint64_t cuts = impl_->Cuts();
  uint64_t target_cuts = TargetCuts(*t);
  auto started = std::make_shared<Handoff<Status>>();
  bool posted = impl_->PostOpen(t, request.options, started);
  impl_->Spawn([this, t, request, promise, cuts, target_cuts, started, posted] {
    impl_->RunWindows(t, request, 0, cuts, target_cuts, started, posted,
                      [promise](Result<WindowProfile> r) { promise->set_value(std::move(r)); });
  });
  return future;
}

Result<uint64_t> Controller::StartContinuous(const WindowRequest& request, ProfileSink sink) {
  if (request.duration <= std::chrono::nanoseconds::zero()) {
    return Error(ErrorCode::kInvalidArgument, "a continuous window needs a positive length");
  }
  Result<std::shared_ptr<Target>> target = impl_->Reserve(request.target);
  if (!target.ok()) return target.status();
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    id = impl_->next_id++;
    impl_->continuous_running[id] = true;
  }
  std::shared_ptr<Target> t = target.value();
  uint64_t cuts = impl_->Cuts();
  uint64_t target_cuts = TargetCuts(*t);
  auto started = std::make_shared<Handoff<Status>>();
  bool posted = impl_->PostOpen(t, request.options, started);
  impl_->Spawn([this, t, request, id, sink, cuts, target_cuts, started, posted] {
    impl_->RunWindows(t, request, id, cuts, target_cuts, started, posted, sink);
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      impl_->continuous_done.insert(id);
    }
    impl_->cv.notify_all();
  });
  return id;
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
  return it->second->requested;
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
  if (target->near_enabled) return Error(ErrorCode::kFailedPrecondition, "near-limit capture is already on for " + name);
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
    std::string path = fmt::format("{}/{}-{}.pb.gz", directory, name, r->profile.time_nanos);
    Status s = WriteFileAtomic(path, r->pprof_gzip);
    if (!s.ok() && on_error) on_error(s);
  };
}

}  // namespace heapprof
