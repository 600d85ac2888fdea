// A `heapprof run` replica's body on its thread: the plan's request loop and
// its counts, the window closed (run_replica.h).
#include "tools/heapprof/run_replica.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/workload/traffic.h"
#include "tools/heapprof/interrupt.h"

namespace heapprof::cli {
namespace {

// How a failed Dispatch counts in the report, or nullopt when the run cannot
// go on (the heap limit, or the runtime itself failed).
std::optional<RequestFailure> CountedAs(WorkerFailure failure) {
  switch (failure) {
    case WorkerFailure::kThrew:
    case WorkerFailure::kBadResponse:  // the report counts it with the throws, as the platform does
    case WorkerFailure::kStalled:
    case WorkerFailure::kTerminated:
      return RequestFailure::kThrown;
    case WorkerFailure::kRejected:
      return RequestFailure::kRejected;
    case WorkerFailure::kTimedOut:
      return RequestFailure::kTimedOut;
    case WorkerFailure::kHeapLimit:
    case WorkerFailure::kNotRun:
    case WorkerFailure::kInternal:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

ReplicaThread::ReplicaThread(Run& run, Replica& r)
    : run_(run),
      r_(r),
      plan_(run.plan),
      controller_(run.controller),
      out_(r.out),
      continuous_(run.plan.continuous_ns > 0),
      object_window_(r.profiled && !run.plan.object_target.empty()),
      object_(run.plan.object_target, run.plan.session) {}

void ReplicaThread::MarkDone() {
  if (counted_done_) return;
  counted_done_ = true;
  {
    std::lock_guard<std::mutex> lock(run_.mu);
    ++run_.all_done;
    if (r_.profiled) ++run_.profiled_done;
  }
  run_.cv.notify_all();
}

void ReplicaThread::Main(Status loaded) {
  out_.name = r_.name;
  WorkerRuntime* runtime = r_.replica->runtime();
  out_.kind = runtime != nullptr ? runtime->kind() : WorkerKind::kNotLoaded;
  // A load a signal terminated is no failure; a failure before it (the
  // isolate, its registration, a window opened before the load) is.
  if (!loaded.ok() && out_.failure.ok() && (runtime == nullptr || InterruptWatcher::received() == 0)) {
    out_.failure = loaded;
  }
  if (runtime == nullptr) return MarkDone();
  if (loaded.ok()) Loop();
  Finish();
}

void ReplicaThread::Loop() {
  for (;;) {
    uint64_t served = r_.served.load();
    if (r_.profiled && !object_window_ && !out_.window_opened && served >= plan_.warmup_requests &&
        Since(start_) >= plan_.warmup_ns) {
      OpenWindow();
      opened_ = Clock::now();
      if (!out_.failure.ok()) break;
    }
    if (served >= plan_.max_requests || Since(start_) >= plan_.max_duration_ns || run_.over.load() ||
        InterruptWatcher::received() != 0) {
      break;
    }
    if (out_.window_opened && !continuous_ && (WindowEnded() || object_.ended() || Since(opened_) >= plan_.window_ns)) {
      break;
    }
    const WorkerRequest request =
        plan_.traffic.empty() ? SyntheticRequest(served) : plan_.traffic[served % plan_.traffic.size()];
    DispatchResult response = r_.replica->Dispatch(request);
    if (!plan_.responses_out.empty() && (response.ok() || InterruptWatcher::received() == 0)) {
      out_.responses += ResponseRecord(served, request, response);
      out_.responses += '\n';
    }
    if (!response.ok()) {
      if (InterruptWatcher::received() != 0) break;  // terminated mid-request: not counted
      std::optional<RequestFailure> kind = CountedAs(response.failure());
      if (!kind) {  // the heap limit, or the runtime itself failed: the run cannot go on
        out_.failure = response.status();
        break;
      }
      // A failed request counts; the run goes on (the report judges the share).
      out_.requests.AddFailure(*kind, response.reason());
    } else {
      out_.requests.AddResponse(response->status);
    }
    r_.served.store(served + 1);
    r_.replica->Idle();  // the controller answered, and the leak session's snapshot when due
  }
}

// The run is over for this replica: the last leak snapshot, the counts, the
// window closed (the controller answered until it has ended), the objects read.
void ReplicaThread::Finish() {
  WorkerRuntime& runtime = this->runtime();
  out_.heap_limit = out_.failure.code() == ErrorCode::kResourceExhausted;
  // The session's last snapshot, unless the isolate is past its limit (the
  // near-limit capture holds what was alive then).
  if (leaks_active_ && !runtime.heap_limit_reached()) LeakSnapshot(/*due_only=*/false);
  out_.served = r_.served.load();
  out_.serving_ns = Since(start_);
  out_.heap = runtime.heap_usage();
  if (out_.window_opened) out_.window_requests = out_.served - out_.window_opened_at;

  if (out_.window_opened) {
    controller_.EndWindows(r_.name);
    while (controller_.Profiling(r_.name)) {
      controller_.Pump(runtime.isolate());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (object_window_) {
    Result<WindowProfile> window = object_.Close();
    if (window.status().code() == ErrorCode::kResourceExhausted) {
      // Closed near the object's heap limit: the near-limit capture holds its profile.
    } else if (window.ok() || out_.window_opened) {
      out_.window.emplace(std::move(window));
    } else if (out_.failure.ok() && InterruptWatcher::received() == 0) {
      out_.failure = window.status();
    }
  }
  // After the window: reading them allocates in the isolate.
  if (Result<std::vector<DurableObjectReport>> objects = runtime.DurableObjects(); objects.ok()) {
    out_.durable_objects = std::move(objects.value());
  }
  r_.window_open = false;
  MarkDone();  // the replica unregisters and disposes the isolate next
}

}  // namespace heapprof::cli
