// A worker's bindings (the `env` argument of fetch): vars and secrets, and
// in-memory KV namespaces, read from wrangler.toml / wrangler.jsonc, .dev.vars
// and JSON files. V8-free; malformed input is an error naming the file.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heapprof/core/status.h"

namespace heapprof {

// One KV namespace binding, held in memory for the run.
struct KvNamespace {
  std::string binding;                                       // env.<binding>
  std::vector<std::pair<std::string, std::string>> entries;  // preloaded key -> value
};

struct WorkerBindings {
  // env.<name> = the JSON value (text); later entries replace earlier ones.
  std::vector<std::pair<std::string, std::string>> vars;
  std::vector<KvNamespace> kv;

  // Sets a var (replacing one of the same name).
  void SetVar(const std::string& name, std::string json);
  // The namespace bound to `binding`, or nullptr.
  KvNamespace* FindKv(std::string_view binding);
};

// wrangler.toml: [vars] (strings, numbers, booleans, tables) and
// [[kv_namespaces]] binding = "...". `name` prefixes messages.
Result<WorkerBindings> ParseWranglerToml(std::string_view text, std::string_view name);
// wrangler.jsonc / wrangler.json: "vars": {...}, "kv_namespaces": [{"binding": ...}]; comments allowed.
Result<WorkerBindings> ParseWranglerJsonc(std::string_view text, std::string_view name);
// .dev.vars: NAME=value lines (# comments, optional quotes), added as string vars.
Status ParseDevVars(std::string_view text, std::string_view name, WorkerBindings& into);
// --env-json: a JSON object whose members become vars.
Status ParseEnvJson(std::string_view text, std::string_view name, WorkerBindings& into);
// --kv-data BINDING=FILE: a JSON object of key -> value (a non-string value is stored as its JSON text).
Status ParseKvData(std::string_view text, std::string_view name, KvNamespace& into);

// Everything `heapprof run` reads for a worker: `config` (or wrangler.toml,
// wrangler.jsonc, wrangler.json beside the worker, the first that exists),
// .dev.vars beside that config, then --env-json and --kv-data files.
struct BindingSources {
  std::string worker;
  std::string config;                // "" = look beside the worker
  std::string env_json;              // "" = none
  std::vector<std::string> kv_data;  // "BINDING=FILE"
};
struct LoadedBindings {
  WorkerBindings bindings;
  std::vector<std::string> files;  // what was read, for the report
};
Result<LoadedBindings> LoadBindings(const BindingSources& sources);

}  // namespace heapprof
