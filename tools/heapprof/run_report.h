// `heapprof run`'s report: writes each profiled replica's files (profile,
// flamegraph, near-limit capture) and prints what holds and what allocates the
// memory. The same report for every mode.
#pragma once

#include "tools/heapprof/run_engine.h"
#include "tools/heapprof/run_plan.h"

namespace heapprof::cli {

// Writes and prints the outcome; returns the process exit code.
int ReportRun(const Plan& plan, EngineOutcome& outcome);

}  // namespace heapprof::cli
