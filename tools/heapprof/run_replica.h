// `heapprof run`'s replicas (run_engine.h): what every replica thread shares
// with the main thread (Run), one replica's state (Replica), and what run
// does on a replica's thread (ReplicaThread: run_replica.cpp, its windows
// run_replica_windows.cpp) over the library's replica (worker_replica.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "heapprof/core/profile.h"
#include "heapprof/runtime/worker_replica.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/session.h"
#include "tools/heapprof/progress.h"
#include "tools/heapprof/run_engine.h"
#include "tools/heapprof/run_object.h"
#include "tools/heapprof/run_plan.h"

namespace heapprof::cli {

using Clock = std::chrono::steady_clock;

inline int64_t Since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

// What every replica thread shares with the main thread.
struct Run {
  explicit Run(const Plan& p) : plan(p), progress(StderrIsTerminal()) {}
  const Plan& plan;
  Controller controller;
  std::mutex progress_mu;
  ProgressLine progress;
  Clock::time_point start = Clock::now();
  std::mutex mu;  // guards `done` counts below; `cv` announces changes
  std::condition_variable cv;
  int profiled_done = 0;
  int all_done = 0;
  std::atomic<bool> over{false};  // every profiled window ended: unprofiled replicas stop too

  void Print(const std::string& line) {
    std::lock_guard<std::mutex> lock(progress_mu);
    progress.PrintAbove(line);
  }
};

class ReplicaThread;

struct Replica {
  std::string name;
  bool profiled = false;
  std::unique_ptr<ReplicaThread> thread;  // what runs on the replica's thread
  std::optional<WorkerReplica> replica;   // its isolate (Terminate on a signal), its thread

  std::mutex mu;  // guards the sinks' fields of `out`
  std::shared_future<Result<WindowProfile>> window;
  uint64_t continuous_id = 0;
  std::atomic<uint64_t> served{0};
  std::atomic<bool> window_open{false};
  ReplicaOutcome out;  // the thread's own fields; complete after join
};

// Applies source maps (the worker's and the runtime libraries') when the plan
// says so, printing what could not be applied.
void MaybeSymbolize(const Plan& plan, Profile& profile, Run& run);

// A replica's life as run has it, on the replica's thread: its window (one,
// --continuous, --leaks, or a Durable Object's) opened after the warm-up (or
// before the worker loads), the plan's requests served and counted, the
// window closed.
class ReplicaThread {
 public:
  ReplicaThread(Run& run, Replica& r);
  // run_replica_windows.cpp: the replica's options: the isolate's, its
  // near-limit capture, --profile NS:NAME's window hooks.
  WorkerReplicaOptions MakeOptions();
  // The replica's body, once its worker loaded (or failed to).
  void Main(Status loaded);

 private:
  // run_replica_windows.cpp
  void LeakSnapshot(bool due_only);
  void OpenLeakSession();
  void OpenWindow();
  void OpenContinuous();
  bool WindowEnded() const;
  // run_replica.cpp
  void Loop();
  void Finish();
  void MarkDone();

  Run& run_;
  Replica& r_;
  const Plan& plan_;
  Controller& controller_;
  ReplicaOutcome& out_;
  const Clock::time_point start_ = Clock::now();
  const bool continuous_;
  bool counted_done_ = false;
  SessionOptions session_;
  bool object_window_ = false;
  ObjectWindow object_;  // outlives the object isolates it saw (Replica::thread is before Replica::replica)
  Clock::time_point opened_{};
  bool leaks_active_ = false;
  WorkerRuntime& runtime() { return *r_.replica->runtime(); }
};

}  // namespace heapprof::cli
