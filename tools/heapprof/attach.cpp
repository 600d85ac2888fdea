// `heapprof attach TARGET`: profile a V8 running in another process (workerd /
// `wrangler dev`, `node --inspect`, Chrome) through its DevTools inspector,
// write the pprof file and print what holds and what allocates the memory.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "heapprof/core/units.h"
#include "heapprof/remote/devtools_client.h"
#include "heapprof/remote/exact_attribution.h"
#include "heapprof/remote/remote_profiler.h"
#include "heapprof/v8/attribution.h"
#include "tools/heapprof/attach_args.h"
#include "tools/heapprof/attach_continuous.h"
#include "tools/heapprof/attach_leaks.h"
#include "tools/heapprof/attach_target.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/flag_values.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/remote_report.h"

namespace heapprof::cli {

using remote::DevToolsSession;
using remote::InspectorTarget;

int Attach(const AttachArgs& args) {
  if (!args.leaks && (args.cadence_ns || !args.leaks_json.empty())) {
    return UsageError("attach", "--cadence and --leaks-json belong to --leaks");
  }
  if (args.leaks && args.sample_types_option && args.sample_types_option->count() > 0) {
    return UsageError("attach",
                      "--leaks profiles what stays alive (in-use) from one session; --sample-types does "
                      "not apply");
  }
  if (args.leaks && (args.exact.allow_inlining || args.exact.warmup)) {
    return UsageError("attach",
                      "--leaks does not switch the target's inlining off yet; --allow-inlining and "
                      "--warmup do not apply to it");
  }
  if (args.leaks && !args.leaks_json.empty()) {
    if (Status s = CheckOutputs({}, {args.leaks_json}); !s.ok()) return Fail("attach", s);
  }
  if (std::string e = CheckAttachContinuous(args.continuous, args.leaks, !args.flamegraph.empty()); !e.empty()) {
    return UsageError("attach", e);
  }
  Result<remote::RemoteSampleTypes> types = remote::ParseSampleTypes(args.sample_types);
  if (!types.ok()) return UsageError("attach", types.status().message());
  if (Result<std::vector<int>> indexes = TableIndexes(args.sample_index); !indexes.ok()) {
    return UsageError("attach", indexes.status().message());
  }
  const uint64_t interval = args.interval_bytes;
  const bool until_interrupted = !args.duration_ns;
  const std::chrono::nanoseconds window = until_interrupted || args.continuous.every_ns
                                              ? std::chrono::nanoseconds::max()
                                              : std::chrono::nanoseconds(*args.duration_ns);
  const bool by_url = IsWebSocketUrl(args.target);
  if (Result<remote::HostPort> where = remote::ParseHostPort(args.target); !by_url && !where.ok()) {
    return UsageError("attach", where.status().message());
  }
  if (by_url && !args.name.empty()) {
    return UsageError("attach", "--target picks from a HOST:PORT's list; a ws:// URL names one target already");
  }
  if (Status s = CheckOutputs({}, {args.output, args.flamegraph}); !s.ok()) return Fail("attach", s);

  Result<InspectorTarget> target = ChooseTarget({args.target, args.name, args.timeout});
  if (!target.ok()) return Fail("attach", target.status());
  // The runtime, by the inspector's /json/version (for a ws:// URL, of its HOST:PORT).
  std::string runtime;
  if (Result<remote::HostPort> where = InspectorOf(args.target); where.ok()) {
    if (Result<std::string> version = remote::InspectorVersion(where.value(), args.timeout); version.ok()) {
      runtime = version.value();
    }
  }
  Result<DevToolsSession> session = DevToolsSession::Connect(target->websocket_url, args.timeout);
  if (!session.ok()) return Fail("attach", session.status());

  InterruptWatcher interrupts([] {});
  if (args.leaks) {
    AttachLeakArgs leak_args{args.cadence_ns,     args.no_gc,    args.timeout,         args.top,
                             args.leaks_json,     args.output,   args.flamegraph,      args.sample_index,
                             args.no_source_maps, args.map_dirs, args.source_map_paths};
    return AttachLeaks(leak_args, session.value(), *target, runtime, interval, window);
  }
  remote::RemoteWindowOptions options;
  options.interval_bytes = interval;
  options.window = window;
  options.types = types.value();
  options.gc_before_inuse = !args.no_gc;
  options.command_timeout = args.timeout;
  options.target_name = target->title.empty() ? target->websocket_url : target->title;
  options.runtime = runtime;
  // Before anything changes in the target: a sampler someone else holds ends the command here.
  if (Status s = remote::CheckSamplerFree(session.value(), args.timeout); !s.ok()) return Fail("attach", s);

  // Exact attribution: inlining off, one deoptimization, a warm-up; undone at detach.
  ExactAttach exact(session.value(), args.timeout);
  if (int code = SwitchToExactAttribution(args.exact, runtime, options, exact); code != kExitOk) return code;
  if (args.continuous.every_ns) {  // back-to-back windows, each pushed or written as it closes
    AttachContinuousRun run;
    run.identity = AttachIdentity(*target, options.runtime);
    run.target_label = IsWebSocketUrl(args.target) ? target->id : args.target;  // HOST:PORT
    run.output = args.output;
    run.symbolize = !args.no_source_maps;
    run.map_dirs = args.map_dirs;
    run.roots = args.source_map_paths.empty() ? std::vector<std::string>{"."} : args.source_map_paths;
    run.total_ns = args.duration_ns;
    return AttachContinuous(session.value(), options, args.continuous, run, [&exact]() -> std::string {
      Status restored = exact.Restore();
      return restored.ok() ? exact.restore_line
                           : "warning: could not restore the target's inlining flags: " + restored.message();
    });
  }
  // Until Ctrl-C: the first signal ends the (first) window; the in-use window
  // of --sample-types both then runs as long, with no way to cut it short
  // but a second signal, which ends heapprof at once.
  bool second_window = false;
  options.stop = [&] { return InterruptWatcher::received() != 0 && !(until_interrupted && second_window); };
  const std::string how_long = until_interrupted
                                   ? std::string("until Ctrl-C")
                                   : fmt::format("for {:g} s", static_cast<double>(*args.duration_ns) / 1e9);
  options.on_window = [&](std::string_view kind) {
    bool inuse = kind == "inuse";
    if (inuse && types.value() == remote::RemoteSampleTypes::kBoth) {
      second_window = true;
      fmt::print(stderr,
                 "heapprof attach: in-use window open for as long again (what the target allocates and "
                 "keeps){}\n",
                 until_interrupted ? "; a second Ctrl-C ends heapprof without a profile" : "");
    } else {
      fmt::print(stderr, "heapprof attach: {} window open {} on {}\n", inuse ? "in-use" : "allocation", how_long,
                 options.target_name);
    }
  };

  Result<remote::RemoteProfile> profiled = remote::ProfileRemote(session.value(), options);
  // Detach: the target's own flags and optimization again, before the report.
  Status restored = exact.Restore();
  if (!profiled.ok()) {
    return Fail("attach", profiled.status().message() + "\n(no profile written)" +
                              (exact.restore_line.empty() ? "" : "\n(" + exact.restore_line + ")"));
  }
  Profile& profile = profiled->profile;
  if (!restored.ok()) {
    fmt::print(stderr, "heapprof attach: warning: could not restore the target's inlining flags: {}\n",
               restored.message());
    profile.comments.push_back(
        profile.AddString("detach: the inlining flags could not be restored: " + restored.message()));
  } else if (!exact.restore_line.empty()) {
    fmt::print(stderr, "heapprof attach: {}\n", exact.restore_line);
    profile.comments.push_back(profile.AddString("detach: " + exact.restore_line));
  }
  RemoteReport report;
  report.command = "attach";
  report.output = args.output;
  report.flamegraph = args.flamegraph;
  report.sample_index = args.sample_index;
  report.types = types.value();
  report.gc = !args.no_gc;
  report.symbolize = !args.no_source_maps;
  report.map_dirs = args.map_dirs;
  // The target names its scripts; they (and their maps) are read only under these folders.
  report.roots = args.source_map_paths.empty() ? std::vector<std::string>{"."} : args.source_map_paths;
  report.interval_bytes = interval;
  report.top = static_cast<size_t>(args.top);
  report.user_code = args.user_code;
  report.headline = fmt::format("Profiled {}{} through the DevTools protocol", options.target_name,
                                runtime.empty() ? "" : " (" + runtime + ")");
  report.more_samples_hint = "Profile a longer window (--duration) while the target is busy";
  if (options.inlining_allowed == 0) {
    report.details.push_back("inlining off in the target during the windows (exact attribution; restored at detach)");
  }
  if (int code = ReportRemoteProfile(profile, report); code != kExitOk) return code;
  if (int signal = InterruptWatcher::received(); signal != 0 && !until_interrupted) {
    fmt::print(stderr, "heapprof attach: interrupted by {}; {} holds the window{} up to then\n", SignalName(signal),
               args.output, profiled->inuse_window_skipped ? " (allocations only: the in-use window never ran)" : "");
    return InterruptedExitCode(signal);
  }
  return kExitOk;
}

}  // namespace heapprof::cli
