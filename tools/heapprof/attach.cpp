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
namespace {

using remote::DevToolsSession;
using remote::InliningSwitch;
using remote::InspectorTarget;
using remote::Millis;

// How long the target runs after the deoptimization before the first window
// opens: hot code is optimized again (without inlining) by then, so the
// profile sees the target's steady code, not its interpreter. Measured with
// %GetOptimizationStatus under load (docs/remote.md, "Exact attribution by default").
constexpr int64_t kDefaultWarmupNs = 3'000'000'000;

struct AttachArgs {
  std::string target;
  std::string name;  // --target
  // Parsed once by the flags' checks (tools/heapprof/flag_values.h).
  std::optional<int64_t> duration_ns;  // empty: until Ctrl-C
  uint64_t interval_bytes = kDefaultIntervalBytes;
  std::string sample_types = "both";
  bool no_gc = false;
  std::string output = "heapprof-attach.pb.gz";
  std::string flamegraph;
  int top = 10;
  bool user_code = false;
  std::string sample_index;
  bool no_source_maps = false;
  std::vector<std::string> map_dirs;
  std::vector<std::string> source_map_paths;
  Millis timeout{30'000};
  bool allow_inlining = false;
  std::optional<std::chrono::milliseconds> warmup;  // after the deoptimization; empty: kDefaultWarmupNs
  bool leaks = false;
  std::optional<int64_t> cadence_ns;  // --cadence; empty: chosen by the first snapshot's cost
  std::string leaks_json;
  const CLI::Option* sample_types_option = nullptr;  // to tell an explicit --sample-types from its default
  const CLI::Option* output_option = nullptr;
  AttachContinuousFlags continuous;  // --continuous D, --push URL and its flags
};

std::string FlagList(const std::vector<std::string>& names, std::string_view prefix) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + std::string(prefix) + n;
  return out.empty() ? "none" : out;
}

// What attach changed in the target, undone once (Restore) on every path
// where the connection still works: the end of the windows, a failed
// window, Ctrl-C. A heapprof killed before that leaves a marker in the
// target that the next attach reads (exact_attribution.h).
struct ExactAttach {
  ExactAttach(DevToolsSession& s, Millis t) : session(s), timeout(t) {}
  ~ExactAttach() { (void)Restore(); }
  Status Restore() {
    if (done) return Status::Ok();
    done = true;
    if (switched.ToRestore().empty()) return Status::Ok();
    Result<remote::InliningRestore> r = remote::RestoreInlining(session, switched, timeout);
    if (!r.ok()) return r.status();
    restore_line = r->Describe(switched);
    return Status::Ok();
  }
  DevToolsSession& session;
  Millis timeout;
  InliningSwitch switched;
  bool deoptimized = false;
  bool done = false;
  std::string restore_line;
};
int Attach(const AttachArgs& args) {
  if (!args.leaks && (args.cadence_ns || !args.leaks_json.empty())) {
    return UsageError("attach", "--cadence and --leaks-json belong to --leaks");
  }
  if (args.leaks && args.sample_types_option && args.sample_types_option->count() > 0) {
    return UsageError("attach",
                      "--leaks profiles what stays alive (in-use) from one session; --sample-types does "
                      "not apply");
  }
  if (args.leaks && (args.allow_inlining || args.warmup)) {
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
  if (args.allow_inlining) {
    options.inlining_allowed = 1;
    options.notes.push_back("exact_attribution: no (--allow-inlining: the target's flags and code as they were)");
  } else {
    Result<InliningSwitch> switched =
        remote::SwitchInliningOff(session.value(), runtime, NoInliningFlags(), args.timeout);
    if (!switched.ok()) return Fail("attach", switched.status());
    exact.switched = switched.value();
    const InliningSwitch& sw = exact.switched;
    if (!sw.v8_version.empty()) options.notes.push_back("v8: " + sw.v8_version);
    if (runtime.empty()) options.runtime = sw.runtime;
    switch (sw.outcome) {
      case InliningSwitch::Outcome::kCannotSwitch: {
        options.inlining_allowed = -1;
        const std::string line = fmt::format(
            "inlining cannot be turned off in this target ({}): a function's "
            "allocations may be charged to its caller; for exact attribution {}",
            sw.why, sw.how);
        fmt::print(stderr, "heapprof attach: warning: {}\n", line);
        options.notes.push_back("exact_attribution: not possible: " + line);
        break;
      }
      case InliningSwitch::Outcome::kAlreadyOff:
        options.inlining_allowed = 0;
        options.notes.push_back(fmt::format(
            "exact_attribution: yes, the target's inlining flags were off already ({} changed nothing); nothing "
            "changed{}",
            FlagList(sw.no_effect, "--no-"),
            sw.adopted.empty() ? std::string()
                               : fmt::format(" (a previous heapprof attach had set {} and not restored them: "
                                             "restored at detach)",
                                             FlagList(sw.adopted, "--no-"))));
        break;
      case InliningSwitch::Outcome::kSwitchedOff: {
        if (Status d = remote::DeoptimizeAll(session.value(), args.timeout); !d.ok()) {
          if (d.code() != ErrorCode::kUnavailable || d.message().find("precise coverage") == std::string::npos) {
            return Fail("attach", d);
          }
          // Another tool's coverage: its optimized code stays; put the flags back and say so.
          Status restored = exact.Restore();
          if (!restored.ok()) return Fail("attach", restored);
          options.inlining_allowed = -1;
          const std::string line = fmt::format(
              "{}; inlining left as the target runs it: a function's allocations "
              "may be charged to its caller",
              d.message());
          fmt::print(stderr, "heapprof attach: warning: {}\n", line);
          options.notes.push_back("exact_attribution: not possible: " + line);
          break;
        }
        exact.deoptimized = true;
        options.inlining_allowed = 0;
        const int64_t warmup_ns = args.warmup ? std::chrono::nanoseconds(*args.warmup).count() : kDefaultWarmupNs;
        fmt::print(stderr,
                   "heapprof attach: inlining off: set {} in the target and deoptimized it; {:g} s of "
                   "warm-up before the window (restored at detach)\n",
                   FlagList(sw.changed, "--no-"), static_cast<double>(warmup_ns) / 1e9);
        const auto warm_start = std::chrono::steady_clock::now();
        if (warmup_ns > 0) {
          Status waited =
              session->Wait(std::chrono::nanoseconds(warmup_ns), [] { return InterruptWatcher::received() != 0; });
          if (!waited.ok()) return Fail("attach", waited.message() + "\n(no profile written)");
        }
        const double warmed = std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count();
        options.notes.push_back(fmt::format(
            "exact_attribution: yes: heapprof set {} (Runtime.evaluate, v8.setFlagsFromString), deoptimized "
            "every function (Profiler.startPreciseCoverage/stopPreciseCoverage) and let the code warm up {:.2f} s "
            "before the first window{}",
            FlagList(sw.changed, "--no-"), warmed,
            sw.no_effect.empty() ? std::string()
                                 : fmt::format("; {} changed nothing (off already, or not used by this V8)",
                                               FlagList(sw.no_effect, "--no-"))));
        if (int signal = InterruptWatcher::received(); signal != 0) {
          Status restored = exact.Restore();
          Fail("attach", fmt::format("interrupted by {} during the warm-up; {}; no profile written", SignalName(signal),
                                     restored.ok() ? exact.restore_line : restored.message()));
          return InterruptedExitCode(signal);
        }
        break;
      }
    }
  }
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
      [args] {
        args->continuous.output_given = args->output_option->count() > 0;
        return Attach(*args);
      });
  attach
      ->add_option("target", args->target,
                   "HOST:PORT of the inspector (its /json/list names the targets) or a target's ws:// URL")
      ->required();
  attach->add_option("--target", args->name, "Which listed target: its id or title (or part of its title or URL)");
  attach->add_option("--duration,-d")
      ->description("Length of each window, e.g. 10s (with --continuous: of the whole run) [default: until Ctrl-C]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->duration_ns, ParsePositiveDuration));
  attach->add_option("--interval")
      ->description("Mean bytes between samples, e.g. 512KiB, 64k, 1MiB")
      ->type_name("SIZE")
      ->check(ParsedInto(&args->interval_bytes, ParseInterval))
      ->default_str(DefaultIntervalText());
  attach->add_flag("--leaks", args->leaks,
                   "Track growth instead of one window: one sampling session (no include flags), a live snapshot "
                   "after a full GC every --cadence; at the end, per allocation site, the growth rate with its 95 % "
                   "interval and a verdict (growing, bounded, steady, unclear), and the time to the heap limit "
                   "(docs/statistics.md)");
  attach->add_option("--cadence")
      ->description("With --leaks: time between snapshots [default: 100 x the first snapshot's cost, >= 1 s]")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->cadence_ns, ParsePositiveDuration));
  attach->add_option("--leaks-json", args->leaks_json, "With --leaks: also write the growth report as JSON to FILE");
  args->sample_types_option =
      attach
          ->add_option("--sample-types", args->sample_types,
                       "inuse (one window, what stays alive), alloc (one window, every allocation) or both (two "
                       "back-to-back windows)")
          ->capture_default_str();
  attach->add_flag("--no-gc", args->no_gc,
                   "Skip the full GC before the in-use snapshot (garbage not yet collected then counts as in use)");
  args->output_option =
      attach->add_option("-o,--output", args->output, "Where to write the profile")->capture_default_str();
  AddAttachContinuousOptions(attach, args->continuous);
  attach->add_option("--flamegraph", args->flamegraph,
                     "Also write an interactive flamegraph page (HTML) of the profile");
  attach->add_option("--top", args->top, "Rows per table printed at the end (0: no tables)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  attach->add_flag("--user-code", args->user_code, kUserCodeHelp);
  attach->add_option("--sample-index", args->sample_index,
                     "Print only this table: inuse_space, alloc_space, inuse_objects or alloc_objects");
  attach->add_flag("--no-source-maps", args->no_source_maps,
                   "Keep the generated names and positions (by default the source maps of the scripts the target "
                   "reports are applied: sourceMappingURL comment, inline map or SCRIPT.map, under --source-map-path)");
  attach
      ->add_option("--source-map-path", args->source_map_paths,
                   "Read the scripts the target names, and their maps, only under DIR (repeatable) "
                   "[default: the current folder]")
      ->allow_extra_args(false);
  attach
      ->add_option("--maps", args->map_dirs,
                   "Also look for maps in DIR: DIR/<script>.map (for scripts named by module name, e.g. workerd's)")
      ->allow_extra_args(false);
  attach->add_flag("--allow-inlining", args->allow_inlining,
                   "Leave the target as it runs: by default heapprof turns its inlining flags off, deoptimizes it "
                   "once and lets it warm up before the window, and at detach restores the flags and deoptimizes "
                   "again (Node >= 20.16; workerd and older Node cannot be switched and are said so)");
  attach->add_option("--warmup")
      ->description(
          "After the deoptimization, how long the target runs before the first window opens (its hot "
          "code optimized again, without inlining); 0 for none")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->warmup, ParseRequestTimeout))
      ->default_str("3s");
  attach->add_option("--timeout")
      ->description(
          "How long to wait for each step of the target: the connection, the WebSocket handshake, "
          "each answer")
      ->type_name("DURATION")
      ->check(ParsedInto(&args->timeout, ParseTimeout))
      ->default_str("30s");
}

}  // namespace heapprof::cli
