// `heapprof run --leaks`'s report of one replica's session (run_report_parts.h).
#include <fmt/format.h>

#include <filesystem>
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

namespace fs = std::filesystem;

bool ReportLeakSession(const Plan& plan, ReplicaOutcome& r, bool only_one, int signal, std::string& first_file) {
  const std::string label = Label(plan, r);
  const std::string prefix = only_one ? "" : r.name + ": ";
  bool ok = r.failure.ok();
  if (r.heap_limit) {
    Fail("run", prefix + r.failure.message() + (r.served > 0 ? fmt::format(" (after {} requests)", r.served) : ""));
  } else if (!r.failure.ok()) {
    std::string where = r.kind == WorkerKind::kNotLoaded ? "" : fmt::format("request #{}; ", r.served + 1);
    Fail("run", prefix + r.failure.message() +
                    fmt::format("\n({}{})", where,
                                r.leaks ? "the leak session up to it is reported below" : "no profile written"));
  }
  bool output_taken = false;  // -o holds the near-limit capture
  if (r.near_limit && r.near_limit->ok()) {
    const std::string base = plan.on_heap_limit.empty() ? plan.output : plan.on_heap_limit;
    std::string path;
    if (!WriteProfile(plan, FileFor(base, r.name, only_one), r.near_limit->value(), false, &path)) ok = false;
    if (!path.empty()) {
      fmt::print("{}Wrote the in-use profile captured near the heap limit to {}\n", prefix, path);
      if (first_file.empty()) first_file = path;
    }
    // When the limit was reached (the worker ends a little later: the capture raised the limit for itself).
    fmt::print("{}The heap reached its limit after {} requests\n", prefix, r.near_limit_requests);
    output_taken = plan.on_heap_limit.empty();
  } else if (r.near_limit) {
    Fail("run", prefix + "capturing the profile near the heap limit failed: " + r.near_limit->status().message());
    ok = false;
  }
  if (!r.window_opened || !r.leaks) return ReportNoWindow(r, prefix, signal);
  const heapprof::LeakSession& session = *r.leaks;
  const LeakSessionStats stats = session.stats();
  if (!stats.failure.ok()) {
    Fail("run", prefix + "a snapshot of the leak session failed: " + stats.failure.message());
    ok = false;
  }
  if (stats.snapshots < 2) {
    Fail("run", fmt::format("{}the leak session took {} snapshot{}; a growth report needs two (lengthen the run, or "
                            "a shorter --cadence)",
                            prefix, stats.snapshots, stats.snapshots == 1 ? "" : "s"));
    return false;
  }
  Result<LeakReport> leaks = session.Report();
  if (!leaks.ok()) {
    Fail("run", prefix + "the growth report: " + leaks.status().message());
    return false;
  }
  if (plan.symbolize) {  // growing sites by their original file:line, as the tables name them
    FileSourceMapProvider files(plan.source_maps);
    RuntimeSourceMapProvider maps(&files);
    (void)SymbolizeLeakReport(leaks.value(), maps);
  }
  if (signal != 0) {
    fmt::print(stderr, "heapprof run: {}interrupted by {} after {} requests; reporting the leak session so far\n",
               prefix, SignalName(signal), r.served);
  }
  Result<Profile> last = session.LastProfile();
  if (!last.ok()) {
    Fail("run", prefix + last.status().message());
    return false;
  }
  WindowProfile window{r.name, std::move(last).value(), ""};
  auto note = [&](const std::string& text) { window.profile.comments.push_back(window.profile.AddString(text)); };
  note(fmt::format(
      "windows: a leak session of {} live snapshots of the always-on sampler{}; inuse_* from the last, with each "
      "sample's age (numeric label age, seconds); alloc_* not measured",
      stats.snapshots, plan.session.gc_before_snapshot ? " (full GC before each)" : ""));
  note(fmt::format("snapshot_cost_ms: max {:.1f} total {:.1f}", static_cast<double>(stats.snapshot_nanos_max) / 1e6,
                   static_cast<double>(stats.snapshot_nanos_total) / 1e6));

  AddLeakComments(window.profile, leaks.value(), plan.top_rows);
  std::string path;
  if (!output_taken) {
    if (!WriteProfile(plan, FileFor(plan.output, r.name, only_one), window, false, &path)) ok = false;
    if (first_file.empty()) first_file = path;
  } else if (plan.symbolize) {  // not written (-o holds the near-limit capture), but its tables are printed
    FileSourceMapProvider files(plan.source_maps);
    RuntimeSourceMapProvider maps(&files);
    for (const std::string& w : Symbolize(window.profile, maps).warnings) {
      fmt::print(stderr, "heapprof run: warning: {}\n", w);
    }
  }

  fmt::print("{}Leak session on {} ({}): {} requests in {}\n", only_one ? "" : "\n", label, WorkerKindName(r.kind),
             r.served, Seconds(r.serving_ns));
  fmt::print("  session  {} live snapshots over {}, one every {}{}, {}\n", stats.snapshots,
             Seconds(stats.session_nanos), Seconds(stats.cadence.count()),
             plan.session.gc_before_snapshot ? " after a full GC" : "",
             plan.from_start ? std::string("from before the worker was loaded")
                             : fmt::format("after a warm-up of {} requests", r.window_opened_at));
  const double share = stats.session_nanos > 0 ? static_cast<double>(stats.snapshot_nanos_total) /
                                                     static_cast<double>(stats.session_nanos) * 100
                                               : 0;
  fmt::print(
      "  cost     the snapshots paused the worker {:.1f} ms in all ({:.2f} % of the session), the slowest "
      "{:.1f} ms\n",
      static_cast<double>(stats.snapshot_nanos_total) / 1e6, share,
      static_cast<double>(stats.snapshot_nanos_max) / 1e6);
  fmt::print("  sampling one sample per {} allocated on average; values are estimates of the real totals\n",
             Bytes(plan.session.interval_bytes));
  fmt::print("  heap     {} used of the {} limit at the end\n", Bytes(r.heap.used_bytes), Bytes(r.heap.limit_bytes));
  if (!path.empty()) fmt::print("Wrote {}\n", path);
  if (!plan.flamegraph.empty() && !output_taken) {
    std::string page;
    if (!DeliverReported(
            "run", "flamegraph", FileFor(plan.flamegraph, r.name, only_one), FallbackDirs(plan.fallback_dir),
            [&](const std::string& p) { return WriteFlamegraph(window.profile, p, "heapprof run " + label); }, &page)) {
      ok = false;
    }
  }
  PrintTables(window.profile, plan, /*near_limit=*/false, /*leaks=*/true);
  const std::string json = plan.leaks_json.empty() ? std::string() : FileFor(plan.leaks_json, r.name, only_one);
  if (session.WithTracker([&](const LeakTracker& tracker) {
        return PrintLeakReport("run", leaks.value(), tracker, json, plan.top_rows);
      }) != kExitOk) {
    ok = false;
  }
  return ok;
}

}  // namespace heapprof::cli::report
