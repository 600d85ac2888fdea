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
    for (const char* file : kWranglerConfigNames) {
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

// A worker another one names: by a service binding, or by a Durable Object
// binding whose class lives in another worker (script_name).
struct Reference {
  std::string worker;
  std::string key;         // the config key, for --ignore-config-key
  std::string what;        // "services binding AUTH", for messages
  std::string class_name;  // a Durable Object binding's class ("" = a service binding)
};

std::vector<Reference> References(const WorkerConfig& config) {
  std::vector<Reference> out;
  for (const ServiceBinding& s : config.services) {
    out.push_back({s.service, "services", "services binding " + s.binding, ""});
  }
  for (const DurableObjectBinding& b : config.durable_objects) {
    if (b.script_name.empty() || b.script_name == config.name) continue;
    out.push_back({b.script_name, "durable_objects",
                   fmt::format("durable_objects binding {} (class {}, script_name = \"{}\")", b.name, b.class_name,
                               b.script_name),
                   b.class_name});
  }
  return out;
}

std::string FileOf(const WorkerConfig& config) { return config.file.empty() ? std::string("the config") : config.file; }

// The class a binding of another worker names is a namespace of the worker
// that owns it (out[i] is pending[i + 1]'s), whether or not that worker binds
// it itself; SQLite-backed when its migrations say so.
void AddClass(std::vector<remote::WorkerdWorker>& out, const Reference& ref,
              const std::vector<std::pair<WorkerConfig, std::string>>& pending) {
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].service != ref.worker) continue;
    std::vector<DurableObjectClass>& classes = out[i].durable_objects;
    auto has = [&](const DurableObjectClass& c) { return c.name == ref.class_name; };
    if (std::any_of(classes.begin(), classes.end(), has)) return;
    std::vector<DurableObjectClass> declared = pending[i + 1].first.DurableObjectClasses();
    auto it = std::find_if(declared.begin(), declared.end(), has);
    classes.push_back(it != declared.end() ? *it : DurableObjectClass{ref.class_name, false});
    return;
  }
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
    for (const Reference& ref : References(current)) {
      if (std::find(known.begin(), known.end(), ref.worker) != known.end()) {
        // Served already: a Durable Object class it owns is one of its namespaces.
        if (!ref.class_name.empty()) AddClass(out, ref, pending);
        continue;
      }
      if (!PlainName(ref.worker)) {
        return Error(ErrorCode::kInvalidArgument, fmt::format("{}: {} names \"{}\", which is not a worker's name",
                                                              FileOf(current), ref.what, ref.worker));
      }
      std::vector<std::string> looked;
      std::string worker = given.count(ref.worker) != 0 ? given[ref.worker] : FindBeside(current, ref.worker, &looked);
      if (worker.empty()) {
        return Error(
            ErrorCode::kNotFound,
            fmt::format("{}: {} names the worker \"{}\", and no folder in {} has a wrangler config with "
                        "name = \"{}\": give its folder with --service {}=FOLDER, or --ignore-config-key {} to "
                        "run without the binding",
                        FileOf(current), ref.what, ref.worker,
                        looked.empty() ? std::string("the worker's parent folder") : looked.front(), ref.worker,
                        ref.worker, ref.key));
      }
      ConfigFlags none;
      Result<WorkerConfig> loaded = LoadCheckedConfig("run", worker, none, remote::WorkerdRuntimeSupport());
      if (!loaded.ok()) {
        return Error(loaded.status().code(),
                     fmt::format("the worker \"{}\" of {}: {}", ref.worker, ref.what, loaded.status().message()));
      }
      if (!loaded->name.empty() && loaded->name != ref.worker && given.count(ref.worker) == 0) {
        return Error(ErrorCode::kInvalidArgument,
                     fmt::format("{} is named \"{}\", not \"{}\"", worker, loaded->name, ref.worker));
      }
      // Its service is the name the binding gives (workerd addresses it so).
      known.push_back(ref.worker);
      out.push_back(remote::WorkerdWorkerFor(loaded.value(), ref.worker, loaded->main));
      pending.emplace_back(std::move(loaded).value(), worker);
      if (!ref.class_name.empty()) AddClass(out, ref, pending);
    }
  }
  return out;
}

}  // namespace heapprof::cli
