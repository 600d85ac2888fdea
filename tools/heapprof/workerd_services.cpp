// Service bindings' workers for `heapprof run --runtime workerd` (workerd_services.h).
#include "tools/heapprof/workerd_services.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

#include "tools/heapprof/config_flags.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

bool PlainName(const std::string& name) {
  static const std::regex kPlain("[A-Za-z0-9_-]+");
  return std::regex_match(name, kPlain);
}

// A folder beside the worker's own whose wrangler config names `service`:
// the folder called so first, then the others.
std::string FindBeside(const WorkerConfig& config, const std::string& service, std::vector<std::string>* looked) {
  std::error_code ec;
  const fs::path own = fs::absolute(config.dir, ec).lexically_normal();
  const fs::path parent = own.parent_path();
  looked->push_back(parent.string());
  auto named = [&](const fs::path& dir) {
    for (const char* file : {"wrangler.toml", "wrangler.jsonc", "wrangler.json"}) {
      const fs::path candidate = dir / file;
      if (!fs::is_regular_file(candidate, ec)) continue;
      WorkerConfigSources sources;
      sources.worker = dir.string();
      sources.config = candidate.string();
      Result<WorkerConfig> other = LoadWorkerConfig(sources);
      return other.ok() && other->name == service;
    }
    return false;
  };
  if (PlainName(service) && fs::is_directory(parent / service, ec) && named(parent / service)) {
    return (parent / service).string();
  }
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(parent, ec)) {
    if (e.is_directory(ec) && e.path() != own) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    if (named(dir)) return dir.string();
  }
  return "";
}

}  // namespace

std::string WorkerdServiceName(const WorkerConfig& config) { return PlainName(config.name) ? config.name : "main"; }

Result<std::vector<remote::WorkerdWorker>> WorkerdServices(const WorkerConfig& config,
                                                           const std::vector<std::string>& service_flags) {
  std::map<std::string, std::string> given;  // --service NAME=WORKER
  for (const std::string& flag : service_flags) {
    const size_t eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("--service {}: expected NAME=WORKER (a folder or a script)", flag));
    }
    given[flag.substr(0, eq)] = flag.substr(eq + 1);
  }
  std::vector<remote::WorkerdWorker> out;
  std::vector<std::string> known = {WorkerdServiceName(config)};
  if (!config.name.empty()) known.push_back(config.name);
  std::vector<std::pair<WorkerConfig, std::string>> pending = {{config, config.file}};
  for (size_t next = 0; next < pending.size(); ++next) {
    const WorkerConfig current = pending[next].first;
    for (const ServiceBinding& s : current.services) {
      if (std::find(known.begin(), known.end(), s.service) != known.end()) continue;
      if (!PlainName(s.service)) {
        return Error(ErrorCode::kInvalidArgument,
                     fmt::format("{}: services binding {} names \"{}\", which is not a worker's name", current.file,
                                 s.binding, s.service));
      }
      std::vector<std::string> looked;
      std::string worker = given.count(s.service) != 0 ? given[s.service] : FindBeside(current, s.service, &looked);
      if (worker.empty()) {
        return Error(ErrorCode::kNotFound,
                     fmt::format("{}: services binding {} names the worker \"{}\", and no folder in {} has a wrangler "
                                 "config with name = \"{}\": give its folder with --service {}=FOLDER, or "
                                 "--ignore-config-key services to run without the binding",
                                 current.file.empty() ? std::string("the config") : current.file, s.binding, s.service,
                                 looked.empty() ? std::string("the worker's parent folder") : looked.front(), s.service,
                                 s.service));
      }
      ConfigFlags none;
      Result<WorkerConfig> loaded = LoadCheckedConfig("run", worker, none, remote::WorkerdRuntimeSupport());
      if (!loaded.ok()) {
        return Error(loaded.status().code(), fmt::format("the worker \"{}\" of services binding {}: {}", s.service,
                                                         s.binding, loaded.status().message()));
      }
      if (!loaded->name.empty() && loaded->name != s.service && given.count(s.service) == 0) {
        return Error(ErrorCode::kInvalidArgument,
                     fmt::format("{} is named \"{}\", not \"{}\"", worker, loaded->name, s.service));
      }
      known.push_back(s.service);
      out.push_back(remote::WorkerdWorkerFor(loaded.value(), s.service, loaded->main));
      pending.emplace_back(std::move(loaded).value(), worker);
    }
  }
  return out;
}

}  // namespace heapprof::cli
