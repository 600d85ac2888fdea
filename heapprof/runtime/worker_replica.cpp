// WorkerReplica: an isolate's life on the replica's thread (worker_replica.h).
// Only the runtime's and the controller's public API.
#include "heapprof/runtime/worker_replica.h"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

namespace heapprof {

WorkerReplica::WorkerReplica(WorkerReplicaOptions options) : options_(std::move(options)) {
  if (options_.object_targets && options_.controller != nullptr && !options_.worker_options.durable_objects.empty()) {
    objects_ = std::make_unique<DurableObjectTargets>(*options_.controller);
  }
}

WorkerReplica::~WorkerReplica() { Join(); }

void WorkerReplica::Start(std::function<void(Status loaded)> body) {
  thread_ = std::thread([this, body = std::move(body)] {
    Status loaded = Load();
    body(loaded);
    Unload();
  });
}

void WorkerReplica::Join() {
  if (thread_.joinable()) thread_.join();
}

Status WorkerReplica::Load() {
  WorkerOptions worker_options = options_.worker_options;
  if (objects_) objects_->Install(worker_options);
  HEAPPROF_ASSIGN_OR_RETURN(WorkerRuntime created, WorkerRuntime::Create(worker_options));
  runtime_.emplace(std::move(created));
  loaded_ = false;
  ++generation_;
  if (Controller* controller = options_.controller; controller != nullptr) {
    if (Status s = controller->Register(options_.name, runtime_->isolate()); !s.ok()) {
      runtime_.reset();
      return s;
    }
    if (options_.near_limit_sink) {
      HEAPPROF_RETURN_IF_ERROR(controller->EnableNearHeapLimitCapture(
          options_.name, options_.near_limit_sink, options_.near_limit_options, options_.near_limit_between_windows));
    }
  }
  if (options_.before_load) HEAPPROF_RETURN_IF_ERROR(options_.before_load(*this));
  if (!Enter()) return Error(ErrorCode::kUnavailable, options_.name + " was stopped before its worker loaded");
  Status s = runtime_->LoadFile(options_.worker);
  Leave();
  HEAPPROF_RETURN_IF_ERROR(s);
  loaded_ = true;
  UpdateHeap();
  return Status::Ok();
}

void WorkerReplica::Unload() {
  if (!runtime_) return;
  if (objects_) objects_->UnregisterAll();  // the objects' isolates go with the worker's runtime
  if (options_.controller != nullptr) (void)options_.controller->Unregister(options_.name);
  runtime_.reset();
  loaded_ = false;
}

void WorkerReplica::Recreate() {
  Unload();
  ++restarts_;
  if (Status s = Load(); !s.ok()) {
    fmt::print(stderr, "heapprof: {}: could not recreate the isolate: {}\n", options_.name, s.message());
    Unload();
  }
}

bool WorkerReplica::Enter() {
  std::lock_guard<std::mutex> lock(mu_);
  if (terminated_) return false;
  running_ = &*runtime_;
  running_since_ = std::chrono::steady_clock::now();
  return true;
}

void WorkerReplica::Leave() {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = nullptr;
}

std::optional<std::chrono::nanoseconds> WorkerReplica::Terminate() {
  std::lock_guard<std::mutex> lock(mu_);
  terminated_ = true;
  if (running_ == nullptr) return std::nullopt;
  // Safe from any thread; under the lock, so the runtime is not disposed meanwhile.
  running_->Terminate();
  return std::chrono::steady_clock::now() - running_since_;
}

void WorkerReplica::UpdateHeap() {
  HeapUsage usage = runtime_->heap_usage();
  heap_used_ = usage.used_bytes;
  heap_limit_ = usage.limit_bytes;
}

DispatchResult WorkerReplica::Dispatch(const WorkerRequest& request) {
  if (!loaded_) {
    // A re-creation failed earlier; try again now.
    Unload();
    if (Status s = Load(); !s.ok()) {
      Unload();
      ++failures_;
      return {WorkerFailure::kNotRun,
              Error(ErrorCode::kUnavailable, "the worker could not be reloaded: " + s.message())};
    }
  }
  if (!Enter()) {
    return {WorkerFailure::kNotRun, Error(ErrorCode::kUnavailable, options_.name + " stopped before this request ran")};
  }
  DispatchResult response = runtime_->Dispatch(request);
  Leave();
  if (response.ok()) {
    ++served_;
  } else {
    ++failures_;
  }
  if ((served_.load() + failures_.load()) % 64 == 1) UpdateHeap();
  if (response.ok() || !options_.recreate_after_failure) return response;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (terminated_) return response;  // the replica is stopping: nothing is re-created
  }
  if (response.failure() == WorkerFailure::kTimedOut) {
    // The runtime terminated the JavaScript; a fresh isolate drops whatever
    // state the stuck request left half-built.
    Recreate();
    return {WorkerFailure::kTimedOut,
            Error(ErrorCode::kDeadlineExceeded,
                  fmt::format("{}; {} was recreated", response.status().message(), options_.name)),
            fmt::format("{}; {} was recreated", response.reason(), options_.name)};
  }
  if (response.failure() == WorkerFailure::kHeapLimit) {
    Recreate();
    return {WorkerFailure::kHeapLimit,
            Error(ErrorCode::kResourceExhausted,
                  fmt::format("the worker exceeded its heap limit; {} was recreated", options_.name))};
  }
  return response;
}

void WorkerReplica::Idle() {
  if (!runtime_) return;
  if (options_.controller != nullptr) options_.controller->Pump(runtime_->isolate());
  if (objects_) objects_->Pump(*runtime_);
  if (options_.between_requests) options_.between_requests(*this);
}

std::vector<DurableObjectTarget> WorkerReplica::ObjectTargets() const {
  return objects_ ? objects_->Targets() : std::vector<DurableObjectTarget>{};
}

}  // namespace heapprof
