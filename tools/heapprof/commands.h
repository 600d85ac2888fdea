// How the heapprof CLI is put together: each subcommand lives in its own file
// and defines one Register function, called from main.cpp. To add one, write
// tools/heapprof/<name>.cpp with `void Register<Name>(Commands&)`, declare it
// below and add it to kRegistrations in main.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/status.h"

namespace heapprof::cli {

// Process exit codes, the same for every subcommand.
enum ExitCode : int {
  kExitOk = 0,       // done
  kExitFailure = 1,  // the work failed: unreadable input, script error, heap limit...
  kExitUsage = 2,    // the command line is wrong: unknown flag, bad value, conflicting options
};

// The subcommands of one CLI::App; the chosen one's action runs after parsing.
class Commands {
 public:
  explicit Commands(CLI::App& app) : app_(app) {}
  // Adds a subcommand whose action returns the process exit code.
  CLI::App* Add(const std::string& name, const std::string& description, std::function<int()> action);
  // Runs the action of the subcommand the user chose.
  int RunChosen() const;

 private:
  CLI::App& app_;
  std::vector<std::pair<CLI::App*, std::function<int()>>> commands_;
};

void RegisterRun(Commands& commands);
void RegisterServe(Commands& commands);
void RegisterAttach(Commands& commands);
void RegisterTop(Commands& commands);
void RegisterFlamegraph(Commands& commands);
void RegisterDiff(Commands& commands);
void RegisterSymbolize(Commands& commands);

// Starts V8 for commands that run workers: the runtime's own flags
// (WorkerRuntimeV8Flags: workerd's tiers), inlining off unless
// `allow_inlining` (exact attribution), then the user's --v8-flag values
// (which override both), each of which the linked V8 must know.
Status InitializeWorkerV8(bool allow_inlining, const std::vector<std::string>& v8_flags);

// Prints "heapprof <command>: <message>" to stderr and returns kExitFailure.
int Fail(const std::string& command, const std::string& message);
int Fail(const std::string& command, const Status& status);
// Prints a usage error with a pointer to --help and returns kExitUsage.
int UsageError(const std::string& command, const std::string& message);

// Help for a profile argument: every reading command takes both formats
// (heapprof/core/formats.h tells them apart by content).
inline constexpr char kProfileArgHelp[] = "A profile: pprof (.pb.gz or uncompressed .pb) or Chrome .heapprofile JSON";

// The names of a worker's replicas in run and serve: the worker file's stem
// alone for one, else stem-0 ... stem-N-1; '-' (unlike the '#' they once had)
// needs no escaping in a URL (target=NAME, /@NAME/) or a file name.
std::vector<std::string> ReplicaNames(const std::string& worker, int replicas);
// --fetch-handler FILE, the same in run and serve.
void AddFetchHandlerOption(CLI::App* app, std::string& fetch_handler);
// A clear error when --fetch-handler names no regular file (empty: fine).
Status CheckFetchHandler(const std::string& fetch_handler);

}  // namespace heapprof::cli
