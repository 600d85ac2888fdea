// A worker's Durable Objects as profiling targets: each object's isolate is
// registered with a Controller under "<binding>:<name>" (its idFromName name,
// else its 64-hex id) when the runtime makes it, and unregistered when the
// object is evicted or the worker's runtime ends, so the controller's
// registry routes "profile exactly this object" to the isolate that owns it
// while the worker and the other objects keep serving.
//
// Threads: an object's isolate runs on its worker's thread (a stub's call is
// nested in the worker's JavaScript), so Install's hooks, Pump and
// UnregisterAll run there; Targets is for any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/controller.h"

namespace heapprof {

// "NS:NAME" naming one object: the binding and its idFromName name or its
// 64-hex id (either case).
struct DurableObjectSelector {
  std::string binding;
  std::string name;
  // kInvalidArgument without a colon, a binding or a name.
  static Result<DurableObjectSelector> Parse(std::string_view target);
  // Whether `object` is the one named: by its name, or by its id.
  bool Matches(const DurableObjectReport& object) const;
};

// An object's target name: "<binding>:<name>", or "<binding>:<hex id>" for an
// object whose id did not come from idFromName.
std::string DurableObjectTargetName(const DurableObjectReport& object);

// One object registered as a target now.
struct DurableObjectTarget {
  std::string name;  // DurableObjectTargetName
  DurableObjectReport report;
  size_t heap_limit_bytes = 0;
};

class DurableObjectTargets {
 public:
  explicit DurableObjectTargets(Controller& controller);
  DurableObjectTargets(const DurableObjectTargets&) = delete;
  DurableObjectTargets& operator=(const DurableObjectTargets&) = delete;
  ~DurableObjectTargets();

  // Chains this registry's hooks onto `options`' on_durable_object_created
  // and on_durable_object_evicted (hooks already set still run, first). Use
  // these options for the worker's runtime, once per runtime made.
  void Install(WorkerOptions& options);
  // On the worker's thread while it runs no JavaScript: the controller's
  // lifecycle steps waiting for any object's isolate (Controller::Pump), and
  // the objects' heap and counts refreshed from `worker` now and then.
  void Pump(WorkerRuntime& worker);
  // On the worker's thread before its runtime (and with it every object's
  // isolate) is disposed: every object's target is removed; an open window
  // on one yields what it saw, if it asked for that.
  void UnregisterAll();

  // The objects registered now, in the order they were made. Any thread.
  std::vector<DurableObjectTarget> Targets() const;

 private:
  struct Entry {
    DurableObjectTarget target;
    WorkerRuntime* runtime = nullptr;  // the object's, owned by the worker's runtime
  };
  void Registered(const DurableObjectReport& object, WorkerRuntime& runtime);
  void Evicted(const DurableObjectReport& object);

  Controller& controller_;
  mutable std::mutex mu_;       // guards entries_' list and its targets (read by other threads)
  std::vector<Entry> entries_;  // registered now
  std::chrono::steady_clock::time_point refreshed_{};
  uint64_t pumped_ = 0;  // Controller::StepsPosted at the last round of Pump
};

}  // namespace heapprof
