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

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "heapprof/v8/controller_impl.h"

namespace heapprof {

using controller_detail::g_interrupt_mu;
using controller_detail::g_interrupt_targets;
using controller_detail::Target;
using controller_detail::TargetCuts;
using controller_detail::WindowRun;

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
