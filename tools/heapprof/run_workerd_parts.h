// The parts of `heapprof run --runtime workerd` (run_workerd.h): the flags
// checked into a plan (run_workerd_plan.cpp), the run (run_workerd.cpp) and
// its report (run_workerd_report.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/remote/remote_profiler.h"
#include "heapprof/remote/workerd_load.h"
#include "heapprof/workload/worker_config.h"
#include "heapprof/workload/worker_messages.h"
#include "tools/heapprof/run_plan.h"

namespace heapprof::cli {

// --request-timeout 0 (no limit): the client still needs a deadline for its socket.
inline constexpr remote::Millis kNoTimeout{24 * 3600 * 1000};

// What the flags come to.
struct WorkerdRunPlan {
  remote::RemoteSampleTypes types = remote::RemoteSampleTypes::kBoth;
  uint64_t interval = 0;               // bytes between samples
  uint64_t warmup_requests = 0;        // before the first window
  int64_t warmup_ns = 0;               // --warmup as a duration
  uint64_t window_requests = 0;        // each window's share of --requests N (0: windows end by time)
  uint64_t kicks = 0;                  // of N, kept for the in-use window's GC
  bool gc_kick = false;                // an in-use window with a GC before its snapshot
  int64_t window_ns = 0;               // each window's length
  std::vector<WorkerRequest> traffic;  // the user's requests (empty: the synthetic stream)
  double max_failures = 0.5;
  std::chrono::milliseconds request_timeout{0};
  std::string output;  // the profile's path
};

// Checks the flags (refusing the embedded-only ones) into `plan`; kExitOk, or the exit code after saying why.
int PlanWorkerdRun(const RunArgs& args, WorkerdRunPlan& plan);

// What the run came to, for the report.
struct WorkerdRunResult {
  Profile* profile = nullptr;
  remote::WorkerdLoad* load = nullptr;
  std::string target_name;  // the worker's file name
  std::string runtime;      // the inspector's /json/version
  std::string outbound;     // --fetch-handler's module ("" when none)
  std::string module_name;  // workerd's name of the main module
  int64_t elapsed_ns = 0;
  uint64_t warmed = 0;  // requests answered before the first window
  int inlining = 1;     // 0: off in the windows
};

// Writes the profile, prints the report; the exit code.
int ReportWorkerdRun(const RunArgs& args, const WorkerConfig& config, const WorkerdRunPlan& plan,
                     WorkerdRunResult& result);

}  // namespace heapprof::cli
