// The parts of `heapprof run`'s report (run_report.h) shared by its files:
// run_report.cpp (windows, the run's summary) and run_report_leaks.cpp (--leaks).
#pragma once

#include <cstdint>
#include <string>

#include "heapprof/core/profile.h"
#include "tools/heapprof/run_engine.h"
#include "tools/heapprof/run_plan.h"

namespace heapprof::cli::report {

// "2.31 s" / "850 ms" for reports.
std::string Seconds(int64_t ns);
std::string Bytes(uint64_t bytes);
// What the tables say about each sample type, for a newcomer.
std::string TableTitle(int index, bool gc, bool near_limit, bool leaks);
void PrintTables(const Profile& profile, const Plan& plan, bool near_limit, bool leaks = false);
void PrintSummary(const Profile& profile, const Plan& plan, int64_t requests);
// Source maps (the worker's and the runtime libraries'), when the plan applies
// them, then the file: at `path`, else in a fallback folder (said on stderr).
// False when it is not at `path`; *written is where it is ("" when nowhere).
bool WriteProfile(const Plan& plan, const std::string& path, WindowProfile& window, bool already_symbolized,
                  std::string* written);
// The name a replica goes by in the report.
std::string Label(const Plan& plan, const ReplicaOutcome& r);
// Why a profiled replica has no window (or leak session); always false.
bool ReportNoWindow(const ReplicaOutcome& r, const std::string& prefix, int signal);
// --leaks: the growth report of one replica's session, its profile (the last
// snapshot's in-use samples with their age) and the JSON; false when
// something failed. A worker that reached its heap limit still gets the
// report of the session up to then, and -o gets the near-limit capture
// (every sample alive then) unless --on-heap-limit takes it.
bool ReportLeakSession(const Plan& plan, ReplicaOutcome& r, bool only_one, int signal, std::string& first_file);
// Each Durable Object that received events, with its isolate's heap and its
// requests. Each lives in an isolate of its own, apart from the worker's.
void PrintDurableObjects(const EngineOutcome& outcome);

}  // namespace heapprof::cli::report
