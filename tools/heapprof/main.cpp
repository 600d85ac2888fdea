// heapprof: the command-line front end. Parses the command line with CLI11
// and runs the chosen subcommand; exit codes are in commands.h.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include "heapprof/core/version.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"
#include "tools/heapprof/commands.h"

namespace {

// Every subcommand, in the order `heapprof --help` lists them.
constexpr void (*kRegistrations[])(heapprof::cli::Commands&) = {
    heapprof::cli::RegisterRun,       heapprof::cli::RegisterServe,      heapprof::cli::RegisterAttach,
    heapprof::cli::RegisterTop,       heapprof::cli::RegisterFlamegraph, heapprof::cli::RegisterDiff,
    heapprof::cli::RegisterSymbolize,
};

}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, which the
  // outputs report and fall back from, instead of killing the process with
  // the profile unwritten.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{
      "heapprof: a heap allocation profiler for V8. It samples the allocations of JavaScript code in an\n"
      "embedded isolate and writes standard pprof heap profiles (alloc_space, inuse_space, ...) that\n"
      "`go tool pprof`, Pyroscope and speedscope open. Start with:\n"
      "  heapprof run examples/workers/prometheus-leak.js",
      "heapprof"};
  app.set_version_flag("--version",
                       fmt::format("heapprof {} (embedded V8 {}, sampling strategy {})", heapprof::kVersion,
                                   heapprof::V8RuntimeVersion(), heapprof::CompiledStrategy()));
  app.require_subcommand(1);
  app.fallthrough(false);
  heapprof::cli::Commands commands(app);
  for (auto* registration : kRegistrations) registration(commands);
  // CLI11 would call an unknown command a missing one; name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      fmt::print(stderr, "heapprof: unknown command \"{}\" (commands: {})\nRun with --help for more information.\n",
                 argv[1], names);
      return heapprof::cli::kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and --version exit 0; everything else the parser rejects is a usage error.
    return app.exit(e) == 0 ? heapprof::cli::kExitOk : heapprof::cli::kExitUsage;
  }
  int code = heapprof::cli::kExitOk;
  try {
    code = commands.RunChosen();
  } catch (const std::system_error& e) {  // fmt::print failed: stdout or stderr is unwritable
    std::fprintf(stderr, "heapprof: cannot write the output: %s\n", e.what());
    return heapprof::cli::kExitFailure;
  }
  // A full disk or a closed descriptor behind stdout is a failure, not a silent success.
  errno = 0;
  bool flushed = std::fflush(stdout) == 0;
  if (!flushed || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "heapprof: cannot write to standard output: %s\n",
                 flushed ? "an earlier write failed" : std::strerror(errno));
    if (code == heapprof::cli::kExitOk) code = heapprof::cli::kExitFailure;
  }
  return code;
}
