// Replicas of one worker for a live service: each a named isolate on its own
// thread with a bounded request queue. A request that runs past the time
// limit is terminated and its isolate recreated; so is an isolate that hits
// its heap limit. The others keep serving throughout.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/http/pprof_endpoints.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/session.h"

namespace heapprof {

struct WorkerPoolOptions {
  std::string worker;                // the worker file, loaded into every replica
  std::vector<std::string> names;    // one replica per name (targets for the controller)
  WorkerOptions worker_options;      // heap limit, request timeout, console (the name is each replica's)
  size_t queue_limit = 64;           // requests waiting per replica; more are refused
  Controller* controller = nullptr;  // registers every replica's isolate (optional)
  std::string capture_dir;           // near-heap-limit captures go here ("" = off; needs controller)
  // Where a capture goes when capture_dir cannot take it (a full disk): this
  // folder ("" for none), then the system's temporary folder.
  std::string capture_fallback_dir;
  SessionOptions capture_options;
  // On the replica's thread between requests (after each answer, and on
  // every idle poll), its isolate idle: a leak session's snapshots
  // (serve/leak_sessions.h); also once per isolate before the worker's
  // module loads (registered with the controller by then). `requests`:
  // dispatched so far; `generation`: the isolates created so far (1 + the
  // re-creations, counting a re-load that failed).
  std::function<void(const std::string& replica, WorkerRuntime& runtime, uint64_t requests, uint64_t generation)>
      between_requests;
};

// Called once per request, on the replica's thread (or, for a request still
// queued at Abort, on the thread calling Abort).
using WorkerDone = std::function<void(DispatchResult)>;

// A replica's requests that Abort ended: the one it was running, and how
// long for, and those waiting in its queue.
struct AbortedRequests {
  std::string replica;
  bool running = false;
  std::chrono::nanoseconds running_for{0};
  size_t queued = 0;
};

class WorkerPool {
 public:
  // Starts the replicas and loads the worker into each; fails if any fails.
  static Result<std::unique_ptr<WorkerPool>> Start(const WorkerPoolOptions& options);
  ~WorkerPool();  // Shutdown()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  size_t size() const;
  const std::string& name(size_t replica) const;
  // A replica by name or by number ("2"); -1 when there is none.
  int Find(std::string_view name_or_number) const;
  // The next replica in round-robin order.
  size_t NextReplica();

  // Queues a request; `done` runs when the worker answered or failed, with
  // the failure's kind: the worker threw or rejected, kTimedOut or kHeapLimit
  // (after these two the isolate is recreated), kNotRun or kTerminated (the
  // pool shut down, a re-load failed). Refused with kUnavailable when the
  // replica's queue is full or the pool is shutting down (`done` never runs).
  Status Submit(size_t replica, WorkerRequest request, WorkerDone done);

  // Per replica: heap use, counters, restarts (for the debug index).
  std::vector<TargetStatus> Stats() const;
  // Per Durable Object whose isolate lives now (with a controller): its
  // target "NS:NAME" (durable_object_targets.h), heap use, the calls it
  // started (as requests) and its restarts; failures are not counted per object.
  std::vector<TargetStatus> ObjectStats() const;
  // Near-heap-limit captures written so far (those in a fallback folder too).
  std::vector<CaptureFile> Captures() const;
  // Captures capture_dir could not take: the failure, and where each went instead if anywhere.
  std::vector<std::string> CaptureErrors() const;

  // Refuses new requests, finishes the queued ones, unregisters the isolates
  // and joins the threads. Idempotent.
  void Shutdown();

  // For a shutdown that cannot wait any longer (a request that never ends,
  // e.g. with no time limit): refuses new requests, answers the queued ones
  // kUnavailable without running them, and terminates the JavaScript of the
  // running ones, which then answer kUnavailable. Returns what it ended, per
  // replica that had anything pending. Shutdown() still joins the threads.
  std::vector<AbortedRequests> Abort();

  class Impl;

 private:
  explicit WorkerPool(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace heapprof
