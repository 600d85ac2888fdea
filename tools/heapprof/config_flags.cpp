// The worker configuration flags, shared by run (both runtimes) and serve.
#include "tools/heapprof/config_flags.h"

#include <algorithm>

#include <fmt/format.h>

#include "heapprof/workload/project_bundle.h"

namespace heapprof::cli {

void AddConfigOptions(CLI::App* app, ConfigFlags& flags) {
  app->add_option("--config", flags.config,
                  "The wrangler.toml / wrangler.jsonc of the worker (.dev.vars beside it adds secrets) [default: the "
                  "one beside the worker, or in the worker's folder]; keys a runtime does not honour are named in "
                  "one warning line, and a binding the code would call and the runtime cannot give is an error");
  app->add_option("--env", flags.env,
                  "The environment of the wrangler config to run, as wrangler deploy --env NAME: its [env.NAME] "
                  "section over the top level's inheritable keys, and .dev.vars.NAME (or .env.NAME) for its secrets")
      ->type_name("NAME");
  app->add_option("--bundler", flags.bundler,
                  "How a project's source is bundled: auto (the project's wrangler deploy --dry-run when it has "
                  "wrangler and a Node that runs it, else heapprof's esbuild with wrangler's settings), wrangler, "
                  "esbuild, or none (main runs as it stands, as no_bundle = true)")
      ->check(CLI::IsMember({"auto", "wrangler", "esbuild", "none"}))
      ->capture_default_str();
  app->add_option("--env-json", flags.env_json, "A JSON object whose members become env vars (after the config)");
  app->add_option("--kv-data", flags.kv_data,
                  "BINDING=FILE: preload the KV namespace env.BINDING from a JSON object of key: value (repeatable)")
      ->allow_extra_args(false);
  app->add_option("--compatibility-date", flags.compatibility_date,
                  "The worker's compatibility date [default: the config's compatibility_date, else 2024-09-23]. "
                  "workerd follows it; the embedded runtime records it (its behaviour is of no particular date)")
      ->type_name("YYYY-MM-DD");
  app->add_option("--compatibility-flag", flags.compatibility_flags,
                  "A compatibility flag, added to the config's compatibility_flags (repeatable). workerd honours "
                  "every flag; the embedded runtime honours nodejs_compat, nodejs_compat_v2, nodejs_als and "
                  "nodejs_compat_populate_process_env, refuses the others that change which code runs and names the "
                  "rest in its warning line")
      ->type_name("FLAG")
      ->allow_extra_args(false);
  app->add_option("--ignore-config-key", flags.ignore_keys,
                  "Run although the runtime cannot honour this config key (durable_objects, services, r2_buckets, "
                  "...) or compatibility flag: the warning line names it (repeatable)")
      ->type_name("KEY")
      ->allow_extra_args(false);
}

Result<WorkerConfig> LoadCheckedConfig(const std::string& command, const std::string& worker, const ConfigFlags& flags,
                                       const RuntimeSupport& support) {
  WorkerConfigSources sources;
  sources.worker = worker;
  sources.config = flags.config;
  sources.env = flags.env;
  sources.env_json = flags.env_json;
  sources.kv_data = flags.kv_data;
  sources.compatibility_date = flags.compatibility_date;
  sources.compatibility_flags = flags.compatibility_flags;
  Result<WorkerConfig> config = LoadWorkerConfig(sources);
  if (!config.ok()) return config.status();
  for (const std::string& note : config->notes) fmt::print(stderr, "heapprof {}: note: {}\n", command, note);
  RuntimeSupport honoured = support;
  if (flags.bundler != "none" && NeedsBundle(config.value())) {
    BundleOptions options;
    if (flags.bundler == "wrangler") options.only = Bundler::kWrangler;
    if (flags.bundler == "esbuild") options.only = Bundler::kEsbuild;
    Result<ProjectBundle> bundle = BundleProject(config.value(), flags.env, options);
    if (!bundle.ok()) return bundle.status();
    for (const std::string& note : bundle->notes) fmt::print(stderr, "heapprof {}: note: {}\n", command, note);
    fmt::print(stderr, "heapprof {}: {}\n", command, bundle->summary);
    config->main = bundle->main;
    config->bundle_dir = bundle->dir;
    config->modules = bundle->modules;
    // The bundler honours the build-time keys (wrangler all of them).
    const std::vector<std::string>& keys =
        bundle->bundler == Bundler::kWrangler ? kWranglerBuildKeys : kEsbuildBuildKeys;
    honoured.keys.insert(honoured.keys.end(), keys.begin(), keys.end());
    // A module the config's rules type otherwise than its extension would be
    // loaded as the wrong thing by a runtime that types by extension.
    for (const BundleModule& m : config->modules) {
      if (support.module_rules || m.type == DefaultModuleType(m.name)) continue;
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("{}: its rules make the bundle's module {} a module of another type than its "
                               "extension, which {} cannot load: {}",
                               config->file, m.name, support.runtime,
                               support.instead.empty() ? "remove the rule" : support.instead));
    }
  } else if (config->no_bundle || flags.bundler == "none") {
    honoured.keys.push_back("no_bundle");  // main runs as it stands: what no_bundle asks
  }
  Result<ConfigVerdict> verdict = CheckWorkerConfig(config.value(), honoured, flags.ignore_keys);
  if (!verdict.ok()) return verdict.status();
  if (!verdict->warning.empty()) fmt::print(stderr, "heapprof {}: warning: {}\n", command, verdict->warning);
  // A binding the runtime honours but the user ignores is not given to the worker.
  auto ignored = [&](const char* key) {
    return std::find(flags.ignore_keys.begin(), flags.ignore_keys.end(), key) != flags.ignore_keys.end();
  };
  if (ignored("durable_objects")) config->durable_objects.clear();
  if (ignored("kv_namespaces")) config->bindings.kv.clear();
  if (ignored("services")) config->services.clear();
  return config;
}

