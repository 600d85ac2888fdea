// heapprof attach --leaks: the session over the DevTools protocol
// (heapprof/remote/remote_leaks.h), its growth report and profile.
#include "tools/heapprof/attach_leaks.h"

#include <fmt/format.h>

#include "heapprof/core/leaks.h"
#include "heapprof/core/source_map_locator.h"
#include "heapprof/remote/remote_leaks.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/leaks_report.h"
#include "tools/heapprof/remote_report.h"

namespace heapprof::cli {

using remote::DevToolsSession;
using remote::InspectorTarget;

// --leaks: one sampling session without the include flags, polled at a
// cadence; the growth report at the end, the last snapshot as the profile.
int AttachLeaks(const AttachLeakArgs& args, DevToolsSession& session, const InspectorTarget& target,
                const std::string& runtime, uint64_t interval, std::chrono::nanoseconds duration) {
  remote::RemoteLeakOptions options;
  options.interval_bytes = interval;
  options.duration = duration;
  if (args.cadence_ns) options.cadence = std::chrono::nanoseconds(*args.cadence_ns);
  options.gc = !args.no_gc;
  options.command_timeout = args.timeout;
  options.target_name = target.title.empty() ? target.websocket_url : target.title;
  options.stop = [] { return InterruptWatcher::received() != 0; };
  options.on_snapshot = [&](size_t n, std::chrono::nanoseconds cadence) {
    if (n == 1) {
      fmt::print(stderr, "heapprof attach: leak session on {}: a live snapshot every {:g} s{} {}\n",
                 options.target_name, static_cast<double>(cadence.count()) / 1e9,
                 args.cadence_ns ? "" : " (100 x the first one's cost, at least 1 s)",
                 duration == std::chrono::nanoseconds::max()
                     ? std::string("until Ctrl-C")
                     : fmt::format("for {:g} s", static_cast<double>(duration.count()) / 1e9));
    }
  };
  LeakTracker tracker;
  Result<remote::RemoteLeakSession> tracked = remote::TrackRemoteLeaks(session, options, tracker);
  if (!tracked.ok()) return Fail("attach", tracked.status().message() + "\n(no profile written)");
  Result<LeakReport> leaks = tracker.Report();
  if (!leaks.ok()) return Fail("attach", leaks.status());
  if (!args.no_source_maps) {  // growing sites by their original file:line, as the tables name them
    SourceMapSearch search;
    search.map_dirs = args.map_dirs;
    search.roots = args.source_map_paths.empty() ? std::vector<std::string>{"."} : args.source_map_paths;
    FileSourceMapProvider maps(search);
    (void)SymbolizeLeakReport(leaks.value(), maps);  // the profile's own symbolization warns of unusable maps
  }
  RawSnapshot last = std::move(tracked->last);
  last.info.notes.push_back(fmt::format(
      "windows: a leak session of {} DevTools live snapshots (no include flags{}); inuse_* from the last, with each "
      "sample's age (numeric label age, seconds); alloc_* not measured",
      tracker.snapshots(), options.gc ? ", full GC before each" : ""));
  if (!runtime.empty()) last.info.notes.push_back("runtime: " + runtime);
  last.info.notes.push_back(fmt::format("snapshot_cost_ms: max {:.1f} total {:.1f}",
                                        static_cast<double>(tracked->snapshot_nanos_max) / 1e6,
                                        static_cast<double>(tracked->snapshot_nanos_total) / 1e6));
  Profile profile = BuildLeakProfile(last, tracker);
  AddLeakComments(profile, leaks.value(), static_cast<size_t>(args.top));
  RemoteReport report;
  report.command = "attach";
  report.output = args.output;
  report.flamegraph = args.flamegraph;
  report.sample_index = args.sample_index;
  report.types = remote::RemoteSampleTypes::kInuse;
  report.gc = !args.no_gc;
  report.symbolize = !args.no_source_maps;
  report.map_dirs = args.map_dirs;
  report.roots = args.source_map_paths.empty() ? std::vector<std::string>{"."} : args.source_map_paths;
  report.interval_bytes = interval;
  report.top = static_cast<size_t>(args.top);
  report.headline = fmt::format("Leak session on {}{} through the DevTools protocol", options.target_name,
                                runtime.empty() ? "" : " (" + runtime + ")");
  report.more_samples_hint = "Track longer (--duration) or at a smaller --interval";
  if (int code = ReportRemoteProfile(profile, report); code != kExitOk) return code;
  if (int code = PrintLeakReport("attach", leaks.value(), tracker, args.leaks_json, static_cast<size_t>(args.top));
      code != kExitOk) {
    return code;
  }
  if (tracked->interrupted) {
    fmt::print(stderr, "heapprof attach: interrupted; the report covers the session up to then\n");
    return InterruptedExitCode(InterruptWatcher::received());
  }
  return kExitOk;
}

}  // namespace heapprof::cli
