// The workerd config (Cap'n Proto text) heapprof writes for `heapprof run
// --runtime workerd`: the profiled worker on an HTTP socket with its whole
// configuration (compatibility date and flags, vars and secrets, KV namespaces
// backed by an in-memory store heapprof adds, Durable Object namespaces with
// in-memory storage, service bindings to further workers), and an optional
// globalOutbound worker that answers every fetch() (--fetch-handler). V8-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heapprof/workload/worker_config.h"

namespace heapprof::remote {

// The compatibility date of a worker whose configuration gives none.
inline constexpr char kDefaultCompatibilityDate[] = "2024-09-23";

// One binding of a worker's env in workerd's config.
struct WorkerdBinding {
  enum class Kind { kText, kJson, kKv, kDurableObject, kService };
  std::string name;
  Kind kind = Kind::kText;
  // kText: the text; kJson: the JSON text; kKv: the namespace (its binding,
  // one of the worker's kv); kDurableObject: the class; kService: the service.
  std::string value;
  std::string entrypoint;  // kService: a named entrypoint ("" = the default export)
  std::string script;      // kDurableObject: the service of the worker whose class it is ("" = this worker)
};

// One worker of the config.
struct WorkerdWorker {
  std::string service;  // its service's name in the config (a worker's `name`)
  std::string script;   // its one file: an ES module or a service-worker script
  std::string compatibility_date = kDefaultCompatibilityDate;
  std::vector<std::string> compatibility_flags;
  std::vector<WorkerdBinding> bindings;
  // Each KV namespace is a service of its own (heapprof's in-memory store,
  // preloaded with these entries), bound with kvNamespace.
  std::vector<KvNamespace> kv;
  // The Durable Object classes the worker exports (the migrations' result),
  // each a namespace with in-memory storage; uniqueKey "<service>-<class>".
  std::vector<DurableObjectClass> durable_objects;
  // The modules of its bundle besides the script (text, data, wasm, more
  // JavaScript), files beside it, each by its wrangler module type.
  std::vector<BundleModule> modules;
};

// What workerd should serve and how.
struct WorkerdSpec {
  std::string binary;                   // the workerd executable
  WorkerdWorker worker;                 // the profiled worker, served on the HTTP socket
  std::vector<WorkerdWorker> services;  // the workers its service bindings name (and theirs)
  std::string outbound;                 // a module whose fetch answers every worker's fetch() ("" = the network)
  std::vector<std::string> v8_flags;    // the config's v8Flags
};

// What `heapprof run --runtime workerd` honours of a worker's configuration.
RuntimeSupport WorkerdRuntimeSupport();

// A worker of the config from its configuration: vars as text (strings,
// secrets) or JSON (the rest), KV namespaces, Durable Object namespaces of its
// own classes (a binding's script_name names the service whose class it is),
// service bindings by the service's name.
WorkerdWorker WorkerdWorkerFor(const WorkerConfig& config, std::string service, std::string script);

// Whether the script is an ES module (it has an `export` statement) rather
// than a service-worker script.
bool LooksLikeEsModule(std::string_view script);

// How each worker's script is found from the config's folder.
struct WorkerdModule {
  std::string name;   // the module's name (the script's file name: stacks and profiles show it)
  std::string embed;  // the file to embed, relative to the config
  bool es_module = true;
  // The other modules of its bundle: (module name, file to embed, type).
  struct Extra {
    std::string name;
    std::string embed;
    ModuleType type = ModuleType::kEsModule;
  };
  std::vector<Extra> extras;
};

// The config's text and the files it embeds besides the workers' scripts
// (each KV namespace's preloaded entries, heapprof's KV store, the outbound
// module's link is the caller's: `modules` has spec.worker's, then each of
// spec.services', then the outbound's when spec.outbound is set).
struct WorkerdConfigText {
  std::string capnp;
  std::vector<std::pair<std::string, std::string>> files;  // name (relative to the config) -> contents
};
WorkerdConfigText WorkerdConfig(const WorkerdSpec& spec, const std::vector<WorkerdModule>& modules, uint16_t http_port);

// A Cap'n Proto text literal.
std::string CapnpQuote(std::string_view s);

}  // namespace heapprof::remote
