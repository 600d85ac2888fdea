// A worker's whole configuration, as `wrangler deploy` reads it: wrangler.toml
// / wrangler.jsonc (or --config), .dev.vars beside it, and heapprof's flags
// (--env-json, --kv-data, --compatibility-date/-flag). One model for both
// runtimes; each runtime says what it honours (RuntimeSupport) and
// CheckWorkerConfig turns the rest into one warning line, or an error for a
// key the worker's code would call. V8-free; bad input is an error naming the file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/workload/bindings.h"

namespace heapprof {

// [[durable_objects.bindings]]: env.<name> is the namespace of class_name.
struct DurableObjectBinding {
  std::string name;
  std::string class_name;
  std::string script_name;  // "" = this worker's own class
};

// [[migrations]]: what each tag did to the worker's Durable Object classes.
struct DurableObjectMigration {
  std::string tag;
  std::vector<std::string> new_classes;
  std::vector<std::string> new_sqlite_classes;
  std::vector<std::pair<std::string, std::string>> renamed_classes;  // from -> to
  std::vector<std::string> deleted_classes;
};

// A Durable Object class alive after every migration.
struct DurableObjectClass {
  std::string name;
  bool sqlite = false;  // created by new_sqlite_classes: storage.sql exists
};

// [[services]]: env.<binding> is another worker of the user's (service, its name).
struct ServiceBinding {
  std::string binding;
  std::string service;
  std::string entrypoint;  // "" = its default export
};

// r2_buckets (bucket_name), d1_databases (database_name), queues.producers (queue).
struct NamedBinding {
  std::string binding;
  std::string target;
};

// [[queues.consumers]]: the worker's queue() handler receives this queue's batches.
struct QueueConsumer {
  std::string queue;
  int max_batch_size = 10;
};

// A module's type, by wrangler's module types.
enum class ModuleType { kEsModule, kCommonJs, kText, kData, kCompiledWasm };

// A module of a bundle beside its entry.
struct BundleModule {
  std::string name;  // as the bundle imports it, relative to the bundle's folder ("index.js")
  ModuleType type = ModuleType::kEsModule;
};

// [[rules]]: files matching `globs` are modules of `type`.
struct ModuleRule {
  ModuleType type = ModuleType::kEsModule;
  std::vector<std::string> globs;
};

struct WorkerConfig {
  std::string file;                // the configuration read ("" = none)
  std::string dir;                 // where relative paths of the configuration resolve
  std::string name;                // "" = none given
  std::string main;                // the entry module as the file names it, resolved against dir ("" = none)
  std::string compatibility_date;  // "" = none given
  std::vector<std::string> compatibility_flags;
  WorkerBindings bindings;           // vars (JSON text) and KV namespaces, .dev.vars and flags applied
  std::vector<std::string> secrets;  // the names among bindings.vars that .dev.vars set (text values)
  std::vector<DurableObjectBinding> durable_objects;
  std::vector<DurableObjectMigration> migrations;
  std::vector<ServiceBinding> services;
  std::vector<NamedBinding> r2_buckets;
  std::vector<NamedBinding> d1_databases;
  std::vector<NamedBinding> queue_producers;
  std::vector<QueueConsumer> queue_consumers;
  std::vector<std::string> crons;                           // [triggers] crons
  std::vector<std::pair<std::string, std::string>> define;  // build-time replacements
  std::vector<std::pair<std::string, std::string>> alias;   // build-time module aliases
  // Bundling (wrangler's keys, for heapprof's own bundler; the project's
  // wrangler reads them itself).
  bool project = false;    // the worker was given as its folder or config: main is the project's source
  bool no_bundle = false;  // main runs as it stands
  bool minify = false;
  bool keep_names = true;  // wrangler's default
  std::string tsconfig;    // relative to dir ("" = esbuild's own search)
  std::vector<ModuleRule> rules;
  // The bundle that runs, when main was bundled: its folder and its modules,
  // the entry (main) first. {} = main alone, with its relative imports.
  std::string bundle_dir;
  std::vector<BundleModule> modules;
  // Every key of the file, top level ("queues" split into "queues.producers"
  // and "queues.consumers"), in the file's order, for CheckWorkerConfig.
  std::vector<std::string> keys;
  std::vector<std::string> files;  // every file read, for the report
  std::vector<std::string> notes;  // what the user should know of how it was read (e.g. keys --env did not inherit)

