// `heapprof run WORKER --runtime workerd`: serve the worker in a real workerd
// child process, drive heapprof's synthetic requests over HTTP, profile it
// through the DevTools protocol, stop workerd.
#pragma once

#include "tools/heapprof/run_plan.h"

namespace heapprof::cli {

// Runs the whole command; returns the exit code.
int RunInWorkerd(const RunArgs& args, const WorkerConfig& config);

}  // namespace heapprof::cli
