// A replica: one named worker isolate on a thread of its own, the life that
// `heapprof run` and `heapprof serve` share. It makes the isolate, registers
// it with the controller (and its near-heap-limit capture), loads the worker,
// dispatches requests, makes a fresh isolate after a request ran past the
// time limit or hit the heap limit (when asked to), answers the controller
// and a hook between requests, and unloads. Where the requests come from (a
// queue, a plan's traffic) and what is done with the answers is the body its
// user runs on the replica's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/runtime/durable_object_targets.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/session.h"

namespace heapprof {

class WorkerReplica;

struct WorkerReplicaOptions {
  std::string name;                  // the controller's target
  std::string worker;                // the worker file, loaded into each isolate
  WorkerOptions worker_options;      // the isolate's options (its name is the one recorded in profiles)
  Controller* controller = nullptr;  // registers each isolate of the replica (optional)
  // Near the heap limit the in-use profile goes here (empty: no capture;
  // needs the controller), sampled with these options; between_windows as
  // Controller::EnableNearHeapLimitCapture has it.
  ProfileSink near_limit_sink;
  SessionOptions near_limit_options;
  bool near_limit_between_windows = true;
  // A fresh isolate after a request ran past the time limit (dropping what
  // the stuck request left half-built) or hit the heap limit.
  bool recreate_after_failure = false;
  // Each Durable Object's isolate a controller target of its own, "NS:NAME"
  // (durable_object_targets.h), while it lives; needs the controller.
  bool object_targets = false;
  // On the replica's thread, once per isolate: registered with the
  // controller, its worker not yet loaded (a window or a leak session opened
  // here sees the module's top level). An error stops the load with it.
  std::function<Status(WorkerReplica&)> before_load;
  // On the replica's thread at every Idle(), the isolate idle.
  std::function<void(WorkerReplica&)> between_requests;
};

class WorkerReplica {
 public:
  explicit WorkerReplica(WorkerReplicaOptions options);
  ~WorkerReplica();  // Join()
  WorkerReplica(const WorkerReplica&) = delete;
  WorkerReplica& operator=(const WorkerReplica&) = delete;

  // Starts the replica's thread: the first isolate is made and its worker
  // loaded, then `body` runs with how that went; when it returns the isolate
  // is unregistered and disposed. Once.
  void Start(std::function<void(Status loaded)> body);
  // Waits for the thread's end (the body must return). Idempotent.
  void Join();

  // On the replica's thread (in the body):
  // One request: the worker's response, or the failure with its kind. With
  // recreate_after_failure, a time limit or heap limit makes a fresh isolate
  // (the message says so), and a failed re-creation is retried at the next
  // request (kNotRun until it succeeds).
  DispatchResult Dispatch(const WorkerRequest& request);
  // Answers the controller and runs between_requests; call when idle.
  void Idle();
  // The isolate's runtime; null when there is none (its creation failed).
  WorkerRuntime* runtime() { return runtime_ ? &*runtime_ : nullptr; }
  // Isolates made so far (a failed re-load counts too).
  uint64_t generation() const { return generation_; }

  // From any thread:
  const std::string& name() const { return options_.name; }
  // Ends the replica's JavaScript for good: the load or request running now
  // is terminated, later ones fail with kNotRun without running. Returns how
  // long the call it terminated had run, or nullopt when none was running.
  std::optional<std::chrono::nanoseconds> Terminate();
  uint64_t served() const { return served_.load(); }      // requests answered
  uint64_t failures() const { return failures_.load(); }  // requests that failed
  uint64_t restarts() const { return restarts_.load(); }  // isolates re-created
  // Heap use after the load and every 64 requests.
  HeapUsage heap() const { return {heap_used_.load(), heap_limit_.load()}; }
  // The Durable Objects registered as targets now (empty without object_targets).
  std::vector<DurableObjectTarget> ObjectTargets() const;

 private:
  Status Load();
  void Unload();
  void Recreate();
  bool Enter();  // false once terminated
  void Leave();
  void UpdateHeap();

  const WorkerReplicaOptions options_;
  std::unique_ptr<DurableObjectTargets> objects_;  // with object_targets and objects to register
  std::thread thread_;
  std::optional<WorkerRuntime> runtime_;  // on the thread only
  bool loaded_ = false;                   // on the thread only
  uint64_t generation_ = 0;               // on the thread only

  std::mutex mu_;  // guards the three below
  bool terminated_ = false;
  WorkerRuntime* running_ = nullptr;  // while it runs JavaScript, for Terminate
  std::chrono::steady_clock::time_point running_since_;

  std::atomic<uint64_t> served_{0}, failures_{0}, restarts_{0};
  std::atomic<size_t> heap_used_{0}, heap_limit_{0};
};

}  // namespace heapprof