  // The classes the migrations leave (renames followed, deletes dropped),
  // plus any class a binding names that no migration declares.
  std::vector<DurableObjectClass> DurableObjectClasses() const;
};

// The configuration's text (TOML when `toml`, else JSON with comments and
// trailing commas, as wrangler reads both) as a model; `name` prefixes
// messages. Relative paths stay as written. With `env`, its [env.NAME]
// section over the top level's inheritable keys (an error when it has none).
Result<WorkerConfig> ParseWorkerConfig(std::string_view text, std::string_view name, bool toml,
                                       std::string_view env = {});

// The keys an [env.NAME] section does not inherit from the top level, as
// wrangler documents them: the bindings and build-time replacements.
inline constexpr const char* kNotInheritedKeys[] = {"define",
                                                    "vars",
                                                    "secrets",
                                                    "durable_objects",
                                                    "workflows",
                                                    "cloudchamber",
                                                    "containers",
                                                    "kv_namespaces",
                                                    "send_email",
                                                    "queues",
                                                    "connect",
                                                    "r2_buckets",
                                                    "d1_databases",
                                                    "vectorize",
                                                    "ai_search_namespaces",
                                                    "ai_search",
                                                    "agent_memory",
                                                    "hyperdrive",
                                                    "services",
                                                    "analytics_engine_datasets",
                                                    "browser",
                                                    "analytics",
                                                    "ai",
                                                    "images",
                                                    "media",
                                                    "stream",
                                                    "version_metadata",
                                                    "unsafe",
                                                    "mtls_certificates",
                                                    "tail_consumers",
                                                    "streaming_tail_consumers",
                                                    "dispatch_namespaces",
                                                    "pipelines",
                                                    "k2",
                                                    "secrets_store_secrets",
                                                    "artifacts",
                                                    "unsafe_hello_world",
                                                    "flagship",
                                                    "ratelimits",
                                                    "worker_loaders",
                                                    "vpc_services",
                                                    "vpc_networks"};

// Where a run's configuration comes from.
struct WorkerConfigSources {
  // The worker: its script (the config is looked for beside it), or a folder
  // holding wrangler.toml / wrangler.jsonc / wrangler.json (its `main` is the
  // script), or that file itself (taken as its folder with that config).
  std::string worker;
  std::string config;                             // --config ("" = look beside the worker)
  std::string env;                                // --env: the [env.NAME] section ("" = the top level)
  std::string env_json;                           // --env-json ("" = none)
  std::vector<std::string> kv_data;               // --kv-data BINDING=FILE
  std::optional<std::string> compatibility_date;  // --compatibility-date: replaces the config's
  std::vector<std::string> compatibility_flags;   // --compatibility-flag: added to the config's
};

// Reads everything: the configuration (the first of wrangler.toml,
// wrangler.jsonc, wrangler.json beside the worker, or --config), .dev.vars
// beside it, then --env-json and --kv-data. A file named and missing is an
// error; so is a folder without a configuration or a `main`. `main` comes back
// resolved: the script to run (the worker itself when it is a file).
Result<WorkerConfig> LoadWorkerConfig(const WorkerConfigSources& sources);
// The names of a wrangler config in a worker's folder, in the order looked for.
inline constexpr const char* kWranglerConfigNames[] = {"wrangler.toml", "wrangler.jsonc", "wrangler.json"};
// Whether `worker` names a wrangler config file (wrangler.toml, .jsonc, .json)
// that exists: LoadWorkerConfig takes it as its folder with that config.
bool IsWranglerConfigFile(const std::string& worker);

// What one runtime honours of a configuration.
struct RuntimeSupport {
  std::string runtime;                           // "the embedded runtime", "workerd", for messages
  std::vector<std::string> keys;                 // configuration keys honoured (as in WorkerConfig::keys)
  bool all_compatibility_flags = false;          // workerd: every flag is the runtime's own
  std::vector<std::string> compatibility_flags;  // else the flags it honours
  // Keys it honours only in part, each with what it does instead (e.g.
  // compatibility_date: recorded in the profile): named in the warning.
  std::vector<std::pair<std::string, std::string>> partly;
  std::string instead;  // what to do for a key it cannot honour ("run it with --runtime workerd"), or ""
  // Whether it runs other workers of the user's beside this one (workerd:
  // --service NAME=WORKER or the folder beside), so that a Durable Object
  // binding's script_name naming another worker is the caller's to find;
  // else such a binding is refused here.
  bool other_workers = false;
  // Whether it gives a bundle's modules the types the bundle says (the
  // config's rules included), rather than wrangler's defaults by extension.
  bool module_rules = false;
};

// What CheckWorkerConfig found.
struct ConfigVerdict {
  std::vector<std::string> ignored;  // keys (and compatibility flags) not honoured, each with why
  std::string warning;               // one line naming them ("" = none)
};

// Every key of `config` the runtime does not honour: a key whose binding the
// worker's code would call (durable_objects, services, r2_buckets, a
// compatibility flag such as nodejs_compat, ...) is an error naming the key
// and --ignore-config-key, unless `ignore` lists it (a key, or a flag's name);
// the rest (deploy-only keys, build-time keys, unknown keys) goes into one
// warning line.
Result<ConfigVerdict> CheckWorkerConfig(const WorkerConfig& config, const RuntimeSupport& support,
                                        const std::vector<std::string>& ignore);

// The configuration's compatibility flags that `support` honours: what the
// runtime is given (the rest were named in the warning or refused).
std::vector<std::string> FlagsHonoured(const WorkerConfig& config, const RuntimeSupport& support);

// The configuration keys heapprof knows, each with whether an unhonoured one is
// an error (the code would call it) and a short note (for docs and --help).
struct ConfigKeyInfo {
  const char* key;
  bool needed;       // the worker's code calls it: an error when a runtime cannot honour it
  const char* note;  // what it is
};
const std::vector<ConfigKeyInfo>& KnownConfigKeys();

// Compatibility flags that change which code a worker runs (node:* modules,
// globals): an error, not a warning, in a runtime that does not honour them.
bool CompatibilityFlagIsNeeded(std::string_view flag);

}  // namespace heapprof
