// The controller's steps on each target's isolate thread: queueing them
// (an interrupt or the next Pump runs them), the target's sampler, opening
// and closing windows in it, and the near-heap-limit capture. See
// controller_impl.h.
#include "heapprof/v8/controller_impl.h"

#include <algorithm>

#include <fmt/format.h>

namespace heapprof {

using controller_detail::Clock;
using controller_detail::Encode;
using controller_detail::g_interrupt_mu;
using controller_detail::g_interrupt_targets;
using controller_detail::Target;
using controller_detail::WindowRun;

// Queues a step for the isolate's thread and pokes it.
// False when the target is gone (its isolate may be disposed): nothing is queued.
bool Controller::Impl::Post(const std::shared_ptr<Target>& target, Step step) {
  // Under the lock: Unregister (on the isolate's thread, before disposal)
  // cannot slip between the check and the interrupt request.
  std::lock_guard<std::mutex> lock(target->mu);
  if (!target->alive) return false;
  target->steps.push_back(std::move(step));
  target->owner_impl->steps_posted.fetch_add(1, std::memory_order_acq_rel);  // under target->mu: see StepsPosted
  target->isolate->RequestInterrupt(&Impl::OnInterrupt, nullptr);
  return true;
}

bool Controller::Impl::Alive(Target& t) {
  std::lock_guard<std::mutex> lock(t.mu);
  return t.alive;
}

void Controller::Impl::OnInterrupt(v8::Isolate* isolate, void*) {
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

void Controller::Impl::RunSteps(Target& target) {
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
Status Controller::Impl::EnsureSampler(Target& t, const SessionOptions& options) {
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
void Controller::Impl::StartBackground(Target& t) {
  if (!t.near_enabled || !t.near_between_windows || t.sampler || t.near_capturing) return;
  (void)EnsureSampler(t, t.near_options);
}

WindowLabels Controller::Impl::LabelsOf(const SessionOptions& options) {
  return WindowLabels{options.isolate_name, options.inlining_allowed};
}

// Opens a requested window on the isolate's thread.
Status Controller::Impl::OpenRequested(Target& t, const std::shared_ptr<WindowRun>& run) {
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
Result<RawSnapshot> Controller::Impl::CloseRun(Target& t, WindowRun& run, bool full_gc) {
  if (!run.mark || !t.sampler) return Error(ErrorCode::kFailedPrecondition, "the window was not open");
  Result<RawSnapshot> raw = t.sampler->CloseWindow(*run.mark, full_gc);
  run.mark.reset();
  ForgetRun(t, run);
  return raw;
}

void Controller::Impl::ForgetRun(Target& t, WindowRun& run) {
  t.open_runs.erase(std::remove_if(t.open_runs.begin(), t.open_runs.end(),
                                   [&](const std::weak_ptr<WindowRun>& w) {
                                     std::shared_ptr<WindowRun> r = w.lock();
                                     return !r || r.get() == &run;
                                   }),
                    t.open_runs.end());
}

// A window the target's unregistering cut short: what it saw, said so.
void Controller::Impl::NoteUnregistered(RawSnapshot& raw, const WindowRun& run) {
  raw.info.notes.push_back(fmt::format(
      "window_end: target {} was unregistered (its isolate ended, e.g. a replica restart) {:.3f} s into the "
      "window; this is what the window saw until then",
      run.target->name, static_cast<double>(raw.info.duration_nanos) / 1e9));
}

// On the isolate's thread: drops a window left open by a run that gave up.
void Controller::Impl::Release(Target& t, WindowRun& run) {
  if (run.mark && t.sampler) t.sampler->AbandonWindow(*run.mark);
  run.mark.reset();
  ForgetRun(t, run);
}

// Near-heap-limit: raise the limit and capture in an interrupt (on V8 10.2,
// snapshotting from inside V8's GC-time callbacks proved unsafe), then
// restore the limit.
size_t Controller::Impl::OnNearHeapLimit(void* data, size_t current, size_t initial) {
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
void Controller::Impl::CaptureNearLimit(v8::Isolate* isolate, void* data) {
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

}  // namespace heapprof
