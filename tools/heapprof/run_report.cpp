// `heapprof run`'s report: files written, tables, one-line answers.
#include "tools/heapprof/run_report.h"

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

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

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

void PrintTables(const Profile& profile, const Plan& plan, bool near_limit, bool leaks = false) {
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

// --leaks: the growth report of one replica's session, its profile (the last
// snapshot's in-use samples with their age) and the JSON; false when
// something failed. A worker that reached its heap limit still gets the
// report of the session up to then, and -o gets the near-limit capture
// (every sample alive then) unless --on-heap-limit takes it.
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

// The report of one profiled replica's window; false when something failed.
bool ReportWindow(const Plan& plan, ReplicaOutcome& r, bool only_one, int signal, std::string& first_file) {
  if (plan.leaks) return ReportLeakSession(plan, r, only_one, signal, first_file);
  const std::string label = Label(plan, r);
  const std::string prefix = only_one ? "" : r.name + ": ";
  bool ok = r.failure.ok();

  if (r.heap_limit) {
    Fail("run", prefix + r.failure.message() + (r.served > 0 ? fmt::format(" (after {} requests)", r.served) : ""));
    bool captured = r.near_limit && r.near_limit->ok();
    if (!captured) {
      if (r.near_limit && r.window_opened && !r.near_limit->ok()) {
        Fail("run", prefix + "capturing the profile near the heap limit failed: " + r.near_limit->status().message());
        return false;
      }
      // ArrayBuffer memory (outside the V8 heap) can take the worker over its
      // limit while V8's heap is far from it: no near-limit capture then, but
      // the window closes normally, and its profile is the one to read.
      if (!(r.window_opened && r.window && r.window->ok())) {
        fmt::print(stderr, "No profile was written: the profiling window was not open when the limit was reached{}.\n",
                   plan.from_start ? "" : " (try --from-start or a shorter --warmup)");
        return false;
      }
      fmt::print(stderr, "(the profile of the window up to it is written below)\n");
    }
  } else if (!r.failure.ok()) {
    bool have = r.window && r.window->ok();
    std::string where = r.kind == WorkerKind::kNotLoaded ? "" : fmt::format("request #{}; ", r.served + 1);
    Fail("run", prefix + r.failure.message() +
                    fmt::format("\n({}{})", where,
                                have ? "the profile of the window up to it is written below" : "no profile written"));
    if (!have) return false;
  }

  // The near-limit capture: to --on-heap-limit's file, else to -o.
  if (r.near_limit && r.near_limit->ok()) {
    const std::string base = plan.on_heap_limit.empty() ? plan.output : plan.on_heap_limit;
    const std::string named = FileFor(base, r.name, only_one);
    std::string path;
    if (!WriteProfile(plan, named, r.near_limit->value(), /*already_symbolized=*/false, &path)) ok = false;
    if (!path.empty()) {
      fmt::print("{}Wrote the in-use profile captured near the heap limit to {}\n", prefix, path);
      if (first_file.empty()) first_file = path;
    }
    if (r.heap_limit || !r.window || !r.window->ok()) {
      PrintTables(r.near_limit->value().profile, plan, /*near_limit=*/true);
      return false;
    }
  }

  if (!r.window_opened) return ReportNoWindow(r, prefix, signal);
  if (plan.continuous_ns > 0) return ok && r.continuous_failed == 0;
  if (!r.window) return false;
  if (!r.window->ok()) {
    Fail("run", prefix + "the profiling window failed: " + r.window->status().message());
    return false;
  }
  if (signal != 0) {
    fmt::print(stderr,
               "heapprof run: {}interrupted by {} after {} requests; writing the profile of the window so far\n",
               prefix, SignalName(signal), r.served);
  }
  WindowProfile& window = r.window->value();
  // A write that fails (a full disk) still prints the tables below: the run's
  // answer is not lost with its file.
  std::string path;
  if (!WriteProfile(plan, FileFor(plan.output, r.name, only_one), window, false, &path)) ok = false;
  if (first_file.empty()) first_file = path;

  fmt::print("{}Profiled {} ({}): {} requests in {}\n", only_one ? "" : "\n", label, WorkerKindName(r.kind), r.served,
             Seconds(r.serving_ns));
  const int64_t window_ns = window.profile.duration_nanos;
  if (plan.from_start) {
    fmt::print("  window   from before the worker was loaded: start-up and {} requests, {}\n", r.window_requests,
               Seconds(window_ns));
  } else {
    fmt::print("  window   {} requests, {}, after a warm-up of {} requests\n", r.window_requests, Seconds(window_ns),
               r.window_opened_at);
  }
  fmt::print("  sampling one sample per {} allocated on average; values are estimates of the real totals\n",
             Bytes(plan.session.interval_bytes));
  if (plan.interval_auto) {
    fmt::print("           (--interval auto: {} gives a function holding 5 % of the {} heap limit ~100 samples)\n",
               Bytes(plan.session.interval_bytes), Bytes(plan.heap_limit_bytes));
  }
  fmt::print("  heap     {} used of the {} limit at the end\n", Bytes(r.heap.used_bytes), Bytes(r.heap.limit_bytes));
  if (!path.empty()) fmt::print("Wrote {}\n", path);
  if (!plan.flamegraph.empty()) {
    std::string page;
    if (!DeliverReported(
            "run", "flamegraph", FileFor(plan.flamegraph, r.name, only_one), FallbackDirs(plan.fallback_dir),
            [&](const std::string& p) { return WriteFlamegraph(window.profile, p, "heapprof run " + label); }, &page)) {
      ok = false;
    }
  }
  PrintTables(window.profile, plan, /*near_limit=*/false);
  PrintSummary(window.profile, plan, static_cast<int64_t>(r.window_requests));
  return ok;
}

// Each Durable Object that received events, with its isolate's heap and its
// requests. Each lives in an isolate of its own, apart from the worker's.
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

}  // namespace

