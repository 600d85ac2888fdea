// `heapprof run --replicas N | --continuous D | --on-heap-limit FILE`: several
// isolates of one worker on their own threads, profiled on demand through the
// controller while they keep serving.
#pragma once

#include <cstdint>
#include <string>

#include "heapprof/v8/session.h"

namespace heapprof::cli {

struct ReplicaRun {
  std::string worker;
  int replicas = 1;
  std::string target;           // profile only this replica ("" = all)
  int64_t duration_ns = 0;      // how long the replicas serve
  int64_t warmup_ns = 0;        // before the first window opens
  int64_t window_ns = 0;        // length of each window
  bool continuous = false;      // back-to-back windows, rotating files
  std::string on_heap_limit;    // near-limit capture file ("" = off)
  size_t heap_limit_bytes = 0;
  SessionOptions session;
  std::string output;           // profile file (one target) or name stem
  int top = 10;
};

// Runs the replicas and returns the process exit code. V8 is initialised.
int RunReplicas(const ReplicaRun& run);

}  // namespace heapprof::cli
