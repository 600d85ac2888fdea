// The worker configuration flags of every command that runs a worker (run in
// both runtimes, serve): --config, --env-json, --kv-data, --compatibility-date,
// --compatibility-flag, --ignore-config-key; and the one call that loads the
// configuration, checks it against the runtime and prints the warning line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "heapprof/core/status.h"
#include "heapprof/workload/worker_config.h"

namespace heapprof::cli {

struct ConfigFlags {
  std::string config;
  std::string env;
  std::string bundler = "auto";
  std::string env_json;
  std::vector<std::string> kv_data;
  std::optional<std::string> compatibility_date;
  std::vector<std::string> compatibility_flags;
  std::vector<std::string> ignore_keys;
};

void AddConfigOptions(CLI::App* app, ConfigFlags& flags);

// The worker's configuration (worker: a script or a folder with its
// wrangler config), checked against what `support` honours: an error for a
// key the code would call, else the configuration, with the one warning line
// (if any) printed to stderr as "heapprof COMMAND: warning: ...".
Result<WorkerConfig> LoadCheckedConfig(const std::string& command, const std::string& worker, const ConfigFlags& flags,
                                       const RuntimeSupport& support);

// --object-idle-limit evicts Durable Objects: kInvalidArgument when it is
// given and the configuration binds none (it would do nothing).
Status CheckObjectIdleLimit(bool given, const WorkerConfig& config);

// "Config: wrangler.toml, .dev.vars: vars A, B; secrets T; KV CACHE (3 keys preloaded); ..." ("" = no file read).
std::string DescribeConfig(const WorkerConfig& config);

}  // namespace heapprof::cli
