// `heapprof run`'s one engine: every replica (one by default) is a worker
// isolate on its own thread, registered with heapprof::Controller, serving
// synthetic requests; its profiling window (one, or back-to-back with
// --continuous) is requested through the controller, and near the heap limit
// the controller captures the window's in-use profile. The same code path
// serves every combination of flags.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/core/leaks.h"
#include "heapprof/core/status.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/leak_session.h"
#include "heapprof/workload/outcomes.h"
#include "tools/heapprof/run_plan.h"

namespace heapprof::cli {

// What one replica did.
struct ReplicaOutcome {
  std::string name;
  WorkerKind kind = WorkerKind::kNotLoaded;
  uint64_t served = 0;     // requests answered
  int64_t serving_ns = 0;  // from creation to the last request
  bool window_opened = false;
  uint64_t window_opened_at = 0;                    // requests served before the window opened
  uint64_t window_requests = 0;                     // requests served while it was open
  HeapUsage heap;                                   // when the replica stopped serving
  std::optional<Result<WindowProfile>> window;      // the requested window (not with --continuous)
  std::optional<Result<WindowProfile>> near_limit;  // the near-heap-limit capture, if it fired
  uint64_t near_limit_requests = 0;                 // requests served when the capture reached its sink
  std::optional<WindowProfile> last_continuous;     // the last window of a continuous run
  std::unique_ptr<heapprof::LeakSession> leaks;     // --leaks: the session (from the warm-up's end)
  int continuous_written = 0;
  int continuous_failed = 0;
  RequestOutcomes requests;                          // statuses, failed requests and their errors
  std::string responses;                             // with --responses-out: one JSON line per request, in order
  Status failure;                                    // loading or serving failed (a script error, the heap limit)
  bool heap_limit = false;                           // the failure is the heap limit
  std::vector<DurableObjectReport> durable_objects;  // the objects that received events
};

struct EngineOutcome {
  std::vector<ReplicaOutcome> replicas;  // in the plan's order
  int64_t elapsed_ns = 0;
  int signal = 0;  // SIGINT/SIGTERM received during the run, or 0
};

// Runs the plan (V8 is initialised) and reports what happened; writes the
// continuous windows' files as they come, nothing else.
Result<EngineOutcome> RunEngine(const Plan& plan);

}  // namespace heapprof::cli
