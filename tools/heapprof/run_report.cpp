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
#include "tools/heapprof/run_report_parts.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;
using report::Bytes;
using report::Label;
using report::PrintDurableObjects;
using report::PrintSummary;
using report::PrintTables;
using report::ReportLeakSession;
using report::ReportNoWindow;
using report::Seconds;
using report::WriteProfile;

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