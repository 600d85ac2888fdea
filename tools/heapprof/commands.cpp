// The pieces every subcommand shares: dispatch, error reporting, validators.
#include "tools/heapprof/commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "heapprof/core/units.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/v8_host.h"

namespace heapprof::cli {

CLI::App* Commands::Add(const std::string& name, const std::string& description, std::function<int()> action) {
  CLI::App* sub = app_.add_subcommand(name, description);
  commands_.emplace_back(sub, std::move(action));
  return sub;
}

int Commands::RunChosen() const {
  for (const auto& [sub, action] : commands_) {
    if (sub->parsed()) return action();
  }
  std::fputs("heapprof: choose a subcommand (see heapprof --help)\n", stderr);
  return kExitUsage;
}

std::vector<std::string> ReplicaNames(const std::string& worker, int replicas) {
  std::string stem = std::filesystem::path(worker).stem().string();
  if (stem.empty()) stem = "worker";
  if (replicas == 1) return {stem};
  std::vector<std::string> names;
  for (int i = 0; i < replicas; ++i) names.push_back(fmt::format("{}-{}", stem, i));
  return names;
}

Status InitializeWorkerV8(bool allow_inlining, const std::vector<std::string>& v8_flags) {
  V8InitOptions v8_options;
  v8_options.flags = WorkerRuntimeV8Flags(allow_inlining);
  v8_options.flags.insert(v8_options.flags.end(), v8_flags.begin(), v8_flags.end());
  if (Status s = InitializeV8(v8_options); !s.ok()) return s;
  for (const std::string& flag : V8UnknownFlags()) {
    if (std::find(v8_flags.begin(), v8_flags.end(), flag) != v8_flags.end()) {
      return Error(ErrorCode::kInvalidArgument, "V8 " + V8RuntimeVersion() + " does not know the flag " + flag);
    }
  }
  return Status::Ok();
}

int Fail(const std::string& command, const std::string& message) {
  fmt::print(stderr, "heapprof {}: {}\n", command, message);
  return kExitFailure;
}

int Fail(const std::string& command, const Status& status) { return Fail(command, status.message()); }

int UsageError(const std::string& command, const std::string& message) {
  fmt::print(stderr, "heapprof {}: {}\nRun with --help for more information.\n", command, message);
  return kExitUsage;
}

void AddFetchHandlerOption(CLI::App* app, std::string& fetch_handler) {
  app->add_option("--fetch-handler", fetch_handler,
                  "A module whose default export's fetch(request) answers the worker's fetch() subrequests with a "
                  "Response (it runs in the worker's isolate; with run --runtime workerd, a worker of its own, every "
                  "worker's globalOutbound) [default: none: fetch() rejects, there is no network; with --runtime "
                  "workerd, workerd's own network]");
}

Status CheckFetchHandler(const std::string& fetch_handler) {
  if (fetch_handler.empty() || std::filesystem::is_regular_file(fetch_handler)) return Status::Ok();
  return Error(ErrorCode::kNotFound, std::filesystem::exists(fetch_handler)
                                         ? "--fetch-handler: " + fetch_handler + " is not a file"
                                         : "--fetch-handler: no such file: " + fetch_handler);
}

}  // namespace heapprof::cli
