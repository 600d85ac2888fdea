// `heapprof run --runtime workerd`'s report: the profile written, the tables,
// the requests' outcomes with the worker's own exceptions (run_workerd_parts.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "heapprof/core/file_io.h"
#include "heapprof/core/source_map_locator.h"
#include "heapprof/workload/outcomes.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/remote_report.h"
#include "tools/heapprof/run_workerd_parts.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

// "by status: 200 x3051, 404 x3", as the embedded runtime's report writes
// it, then what else the requests came to, each count saying what it counts.
std::string Histogram(const std::map<int, uint64_t>& statuses) {
  std::string out;
  for (const auto& [status, count] : statuses) {
    out += fmt::format("{}{} x{}", out.empty() ? "" : ", ", status, count);
  }
  return "by status: " + (out.empty() ? std::string("none") : out);
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

int ReportWorkerdRun(const RunArgs& args, const WorkerConfig& config, const WorkerdRunPlan& plan,
                     WorkerdRunResult& result) {
  Profile& profile = *result.profile;
  remote::WorkerdLoad& load = *result.load;
  const int64_t elapsed_ns = result.elapsed_ns;
  const uint64_t warmed = result.warmed;
  const int inlining = result.inlining;
  const std::string& output = plan.output;
  const uint64_t interval = plan.interval;
  const double max_failures = plan.max_failures;
  const RequestOutcomes outcomes = load.outcomes();
  std::string statuses = Histogram(outcomes.statuses());
  if (outcomes.timed_out() > 0) {
    statuses += "; " + Plural(outcomes.timed_out(), "request timed out", "requests timed out");
  }
  if (load.no_response() > 0) {
    statuses += "; " + Plural(load.no_response(), "request got no response", "requests got no response");
  }
  const uint64_t threw = outcomes.thrown() + outcomes.rejected() - load.no_response();
  if (threw > 0)
    statuses += "; " + Plural(threw, "request threw or rejected (workerd answered 500)",
                              "requests threw or rejected (workerd answered 500)");
  const uint64_t total = outcomes.requests();
  profile.comments.push_back(profile.AddString(fmt::format("responses {}", statuses)));
  // workerd names the module by its file name; point the frames at the file, for the source maps.
  const std::string absolute = fs::absolute(args.worker).lexically_normal().string();
  for (std::string& s : profile.strings) {
    if (s == result.module_name) s = absolute;
  }

  RemoteReport report;
  report.command = "run";
  report.output = output;
  report.fallback_dir = args.fallback_dir;
  report.flamegraph = args.flamegraph;
  report.sample_index = args.sample_index;
  report.types = plan.types;
  report.gc = !args.no_gc;
  report.symbolize = !args.no_source_maps;
  const fs::path worker_dir = fs::path(args.worker).parent_path();
  report.roots = {worker_dir.empty() ? std::string(".") : worker_dir.string()};
  report.roots.insert(report.roots.end(), args.source_map_paths.begin(), args.source_map_paths.end());
  report.interval_bytes = interval;
  report.top = static_cast<size_t>(std::max(args.top, 0));
  report.user_code = args.user_code;
  report.headline = fmt::format("Profiled {} in {}: {} requests in {:.2f} s", result.target_name, result.runtime, total,
                                static_cast<double>(elapsed_ns) / 1e9);
  report.details.push_back(fmt::format("warm-up  {} requests before the first window", warmed));
  if (load.extra_kicks() > 0) {
    report.details.push_back(fmt::format("{} beyond --requests {}: workerd's inspector waited that long for its GC",
                                         Plural(load.extra_kicks(), "request", "requests"), args.requests));
  }
  report.details.push_back(
      fmt::format("responses {}{}", statuses,
                  load.empty_bodies() > 0
                      ? "; " + Plural(load.empty_bodies(), "response had an empty body", "responses had an empty body")
                      : std::string()));
  report.details.push_back(fmt::format("inlining {} (workerd config v8Flags)", inlining == 0 ? "off" : "allowed"));
  if (!result.outbound.empty()) {
    report.details.push_back(
        fmt::format("subrequests answered by {} (--fetch-handler: every worker's globalOutbound)", result.outbound));
  }
  report.more_samples_hint = "Profile a longer window (--window)";
  int code = ReportRemoteProfile(profile, report);
  if (std::string described = DescribeConfig(config); !described.empty()) fmt::print("\n{}\n", described);
  if (total > 0) {
    // The worker's own exceptions with their stacks, mapped to its sources.
    SourceMapSearch search;
    search.roots = report.roots;
    FileSourceMapProvider maps(search);
    fmt::print("\n{}", FormatOutcomes(outcomes, report.symbolize ? &maps : nullptr));
  }
  if (outcomes.failed() > 0) {
    fmt::print(stderr, "heapprof run: {} of {} requests failed ({}); first errors:\n", outcomes.failed(), total,
               statuses);
    for (const remote::WorkerdLoad::Failure& f : load.first_failures())
      fmt::print(stderr, "  #{} {}\n", f.index + 1, f.text);
  }
  if (!args.responses_out.empty()) {
    std::string written;
    if (!DeliverReported(
            "run", "responses file", args.responses_out, FallbackDirs(args.fallback_dir),
            [&](const std::string& p) { return WriteFileAtomic(p, load.responses()); }, &written)) {
      return std::max(code, int{kExitFailure});
    }
  }
  if (code != kExitOk) return code;
  if (total == 0) return Fail("run", "no request was answered: the profile is of an idle worker");
  if (FailureVerdict verdict = JudgeFailures(outcomes, max_failures); verdict.too_many) {
    return Fail("run", verdict.message + "; the profile is written all the same");
  }
  if (int signal = InterruptWatcher::received(); signal != 0) return InterruptedExitCode(signal);
  return kExitOk;
}

}  // namespace heapprof::cli
