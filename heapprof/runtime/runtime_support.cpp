// What the embedded runtime honours of a worker's configuration.
#include "heapprof/runtime/runtime_support.h"

#include "heapprof/runtime/worker_runtime.h"

namespace heapprof {

RuntimeSupport EmbeddedRuntimeSupport() {
  RuntimeSupport support;
  support.runtime = "the embedded runtime";
  support.keys = {"name", "main", "compatibility_date", "vars", "kv_namespaces", "durable_objects", "migrations"};
  support.compatibility_flags = HonouredCompatibilityFlags();
  support.partly = {{"compatibility_date", "recorded; the embedded runtime's behaviour is of no particular date"}};
  support.instead = "run it with --runtime workerd";
  return support;
}

std::vector<DurableObjectNamespaceOptions> DurableObjectNamespaces(const WorkerConfig& config) {
  const std::vector<DurableObjectClass> classes = config.DurableObjectClasses();
  const std::string worker = config.name.empty() ? "worker" : config.name;
  std::vector<DurableObjectNamespaceOptions> out;
  for (const DurableObjectBinding& binding : config.durable_objects) {
    DurableObjectNamespaceOptions ns;
    ns.binding = binding.name;
    ns.class_name = binding.class_name;
    ns.unique_key = worker + "-" + binding.class_name;
    for (const DurableObjectClass& c : classes) {
      if (c.name == binding.class_name) ns.sqlite = c.sqlite;
    }
    out.push_back(std::move(ns));
  }
  return out;
}

}  // namespace heapprof