int ReportRun(const Plan& plan, EngineOutcome& outcome) {
  const bool only_one = plan.profiled.size() == 1;
  bool all_ok = true;
  std::string first_file;
  for (ReplicaOutcome& r : outcome.replicas) {
    bool profiled = std::find(plan.profiled.begin(), plan.profiled.end(), r.name) != plan.profiled.end();
    if (profiled) {
      all_ok = ReportWindow(plan, r, only_one, outcome.signal, first_file) && all_ok;
    } else if (!r.failure.ok()) {
      Fail("run", r.name + " (not profiled): " + r.failure.message());
      all_ok = false;
    }
  }

  if (plan.replicas.size() > 1 || plan.continuous_ns > 0) {
    fmt::print("\n");
    for (const ReplicaOutcome& r : outcome.replicas) {
      bool profiled = std::find(plan.profiled.begin(), plan.profiled.end(), r.name) != plan.profiled.end();
      std::string near;
      if (r.near_limit && r.near_limit->ok()) {
        near = "; near heap limit: wrote " +
               FileFor(plan.on_heap_limit.empty() ? plan.output : plan.on_heap_limit, r.name, only_one);
      }
      fmt::print("{}: served {} requests{}{}{}\n", r.name, r.served, profiled ? "" : " (not profiled)",
                 r.failure.ok() ? "" : "; stopped: " + r.failure.message().substr(0, r.failure.message().find('\n')),
                 near);
    }
  }
  if (plan.continuous_ns > 0) {
    int written = 0, failed = 0;
    for (const ReplicaOutcome& r : outcome.replicas) {
      written += r.continuous_written;
      failed += r.continuous_failed;
    }
    fs::path dir = fs::path(plan.output).parent_path();
    if (plan.continuous_files) {
      fmt::print("Continuous: {} profile{} of {} ms windows written to {}/ ({} failed)\n", written,
                 written == 1 ? "" : "s", plan.continuous_ns / 1'000'000, dir.empty() ? "." : dir.string(), failed);
    } else {
      fmt::print("Continuous: {} window{} of {} ms closed ({} failed)\n", written, written == 1 ? "" : "s",
                 plan.continuous_ns / 1'000'000, failed);
    }
    if (plan.push) {  // the push's counters: sent, retried, refused, dropped, queued, last error
      fmt::print("{}\n", plan.push->Summary());
      if (!plan.push->AllPushed()) all_ok = false;
    }
    for (ReplicaOutcome& r : outcome.replicas) {
      if (!r.last_continuous || plan.top_rows == 0) continue;
      fmt::print("\nThe last window of {} ({}):", Label(plan, r), Seconds(r.last_continuous->profile.duration_nanos));
      PrintTables(r.last_continuous->profile, plan, /*near_limit=*/false);
      PrintSummary(r.last_continuous->profile, plan, 0);
    }
  }
  // What the requests came to, for every run: a profile of an error path is
  // only useful when the user knows it is one.
  RequestOutcomes requests;
  for (const ReplicaOutcome& r : outcome.replicas) requests.Merge(r.requests);
  if (std::string config = DescribeConfig(plan.config); !config.empty()) fmt::print("\n{}\n", config);
  if (!plan.fetch_handler.empty()) {
    fmt::print("\nSubrequests (fetch) answered by {} (--fetch-handler), in the worker's isolate\n", plan.fetch_handler);
  }
  PrintDurableObjects(outcome);
  if (requests.requests() > 0) {
    // The same folders as the profiles' maps: the worker's and --source-map-path.
    FileSourceMapProvider files(plan.source_maps);
    RuntimeSourceMapProvider maps(&files);
    fmt::print("\n{}", FormatOutcomes(requests, plan.symbolize ? &maps : nullptr));
    if (FailureVerdict verdict = JudgeFailures(requests, plan.max_failures); verdict.too_many) {
      Fail("run", verdict.message + (first_file.empty() ? "" : "; the profile is written all the same"));
      all_ok = false;
    }
  }
  if (!first_file.empty() && all_ok) {
    if (plan.leaks) {
      fmt::print(
          "\nMore: heapprof top {0} --cum    go tool pprof -top -tagfocus=age=60: {0}  (in use for a minute or "
          "more)\n",
          first_file);
    } else {
      fmt::print("\nMore: heapprof top {0} --cum    go tool pprof -top -sample_index=alloc_space {0}\n", first_file);
    }
  }
  if (outcome.signal != 0) {
    if (!first_file.empty() || plan.continuous_ns > 0) {
      fmt::print(stderr,
                 "heapprof run: the run was interrupted by {}; the windows ended early and what they held was "
                 "written\n",
                 SignalName(outcome.signal));
    }
    return InterruptedExitCode(outcome.signal);
  }
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace heapprof::cli
