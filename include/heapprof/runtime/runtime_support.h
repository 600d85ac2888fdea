// What the embedded runtime honours of a worker's configuration.
#pragma once

#include "heapprof/workload/worker_config.h"

namespace heapprof {

// For CheckWorkerConfig: the keys, the compatibility flags
// (HonouredCompatibilityFlags), what to do instead of a key it cannot honour.
RuntimeSupport EmbeddedRuntimeSupport();

}  // namespace heapprof
