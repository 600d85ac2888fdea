// The shared parts of `heapprof run`'s report (run_report_parts.h).
#include <fmt/format.h>

#include <string>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "heapprof/core/file_io.h"
#include "heapprof/core/leaks.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/symbolizer.h"
#include "heapprof/core/terminal_text.h"
#include "heapprof/core/units.h"
#include "heapprof/runtime/runtime_source_maps.h"
#include "heapprof/workload/outcomes.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/leaks_report.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/run_report_parts.h"

namespace heapprof::cli::report {

// "2.31 s" / "850 ms" for reports.
std::string Seconds(int64_t ns) {
  if (ns < 1'000'000'000) return fmt::format("{} ms", ns / 1'000'000);
  return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9);
}

std::string Bytes(uint64_t bytes) { return FormatValue(static_cast<int64_t>(bytes), "bytes"); }

// What the tables say about each sample type, for a newcomer.
std::string TableTitle(int index, bool gc, bool near_limit, bool leaks) {
  if (leaks && !near_limit && (index == kInuseSpace || index == kInuseObjects)) {
    return fmt::format(
        "{} in use at the leak session's last snapshot ({}, {}):", index == kInuseSpace ? "Memory" : "Objects",
        index == kInuseSpace ? "inuse_space" : "inuse_objects", gc ? "after a full GC" : "no GC before the snapshot");
  }
  if (near_limit && (index == kInuseSpace || index == kInuseObjects)) {
    return index == kInuseSpace
               ? "Memory in use near the heap limit (inuse_space, captured before V8 stopped the worker):"
               : "Objects in use near the heap limit (inuse_objects):";
  }
  switch (index) {
    case kInuseSpace:
      return gc ? "Memory still in use when the window closed (inuse_space, after a full GC):"
                : "Memory still in use when the window closed (inuse_space, no GC before the snapshot):";
    case kAllocSpace:
      return "Memory allocated during the window, freed or not (alloc_space):";
    case kInuseObjects:
      return "Objects still in use when the window closed (inuse_objects):";
    case kAllocObjects:
      return "Objects allocated during the window (alloc_objects):";
  }
  return "";
}

void PrintTables(const Profile& profile, const Plan& plan, bool near_limit, bool leaks) {
  TableOptions options;
  options.indexes = plan.table_indexes;
  options.rows = plan.top_rows;
  options.interval_bytes = plan.session.interval_bytes;
  options.title = [&](int index) { return TableTitle(index, plan.session.gc_before_snapshot, near_limit, leaks); };
  options.more_samples_hint = "Serve more requests (--requests, --duration)";
  options.view = plan.user_code ? FrameView::kUserCode : FrameView::kAll;
  cli::PrintTables(profile, options);
}

void PrintSummary(const Profile& profile, const Plan& plan, int64_t requests) {
  if (plan.top_rows == 0) return;
  fmt::print("\n");
  cli::PrintSummary(profile, plan.table_indexes, requests);
}

// Source maps (the worker's and the runtime libraries'), when the plan applies
// them, then the file: at `path`, else in a fallback folder (said on stderr).
// False when it is not at `path`; *written is where it is ("" when nowhere).
bool WriteProfile(const Plan& plan, const std::string& path, WindowProfile& window, bool already_symbolized,
                  std::string* written) {
  if (plan.symbolize && !already_symbolized) {
    FileSourceMapProvider files(plan.source_maps);
    RuntimeSourceMapProvider maps(&files);
    for (const std::string& w : Symbolize(window.profile, maps).warnings) {
      fmt::print(stderr, "heapprof run: warning: {}\n", w);
    }
  }
  return DeliverReported(
      "run", "profile", path, FallbackDirs(plan.fallback_dir),
      [&](const std::string& p) {
        return plan.symbolize || window.pprof_gzip.empty() ? WritePprofFile(p, window.profile)
                                                           : WriteFileAtomic(p, window.pprof_gzip);
      },
      written);
}

// The name a replica goes by in the report.
std::string Label(const Plan& plan, const ReplicaOutcome& r) {
  return plan.replicas.size() == 1 ? plan.display_name : r.name;
}

// Why a profiled replica has no window (or leak session); always false.
bool ReportNoWindow(const ReplicaOutcome& r, const std::string& prefix, int signal) {
  if (signal != 0) {
    Fail("run",
         fmt::format("{}interrupted by {} {} ({} requests served); no profile written", prefix, SignalName(signal),
                     r.kind == WorkerKind::kNotLoaded ? "while loading the worker" : "during the warm-up", r.served));
  } else if (r.failure.ok()) {
    Fail("run", fmt::format("{}the run ended after {} requests, before the warm-up was over; no profile "
                            "written (shorten --warmup or lengthen the run)",
                            prefix, r.served));
  }
  return false;
}

void PrintDurableObjects(const EngineOutcome& outcome) {
  bool header = false;
  for (const ReplicaOutcome& r : outcome.replicas) {
    for (const DurableObjectReport& o : r.durable_objects) {
      if (!header) {
        fmt::print(
            "\nDurable Objects (each in an isolate of its own; heap used at the run's end; restarts: isolates made "
            "anew):\n");
        header = true;
      }
      fmt::print("  {}:{}  heap {}  {} request{}{}{}\n", o.binding, o.name.empty() ? o.id : o.name,
                 FormatValue(static_cast<int64_t>(o.heap_used_bytes), "bytes"), o.requests, o.requests == 1 ? "" : "s",
                 o.restarts == 0 ? "" : fmt::format("  {} restart{}", o.restarts, o.restarts == 1 ? "" : "s"),
                 outcome.replicas.size() > 1 ? "  (" + r.name + ")" : "");
    }
  }
}

}  // namespace heapprof::cli::report
