// A worker's configuration: wrangler.toml / wrangler.jsonc, .dev.vars and
// flags read into one model (what a runtime honours of it: worker_config_check.cpp).
#include "heapprof/workload/worker_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "heapprof/core/file_io.h"
#include "heapprof/workload/config_text.h"

namespace heapprof {
namespace {

namespace fs = std::filesystem;
using internal::ConfigError;
using internal::Contains;
using nlohmann::json;

// A string member ("" when absent), or an error naming `where`.
Result<std::string> String(const json& object, const char* key, std::string_view where, bool required = false) {
  if (!object.contains(key)) {
    if (required) return ConfigError(where, fmt::format("needs {} (a string)", key));
    return std::string();
  }
  if (!object[key].is_string()) return ConfigError(where, fmt::format("{} must be a string", key));
  return object[key].get<std::string>();
}

Result<std::vector<std::string>> Strings(const json& object, const char* key, std::string_view where) {
  std::vector<std::string> out;
  if (!object.contains(key)) return out;
  if (!object[key].is_array()) return ConfigError(where, fmt::format("{} must be an array of strings", key));
  for (const json& item : object[key]) {
    if (!item.is_string()) return ConfigError(where, fmt::format("{} must be an array of strings", key));
    out.push_back(item.get<std::string>());
  }
  return out;
}

// An array of tables (`[[key]]`), each read by `read`.
template <typename Read>
Status Tables(const json& object, const char* key, std::string_view name, Read read) {
  if (!object.contains(key)) return Status::Ok();
  if (!object[key].is_array()) return ConfigError(name, fmt::format("{} must be an array of tables", key));
  size_t i = 0;
  for (const json& entry : object[key]) {
    const std::string where = fmt::format("{}: {}[{}]", name, key, i++);
    if (!entry.is_object()) return ConfigError(where, "must be a table");
    if (Status s = read(entry, where); !s.ok()) return s;
  }
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, std::string>>> StringTable(const json& config, const char* key,
                                                                     std::string_view name) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!config.contains(key)) return out;
  if (!config[key].is_object()) return ConfigError(name, fmt::format("{} must be a table of name = \"value\"", key));
  for (const auto& [k, v] : config[key].items()) {
    if (!v.is_string()) return ConfigError(name, fmt::format("{}.{} must be a string", key, k));
    out.emplace_back(k, v.get<std::string>());
  }
  return out;
}

#define HEAPPROF_TRY(var, expr)                         \
  auto var##_result = (expr);                           \
  if (!var##_result.ok()) return var##_result.status(); \
  auto var = std::move(var##_result).value()

Status ReadDurableObjects(const json& config, std::string_view name, WorkerConfig& out) {
  if (!config.contains("durable_objects")) return Status::Ok();
  const json& section = config["durable_objects"];
  if (!section.is_object()) return ConfigError(name, "durable_objects must be a table with bindings = [...]");
  return Tables(section, "bindings", fmt::format("{}: durable_objects", name),
                [&](const json& e, std::string_view where) {
                  HEAPPROF_TRY(binding, String(e, "name", where, true));
                  HEAPPROF_TRY(class_name, String(e, "class_name", where, true));
                  HEAPPROF_TRY(script_name, String(e, "script_name", where));
                  out.durable_objects.push_back({binding, class_name, script_name});
                  return Status::Ok();
                });
}

Status ReadMigrations(const json& config, std::string_view name, WorkerConfig& out) {
  return Tables(config, "migrations", name, [&](const json& e, std::string_view where) {
    DurableObjectMigration m;
    HEAPPROF_TRY(tag, String(e, "tag", where));
    HEAPPROF_TRY(added, Strings(e, "new_classes", where));
    HEAPPROF_TRY(sqlite, Strings(e, "new_sqlite_classes", where));
    HEAPPROF_TRY(deleted, Strings(e, "deleted_classes", where));
    m.tag = tag;
    m.new_classes = added;
    m.new_sqlite_classes = sqlite;
    m.deleted_classes = deleted;
    Status renames = Tables(e, "renamed_classes", where, [&](const json& r, std::string_view at) {
      HEAPPROF_TRY(from, String(r, "from", at, true));
      HEAPPROF_TRY(to, String(r, "to", at, true));
      m.renamed_classes.emplace_back(from, to);
      return Status::Ok();
    });
    if (!renames.ok()) return renames;
    out.migrations.push_back(std::move(m));
    return Status::Ok();
  });
}

// A list of {binding, <target>} tables (r2_buckets, d1_databases, queues.producers).
Status ReadNamed(const json& object, const char* key, const char* target, std::string_view name,
                 std::vector<NamedBinding>& out) {
  return Tables(object, key, name, [&](const json& e, std::string_view where) {
    HEAPPROF_TRY(binding, String(e, "binding", where, true));
    HEAPPROF_TRY(value, String(e, target, where));
    out.push_back({binding, value});
    return Status::Ok();
  });
}

Status ReadQueues(const json& config, std::string_view name, WorkerConfig& out) {
  if (!config.contains("queues")) return Status::Ok();
  const json& queues = config["queues"];
  if (!queues.is_object()) return ConfigError(name, "queues must be a table (producers, consumers)");
  const std::string where = fmt::format("{}: queues", name);
  if (Status s = ReadNamed(queues, "producers", "queue", where, out.queue_producers); !s.ok()) return s;
  return Tables(queues, "consumers", where, [&](const json& e, std::string_view at) {
    HEAPPROF_TRY(queue, String(e, "queue", at, true));
    QueueConsumer c{queue};
    if (e.contains("max_batch_size")) {
      if (!e["max_batch_size"].is_number_integer() || e["max_batch_size"].get<int64_t>() < 1 ||
          e["max_batch_size"].get<int64_t>() > 100) {
        return ConfigError(at, "max_batch_size must be a whole number from 1 to 100");
      }
      c.max_batch_size = e["max_batch_size"].get<int>();
    }
    out.queue_consumers.push_back(c);
    return Status::Ok();
  });
}

// Keys an [env.NAME] section does not inherit from the top level (wrangler's
// schema says "NOT inherited" of each; the bindings above all): the section
// has its own or none. config_schema_test checks the list against the schema.
bool Inherited(std::string_view key) {
  for (const char* own : kNotInheritedKeys) {
    if (key == own) return false;
  }
  return true;
}

// The configuration `env` selects, as wrangler builds it: the top level's
// inheritable keys, then the section's own keys over them; `name` becomes
// "<name>-<env>" unless the section names itself. Without `env`, the top level.
Result<json> SelectEnvironment(const json& config, std::string_view env, std::string_view name,
                               std::vector<std::string>& not_inherited) {
  if (env.empty() || !config.is_object()) return config;
  const json* sections = config.contains("env") ? &config["env"] : nullptr;
  if (sections != nullptr && !sections->is_object()) return ConfigError(name, "env must be a table of environments");
  if (sections == nullptr || !sections->contains(std::string(env))) {
    std::vector<std::string> names;
    if (sections != nullptr) {
      for (const auto& [key, unused] : sections->items()) names.push_back(key);
    }
    return ConfigError(name, fmt::format("no environment \"{}\" (--env): {}", env,
                                         names.empty() ? std::string("the file has no [env.NAME] section")
                                                       : fmt::format("it has {}", fmt::join(names, ", "))));
  }
  const json& section = (*sections)[std::string(env)];
  if (!section.is_object()) return ConfigError(name, fmt::format("env.{} must be a table", env));
  json selected = json::object();
  for (const auto& [key, value] : config.items()) {
    if (key != "env" && Inherited(key)) selected[key] = value;
    if (key != "env" && !Inherited(key) && !section.contains(key)) not_inherited.push_back(key);
  }
  for (const auto& [key, value] : section.items()) selected[key] = value;
  if (!section.contains("name") && config.contains("name") && config["name"].is_string()) {
    selected["name"] = fmt::format("{}-{}", config["name"].get<std::string>(), env);
  }
  return selected;
}

// The local secrets as wrangler reads them beside its config: .dev.vars.<env>
// (with --env) or .dev.vars; when neither exists, the .env files, later ones
// overriding: .env, .env.local, and with --env .env.<env>, .env.<env>.local.
std::vector<fs::path> SecretFiles(const fs::path& dir, const std::string& env) {
  std::error_code ec;
  auto exists = [&](const fs::path& p) { return fs::is_regular_file(p, ec); };
  if (!env.empty() && exists(dir / (".dev.vars." + env))) return {dir / (".dev.vars." + env)};
  if (exists(dir / ".dev.vars")) return {dir / ".dev.vars"};
  std::vector<fs::path> files;
  std::vector<std::string> names = {".env", ".env.local"};
  if (!env.empty()) names.insert(names.end(), {".env." + env, ".env." + env + ".local"});
  for (const std::string& name : names) {
    if (exists(dir / name)) files.push_back(dir / name);
  }
  return files;
}

Status ReadSecretFiles(const fs::path& dir, const std::string& env, WorkerConfig& config) {
  for (const fs::path& file : SecretFiles(dir, env)) {
    Result<std::string> text = ReadFileBytes(file.string());
    if (!text.ok()) return text.status();
    WorkerBindings secrets;
    if (Status s = ParseDevVars(text.value(), file.string(), secrets); !s.ok()) return s;
    for (auto& [key, value] : secrets.vars) {
      config.bindings.SetVar(key, value);
      if (!Contains(config.secrets, key)) config.secrets.push_back(key);
    }
    config.files.push_back(file.string());
  }
  return Status::Ok();
}

Result<bool> Bool(const json& object, const char* key, std::string_view where, bool fallback) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_boolean()) return ConfigError(where, fmt::format("{} must be true or false", key));
  return object[key].get<bool>();
}

Result<ModuleType> ModuleTypeNamed(const std::string& type, std::string_view where) {
  if (type == "ESModule") return ModuleType::kEsModule;
  if (type == "CommonJS") return ModuleType::kCommonJs;
  if (type == "Text") return ModuleType::kText;
  if (type == "Data") return ModuleType::kData;
  if (type == "CompiledWasm") return ModuleType::kCompiledWasm;
  return ConfigError(where,
                     fmt::format("rule type \"{}\" is none of ESModule, CommonJS, Text, Data, CompiledWasm", type));
}

// no_bundle, minify, keep_names, tsconfig and rules: how main is bundled.
Status ReadBuildKeys(const json& config, std::string_view name, WorkerConfig& out) {
  HEAPPROF_TRY(no_bundle, Bool(config, "no_bundle", name, false));
  HEAPPROF_TRY(minify, Bool(config, "minify", name, false));
  HEAPPROF_TRY(keep_names, Bool(config, "keep_names", name, true));
  HEAPPROF_TRY(tsconfig, String(config, "tsconfig", name));
  out.no_bundle = no_bundle;
  out.minify = minify;
  out.keep_names = keep_names;
  out.tsconfig = tsconfig;
  return Tables(config, "rules", name, [&](const json& e, std::string_view where) {
    HEAPPROF_TRY(type_name, String(e, "type", where, true));
    HEAPPROF_TRY(type, ModuleTypeNamed(type_name, where));
    HEAPPROF_TRY(globs, Strings(e, "globs", where));
    out.rules.push_back({type, globs});
    return Status::Ok();
  });
}

void AddKey(WorkerConfig& config, const std::string& key) {
  if (!Contains(config.keys, key)) config.keys.push_back(key);
}

}  // namespace