Status CheckObjectIdleLimit(bool given, const WorkerConfig& config) {
  if (!given || !config.durable_objects.empty()) return Status::Ok();
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("--object-idle-limit evicts idle Durable Objects, and {} binds none",
                           config.file.empty() ? std::string("the worker's configuration") : config.file));
}

std::string DescribeConfig(const WorkerConfig& config) {
  if (config.files.empty() && config.compatibility_flags.empty() && config.compatibility_date.empty()) return "";
  std::vector<std::string> vars, secrets, parts;
  for (const auto& [name, value] : config.bindings.vars) {
    (std::find(config.secrets.begin(), config.secrets.end(), name) != config.secrets.end() ? secrets : vars)
        .push_back(name);
  }
  auto list = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string("none") : fmt::format("{}", fmt::join(v, ", "));
  };
  parts.push_back("vars " + list(vars));
  if (!secrets.empty()) parts.push_back("secrets " + list(secrets));
  std::vector<std::string> kv;
  for (const KvNamespace& ns : config.bindings.kv)
    kv.push_back(fmt::format("{} ({} keys preloaded)", ns.binding, ns.entries.size()));
  parts.push_back("KV " + list(kv));
  std::vector<std::string> objects;
  for (const DurableObjectBinding& b : config.durable_objects) {
    const bool other = !b.script_name.empty() && b.script_name != config.name;
    objects.push_back(b.name + " -> " + b.class_name + (other ? " of " + b.script_name : ""));
  }
  if (!objects.empty()) parts.push_back("Durable Objects " + list(objects));
  std::vector<std::string> services;
  for (const ServiceBinding& s : config.services) services.push_back(s.binding + " -> " + s.service);
  if (!services.empty()) parts.push_back("services " + list(services));
  if (!config.compatibility_date.empty()) parts.push_back("compatibility_date " + config.compatibility_date);
  if (!config.compatibility_flags.empty()) parts.push_back("compatibility_flags " + list(config.compatibility_flags));
  return fmt::format("Bindings from {}: {}",
                     config.files.empty() ? std::string("the flags") : fmt::format("{}", fmt::join(config.files, ", ")),
                     fmt::join(parts, "; "));
}

}  // namespace heapprof::cli
