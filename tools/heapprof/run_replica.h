// `heapprof run`'s replicas (run_engine.h): what every replica thread shares
// with the main thread (Run), one replica's state (Replica), and the thread's
// whole life (ServeReplica: run_replica.cpp, its windows run_replica_windows.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "heapprof/core/profile.h"
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

struct Replica {
  std::string name;
  bool profiled = false;
  std::thread thread;

  std::mutex mu;                     // guards runtime and the sinks' fields of `out`
  WorkerRuntime* runtime = nullptr;  // while it may run JS, for Terminate on a signal
  std::shared_future<Result<WindowProfile>> window;
  uint64_t continuous_id = 0;
  std::atomic<uint64_t> served{0};
  std::atomic<bool> window_open{false};
  std::atomic<size_t> heap_used{0}, heap_limit{0};
  ReplicaOutcome out;  // the thread's own fields; complete after join
};

// Applies source maps (the worker's and the runtime libraries') when the plan
// says so, printing what could not be applied.
void MaybeSymbolize(const Plan& plan, Profile& profile, Run& run);

// One replica's whole life on its thread: its isolate made and registered,
// the worker loaded, its window (one, --continuous, --leaks, or a Durable
// Object's) opened after the warm-up, its requests served, the window closed.
void ServeReplica(Run& run, Replica& r);

// The thread's state, between its two files.
class ReplicaThread {
 public:
  ReplicaThread(Run& run, Replica& r);
  void Main();

 private:
  // run_replica_windows.cpp
  WorkerOptions MakeOptions();  // the isolate's options; --profile NS:NAME's window hooks
  Status Register();            // with the controller, and its near-limit capture
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
  ObjectWindow object_;  // before runtime_: it outlives the object isolates it saw
  Clock::time_point opened_{};
  bool leaks_active_ = false;
  WorkerOptions options_;
  std::optional<WorkerRuntime> runtime_;
};

}  // namespace heapprof::cli