std::vector<DurableObjectClass> WorkerConfig::DurableObjectClasses() const {
  std::vector<DurableObjectClass> classes;
  auto find = [&](std::string_view wanted) {
    return std::find_if(classes.begin(), classes.end(), [&](const DurableObjectClass& c) { return c.name == wanted; });
  };
  for (const DurableObjectMigration& m : migrations) {
    for (const std::string& c : m.new_classes) {
      if (find(c) == classes.end()) classes.push_back({c, false});
    }
    for (const std::string& c : m.new_sqlite_classes) {
      if (find(c) == classes.end()) classes.push_back({c, true});
    }
    for (const auto& [from, to] : m.renamed_classes) {
      if (auto it = find(from); it != classes.end()) it->name = to;
    }
    for (const std::string& c : m.deleted_classes) {
      if (auto it = find(c); it != classes.end()) classes.erase(it);
    }
  }
  for (const DurableObjectBinding& b : durable_objects) {
    const bool own = b.script_name.empty() || b.script_name == name;
    if (own && find(b.class_name) == classes.end()) classes.push_back({b.class_name, false});
  }
  return classes;
}

Result<WorkerConfig> ParseWorkerConfig(std::string_view text, std::string_view name, bool toml, std::string_view env) {
  Result<json> file = internal::ParseConfigText(text, name, toml);
  if (!file.ok()) return file.status();
  std::vector<std::string> not_inherited;
  Result<json> parsed = SelectEnvironment(file.value(), env, name, not_inherited);
  if (!parsed.ok()) return parsed.status();
  const json& config = parsed.value();
  Result<WorkerBindings> bindings = internal::BindingsFromConfig(config, name);
  if (!bindings.ok()) return bindings.status();
  WorkerConfig out;
  out.bindings = std::move(bindings).value();
  for (const auto& [key, value] : config.items()) {
    if (key == "env") continue;  // its sections are chosen with --env, the top level otherwise
    if (key != "queues") {
      out.keys.push_back(key);
    } else if (value.is_object()) {
      for (const auto& [sub, unused] : value.items()) out.keys.push_back("queues." + sub);
    }
  }
  HEAPPROF_TRY(worker_name, String(config, "name", name));
  HEAPPROF_TRY(main, String(config, "main", name));
  HEAPPROF_TRY(date, String(config, "compatibility_date", name));
  HEAPPROF_TRY(flags, Strings(config, "compatibility_flags", name));
  out.name = worker_name;
  out.main = main;
  out.compatibility_date = date;
  out.compatibility_flags = flags;
  if (Status s = ReadDurableObjects(config, name, out); !s.ok()) return s;
  if (Status s = ReadMigrations(config, name, out); !s.ok()) return s;
  Status services = Tables(config, "services", name, [&](const json& e, std::string_view where) {
    HEAPPROF_TRY(binding, String(e, "binding", where, true));
    HEAPPROF_TRY(service, String(e, "service", where, true));
    HEAPPROF_TRY(entrypoint, String(e, "entrypoint", where));
    out.services.push_back({binding, service, entrypoint});
    return Status::Ok();
  });
  if (!services.ok()) return services;
  if (Status s = ReadNamed(config, "r2_buckets", "bucket_name", name, out.r2_buckets); !s.ok()) return s;
  if (Status s = ReadNamed(config, "d1_databases", "database_name", name, out.d1_databases); !s.ok()) return s;
  if (Status s = ReadQueues(config, name, out); !s.ok()) return s;
  if (config.contains("triggers")) {
    if (!config["triggers"].is_object()) return ConfigError(name, "triggers must be a table with crons = [...]");
    HEAPPROF_TRY(crons, Strings(config["triggers"], "crons", fmt::format("{}: triggers", name)));
    out.crons = crons;
  }
  if (Status s = ReadBuildKeys(config, name, out); !s.ok()) return s;
  if (!not_inherited.empty()) {
    // wrangler warns of the same: a binding of the top level is not the environment's.
    out.notes.push_back(fmt::format("{}: {} {} at the top level and not in [env.{}]: not inherited, so env.{} has none",
                                    name, fmt::join(not_inherited, ", "), not_inherited.size() == 1 ? "is" : "are", env,
                                    env));
  }
  HEAPPROF_TRY(define, StringTable(config, "define", name));
  HEAPPROF_TRY(alias, StringTable(config, "alias", name));
  out.define = define;
  out.alias = alias;
  return out;
}

