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

#include "heapprof/remote/devtools_client.h"
#include "heapprof/remote/remote_profiler.h"
#include "heapprof/units.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/flag_values.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/remote_report.h"

namespace heapprof::cli {
namespace {

using remote::DevToolsSession;
using remote::InspectorTarget;
using remote::Millis;

constexpr Millis kConnectTimeout{5000};

struct AttachArgs {
  std::string target;
  std::string name;  // --target
  // Parsed once by the flags' checks (tools/heapprof/flag_values.h).
  std::optional<int64_t> duration_ns;  // empty: until Ctrl-C
  uint64_t interval_bytes = 512 * 1024;
  std::string sample_types = "both";
  bool no_gc = false;
  std::string output = "heapprof-attach.pb.gz";
  std::string flamegraph;
  int top = 10;
  std::string sample_index;
  bool no_source_maps = false;
  std::vector<std::string> map_dirs;
  std::vector<std::string> source_map_paths;
  Millis timeout{30'000};
};

std::string TargetLine(const InspectorTarget& t) {
  return fmt::format("  {}  {}{}", t.id.empty() ? "(no id)" : t.id, t.title,
                     t.url.empty() ? "" : "  (" + t.url + ")");
}

// TARGET names a WebSocket URL rather than HOST:PORT (devtools_client refuses wss:// with a reason).
bool IsWebSocketUrl(const std::string& target) { return target.starts_with("ws://") || target.starts_with("wss://"); }

// The target's WebSocket URL: the one listed (chosen by --target), or TARGET itself.
Result<InspectorTarget> ChooseTarget(const AttachArgs& args) {
  if (IsWebSocketUrl(args.target)) {
    return InspectorTarget{"", args.target, "", "", args.target};
  }
  Result<remote::HostPort> where = remote::ParseHostPort(args.target);
  if (!where.ok()) return where.status();
  Result<std::vector<InspectorTarget>> listed = remote::ListTargets(where.value(), kConnectTimeout);
  if (!listed.ok()) return listed.status();
  std::vector<InspectorTarget> targets;
  for (InspectorTarget& t : listed.value()) {
    if (!t.websocket_url.empty()) targets.push_back(std::move(t));  // one without a URL has a debugger attached
  }
  std::string list;
  for (const InspectorTarget& t : targets) list += "\n" + TargetLine(t);
  if (targets.empty()) {
    return Error(ErrorCode::kNotFound, fmt::format("{} lists no target to attach to (a debugger may hold it)",
                                                   args.target));
  }
  if (args.name.empty()) {
    if (targets.size() == 1) return targets.front();
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{} lists {} targets; pick one with --target ID or --target TITLE:{}", args.target,
                             targets.size(), list));
  }
  std::vector<InspectorTarget> exact, partial;
  for (const InspectorTarget& t : targets) {
    if (t.id == args.name || t.title == args.name) exact.push_back(t);
    else if (t.title.find(args.name) != std::string::npos || t.url.find(args.name) != std::string::npos) {
      partial.push_back(t);
    }
  }
  const std::vector<InspectorTarget>& chosen = exact.empty() ? partial : exact;
  if (chosen.size() == 1) return chosen.front();
  return Error(chosen.empty() ? ErrorCode::kNotFound : ErrorCode::kInvalidArgument,
               fmt::format("{} targets at {} match --target {}; the targets are:{}", chosen.size(), args.target,
                           args.name, list));
}

int Attach(const AttachArgs& args) {
  Result<remote::RemoteSampleTypes> types = remote::ParseSampleTypes(args.sample_types);
  if (!types.ok()) return UsageError("attach", types.status().message());
  if (Result<std::vector<int>> indexes = TableIndexes(args.sample_index); !indexes.ok()) {
    return UsageError("attach", indexes.status().message());
  }
  const uint64_t interval = args.interval_bytes;
  const bool until_interrupted = !args.duration_ns;
  const std::chrono::nanoseconds window =
      until_interrupted ? std::chrono::nanoseconds::max() : std::chrono::nanoseconds(*args.duration_ns);
  const bool by_url = IsWebSocketUrl(args.target);
  if (Result<remote::HostPort> where = remote::ParseHostPort(args.target); !by_url && !where.ok()) {
    return UsageError("attach", where.status().message());
  }
  if (by_url && !args.name.empty()) {
    return UsageError("attach", "--target picks from a HOST:PORT's list; a ws:// URL names one target already");
  }
  if (Status s = CheckOutputs({}, {args.output, args.flamegraph}); !s.ok()) return Fail("attach", s);

  Result<InspectorTarget> target = ChooseTarget(args);
  if (!target.ok()) return Fail("attach", target.status());
  std::string runtime;
  if (Result<remote::HostPort> where = remote::ParseHostPort(args.target); where.ok()) {
    if (Result<std::string> version = remote::InspectorVersion(where.value(), kConnectTimeout); version.ok()) {
      runtime = version.value();
    }
  }
  Result<DevToolsSession> session = DevToolsSession::Connect(target->websocket_url, kConnectTimeout);
  if (!session.ok()) return Fail("attach", session.status());

  InterruptWatcher interrupts([] {});
  remote::RemoteWindowOptions options;
  options.interval_bytes = interval;
  options.window = window;
  options.types = types.value();
  options.gc_before_inuse = !args.no_gc;
  options.command_timeout = args.timeout;
  options.target_name = target->title.empty() ? target->websocket_url : target->title;
  options.runtime = runtime;
  // Until Ctrl-C: the first signal ends the (first) window; the in-use window
  // of --sample-types both then runs as long, with no way to cut it short
  // but a second signal, which ends heapprof at once.
  bool second_window = false;
  options.stop = [&] { return InterruptWatcher::received() != 0 && !(until_interrupted && second_window); };
  const std::string how_long =
      until_interrupted ? std::string("until Ctrl-C")
                        : fmt::format("for {:g} s", static_cast<double>(*args.duration_ns) / 1e9);
  options.on_window = [&](std::string_view kind) {
    bool inuse = kind == "inuse";
    if (inuse && types.value() == remote::RemoteSampleTypes::kBoth) {
      second_window = true;
      fmt::print(stderr, "heapprof attach: in-use window open for as long again (what the target allocates and "
                         "keeps){}\n",
                 until_interrupted ? "; a second Ctrl-C ends heapprof without a profile" : "");
    } else {
      fmt::print(stderr, "heapprof attach: {} window open {} on {}\n", inuse ? "in-use" : "allocation", how_long,
                 options.target_name);
    }
  };

  Result<remote::RemoteProfile> profiled = remote::ProfileRemote(session.value(), options);
  if (!profiled.ok()) {
    return Fail("attach", profiled.status().message() + "\n(no profile written)");
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
  report.headline = fmt::format("Profiled {}{} through the DevTools protocol", options.target_name,
                                runtime.empty() ? "" : " (" + runtime + ")");
  report.more_samples_hint = "Profile a longer window (--duration) while the target is busy";
  if (int code = ReportRemoteProfile(profiled->profile, report); code != kExitOk) return code;
  if (int signal = InterruptWatcher::received(); signal != 0 && !until_interrupted) {
    fmt::print(stderr, "heapprof attach: interrupted by {}; {} holds the window{} up to then\n", SignalName(signal),
               args.output, profiled->inuse_window_skipped ? " (allocations only: the in-use window never ran)" : "");
    return InterruptedExitCode(signal);
  }
  return kExitOk;
}

}  // namespace

void RegisterAttach(Commands& commands) {
  auto args = std::make_shared<AttachArgs>();
  CLI::App* attach = commands.Add(
      "attach",
      "Profile the heap of a V8 running in another process through its DevTools inspector: workerd and "
      "`wrangler dev` (--inspector-addr, port 9229 by default), `node --inspect`, Chrome.\n"
      "The protocol samples either every allocation or what stays alive per window, so by default two "
      "back-to-back windows of the same length are profiled: alloc_* from the first, inuse_* from the second "
      "(see --sample-types). Writes the same pprof file, tables and flamegraph as `heapprof run`.",
      [args] { return Attach(*args); });
  attach->add_option("target", args->target,
                     "HOST:PORT of the inspector (its /json/list names the targets) or a target's ws:// URL")
      ->required();
  attach->add_option("--target", args->name, "Which listed target: its id or title (or part of its title or URL)");
  attach->add_option("--duration,-d")
      ->description("Length of each window, e.g. 10s [default: until Ctrl-C]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->duration_ns, ParsePositiveDuration));
  attach->add_option("--interval")
      ->description("Mean bytes between samples, e.g. 512KiB, 64k, 1MiB")
      ->type_name("SIZE")
      ->check(ParsedInto(&args->interval_bytes, ParseInterval))
      ->default_str("512KiB");
  attach->add_option("--sample-types", args->sample_types,
                     "inuse (one window, what stays alive), alloc (one window, every allocation) or both (two "
                     "back-to-back windows)")
      ->capture_default_str();
  attach->add_flag("--no-gc", args->no_gc,
                   "Skip the full GC before the in-use snapshot (garbage not yet collected then counts as in use)");
  attach->add_option("-o,--output", args->output, "Where to write the profile")->capture_default_str();
  attach->add_option("--flamegraph", args->flamegraph, "Also write an interactive flamegraph page (HTML) of the profile");
  attach->add_option("--top", args->top, "Rows per table printed at the end (0: no tables)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  attach->add_option("--sample-index", args->sample_index,
                     "Print only this table: inuse_space, alloc_space, inuse_objects or alloc_objects");
  attach->add_flag("--no-source-maps", args->no_source_maps,
                   "Keep the generated names and positions (by default the source maps of the scripts the target "
                   "reports are applied: sourceMappingURL comment, inline map or SCRIPT.map, under --source-map-path)");
  attach->add_option("--source-map-path", args->source_map_paths,
                     "Read the scripts the target names, and their maps, only under DIR (repeatable) "
                     "[default: the current folder]")
      ->allow_extra_args(false);
  attach->add_option("--maps", args->map_dirs,
                     "Also look for maps in DIR: DIR/<script>.map (for scripts named by module name, e.g. workerd's)")
      ->allow_extra_args(false);
  attach->add_option("--timeout")
      ->description("How long to wait for each answer of the target")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->timeout, ParseTimeout))
      ->default_str("30s");
}

}  // namespace heapprof::cli
