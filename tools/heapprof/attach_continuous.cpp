#include "tools/heapprof/attach_continuous.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/symbolizer.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/flag_values.h"
#include "tools/heapprof/interrupt.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How long the windows still queued when the run ends may take to reach the store.
constexpr std::chrono::milliseconds kPushDrain{10'000};

// The local file a target's script is, if any ("file:///a/b.mjs" -> "/a/b.mjs").
std::string LocalScript(const remote::InspectorTarget& target) {
  for (const std::string& s : {target.url, target.title}) {
    if (s.starts_with("file://")) return s.substr(7);
    if (s.starts_with("/")) return s;
  }
  return "";
}

}  // namespace

void AddAttachContinuousOptions(CLI::App* app, AttachContinuousFlags& flags) {
  app->add_option("--continuous")
      ->description(
          "Back-to-back windows of this length (each of --sample-types' windows) until Ctrl-C or "
          "--duration, each written to <dir of -o>/<target>-<start-time>.pb.gz or, with --push, pushed as "
          "it closes")
      ->type_name("DURATION")
      ->check(ParsedInto(&flags.every_ns, ParsePositiveDuration));
  AddPushOptions(app, flags.push);
}

std::string CheckAttachContinuous(const AttachContinuousFlags& flags, bool leaks, bool flamegraph) {
  if (std::string e = PushFlagsWithoutPush(flags.push); !e.empty()) return e;
  if (!flags.push.url.empty() && !flags.every_ns) {
    return "--push pushes each window of --continuous D as it closes: give the window's length, e.g. --continuous "
           "60s";
  }
  if (!flags.every_ns) return "";
  if (leaks) return "--leaks tracks one session of live snapshots and --continuous runs back-to-back windows: drop one";
  if (flamegraph) {
    return "--flamegraph writes the page of one window, and --continuous a file per window: drop --flamegraph and "
           "open any of them with `heapprof flamegraph FILE`";
  }
  return "";
}

remote::PushIdentity AttachIdentity(const remote::InspectorTarget& target, const std::string& runtime) {
  remote::PushIdentity id;
  const std::string script = LocalScript(target);
  std::string name = !script.empty() ? fs::path(script).stem().string() : target.title;
  id.service_name = name.empty() ? "unknown_service" : name;
  id.runtime = runtime.starts_with("node") ? "node" : runtime.find("workerd") != std::string::npos ? "workerd" : "v8";
  std::error_code ec;
  if (!script.empty() && fs::is_regular_file(script, ec)) {
    // The same short SHA-256 of the main module as serve and run label it with.
    id.version = IdentityOf("", script, id.runtime).version;
  }
  return id;
}

int AttachContinuous(remote::DevToolsSession& session, remote::RemoteWindowOptions options,
                     const AttachContinuousFlags& flags, const AttachContinuousRun& run,
                     const std::function<std::string()>& restore) {
  std::shared_ptr<remote::WindowPusher> push;
  if (!flags.push.url.empty()) {
    Result<std::shared_ptr<remote::WindowPusher>> started = StartPush("attach", flags.push, run.identity);
    if (!started.ok()) {
      if (std::string line = restore(); !line.empty()) fmt::print(stderr, "heapprof attach: {}\n", line);
      return UsageError("attach", started.status().message());
    }
    push = std::move(started).value();
  }
  fs::path dir = fs::path(run.output).parent_path();
  if (dir.empty()) dir = ".";
  const bool files = !push || flags.output_given;
  WindowOutputs outputs("attach", push, files ? dir.string() : "");

  const auto begun = Clock::now();
  auto over = [&] {
    return InterruptWatcher::received() != 0 ||
           (run.total_ns &&
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - begun).count() >= *run.total_ns);
  };
  options.window = std::chrono::nanoseconds(*flags.every_ns);
  options.stop = over;  // the open window ends there and is delivered
  options.on_window = {};
  fmt::print(
      stderr, "heapprof attach: back-to-back windows of {:g} s on {} {}{}\n",
      static_cast<double>(*flags.every_ns) / 1e9, options.target_name,
      run.total_ns ? fmt::format("for {:g} s", static_cast<double>(*run.total_ns) / 1e9) : std::string("until Ctrl-C"),
      push ? ", pushed to " + push->url() : "");
  std::fflush(stderr);
  SourceMapSearch search;
  search.map_dirs = run.map_dirs;
  search.roots = run.roots;
  FileSourceMapProvider maps(search);
  Status failure;
  size_t windows = 0;
  while (!over()) {
    Result<remote::RemoteProfile> profiled = remote::ProfileRemote(session, options);
    if (!profiled.ok()) {  // the target went away, or the protocol failed: the run ends here
      failure = profiled.status();
      break;
    }
    Profile& profile = profiled->profile;
    if (run.symbolize) {
      for (const std::string& w : Symbolize(profile, maps).warnings) {
        if (windows == 0) fmt::print(stderr, "heapprof attach: warning: {}\n", w);
      }
    }
    ++windows;
    outputs.Window(run.target_label, std::move(profile));
  }
  if (std::string line = restore(); !line.empty()) fmt::print(stderr, "heapprof attach: {}\n", line);
  if (!failure.ok()) {
    fmt::print(stderr, "heapprof attach: the windows ended: {}\n", failure.message());
    std::fflush(stderr);
  }
  outputs.Stop(kPushDrain);
  outputs.PrintSummary();
  if (!failure.ok() || !outputs.ok()) return kExitFailure;
  if (int signal = InterruptWatcher::received(); signal != 0 && run.total_ns) return InterruptedExitCode(signal);
  return kExitOk;
}

}  // namespace heapprof::cli
