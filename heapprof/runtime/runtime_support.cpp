// What the embedded runtime honours of a worker's configuration.
#include "heapprof/runtime/runtime_support.h"

#include "heapprof/runtime/worker_runtime.h"

namespace heapprof {

RuntimeSupport EmbeddedRuntimeSupport() {
  RuntimeSupport support;
  support.runtime = "the embedded runtime";
  support.keys = {"name", "main", "compatibility_date", "vars", "kv_namespaces"};
  support.compatibility_flags = HonouredCompatibilityFlags();
  support.partly = {{"compatibility_date", "recorded; the embedded runtime's behaviour is of no particular date"}};
  support.instead = "run it with --runtime workerd";
  return support;
}

}  // namespace heapprof
