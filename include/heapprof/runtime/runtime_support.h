// What the embedded runtime honours of a worker's configuration.
#pragma once

#include <vector>

#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/workload/worker_config.h"

namespace heapprof {

// For CheckWorkerConfig: the keys, the compatibility flags
// (HonouredCompatibilityFlags), what to do instead of a key it cannot honour.
RuntimeSupport EmbeddedRuntimeSupport();

// WorkerOptions::durable_objects of a configuration: each binding of the
// worker's own classes, keyed "<name>-<class>" (name "worker" when the
// configuration gives none) as wrangler keys them for workerd, sqlite when
// the migrations made the class with new_sqlite_classes.
std::vector<DurableObjectNamespaceOptions> DurableObjectNamespaces(const WorkerConfig& config);

}  // namespace heapprof