bool IsWranglerConfigFile(const std::string& worker) {
  std::error_code ec;
  const std::string name = fs::path(worker).filename().string();
  return std::find(std::begin(kWranglerConfigNames), std::end(kWranglerConfigNames), name) !=
             std::end(kWranglerConfigNames) &&
         fs::is_regular_file(worker, ec);
}

Result<WorkerConfig> LoadWorkerConfig(const WorkerConfigSources& given) {
  std::error_code ec;
  // The worker given as its wrangler config (the file a user has open): its
  // folder's worker, with that config. Not run as a script.
  WorkerConfigSources sources = given;
  if (IsWranglerConfigFile(given.worker)) {
    if (!given.config.empty()) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("{} is a wrangler config, and --config gives {}: give the worker's folder or script "
                               "with --config, or the config alone",
                               given.worker, given.config));
    }
    const fs::path dir = fs::path(given.worker).parent_path();
    sources.worker = dir.empty() ? "." : dir.string();
    sources.config = given.worker;
  }
  const bool folder = fs::is_directory(sources.worker, ec);
  if (!folder && !fs::exists(sources.worker, ec)) {
    return Error(ErrorCode::kNotFound, "no such worker file: " + sources.worker);
  }
  std::string path = sources.config;
  if (!path.empty() && !fs::is_regular_file(path, ec)) {
    return Error(ErrorCode::kNotFound,
                 fs::exists(path, ec) ? "--config " + path + " is not a file" : "--config: no such file: " + path);
  }
  if (path.empty()) {
    const fs::path dir = folder ? fs::path(sources.worker) : fs::path(sources.worker).parent_path();
    for (const char* candidate : kWranglerConfigNames) {
      if (fs::is_regular_file(dir / candidate, ec)) {
        path = (dir / candidate).string();
        break;
      }
    }
    if (path.empty() && folder) {
      return Error(ErrorCode::kNotFound,
                   fmt::format("{} is a folder without a wrangler.toml, wrangler.jsonc or wrangler.json "
                               "(give the worker's script, or --config)",
                               sources.worker));
    }
  }
  if (path.empty() && !sources.env.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("--env {} selects a section of the worker's wrangler config, and {} has none beside it "
                             "(give --config)",
                             sources.env, sources.worker));
  }
  WorkerConfig config;
  if (!path.empty()) {
    Result<std::string> text = ReadFileBytes(path);
    if (!text.ok()) return text.status();
    Result<WorkerConfig> parsed =
        ParseWorkerConfig(text.value(), path, fs::path(path).extension() == ".toml", sources.env);
    if (!parsed.ok()) return parsed.status();
    config = std::move(parsed).value();
    config.file = path;
    config.files.push_back(path);
    const fs::path dir = fs::path(path).parent_path();
    config.dir = dir.empty() ? "." : dir.string();
    if (Status s = ReadSecretFiles(dir, sources.env, config); !s.ok()) return s;
  }
  config.project = folder;
  if (folder) {
    if (config.main.empty()) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("{}: no main: heapprof needs the worker's script (main = \"dist/index.js\")", path));
    }
    config.main = (fs::path(config.dir) / config.main).lexically_normal().string();
    if (!fs::is_regular_file(config.main, ec)) {
      return Error(ErrorCode::kNotFound,
                   fmt::format("{}: main names {}, which is not a file (bundle the worker first)", path, config.main));
    }
  } else {
    config.main = sources.worker;
  }
  if (config.dir.empty()) {
    const fs::path dir = fs::path(config.main).parent_path();
    config.dir = dir.empty() ? "." : dir.string();
  }
  if (!sources.env_json.empty()) {
    Result<std::string> text = ReadFileBytes(sources.env_json);
    if (!text.ok()) return Error(text.status().code(), "--env-json: " + text.status().message());
    if (Status s = ParseEnvJson(text.value(), sources.env_json, config.bindings); !s.ok()) return s;
    for (const auto& [key, value] : config.bindings.vars) {
      auto it = std::find(config.secrets.begin(), config.secrets.end(), key);
      if (it != config.secrets.end() && !value.starts_with('"')) config.secrets.erase(it);  // no longer text
    }
    config.files.push_back(sources.env_json);
  }
  for (const std::string& spec : sources.kv_data) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("--kv-data {}: expected BINDING=FILE", spec));
    }
    const std::string binding = spec.substr(0, eq), file = spec.substr(eq + 1);
    Result<std::string> text = ReadFileBytes(file);
    if (!text.ok()) return Error(text.status().code(), fmt::format("--kv-data {}: {}", spec, text.status().message()));
    KvNamespace* kv = config.bindings.FindKv(binding);
    if (kv == nullptr) {
      config.bindings.kv.push_back({binding, {}});
      kv = &config.bindings.kv.back();
      AddKey(config, "kv_namespaces");
    }
    if (Status s = ParseKvData(text.value(), file, *kv); !s.ok()) return s;
    config.files.push_back(file);
  }
  if (!config.bindings.vars.empty()) AddKey(config, "vars");
  if (sources.compatibility_date) {
    config.compatibility_date = *sources.compatibility_date;
    AddKey(config, "compatibility_date");
  }
  for (const std::string& flag : sources.compatibility_flags) {
    if (!Contains(config.compatibility_flags, flag)) config.compatibility_flags.push_back(flag);
    AddKey(config, "compatibility_flags");
  }
  return config;
}

Result<LoadedBindings> LoadBindings(const BindingSources& sources) {
  WorkerConfigSources from;
  from.worker = sources.worker;
  from.config = sources.config;
  from.env_json = sources.env_json;
  from.kv_data = sources.kv_data;
  Result<WorkerConfig> config = LoadWorkerConfig(from);
  if (!config.ok()) return config.status();
  return LoadedBindings{std::move(config->bindings), std::move(config->files)};
}

}  // namespace heapprof
