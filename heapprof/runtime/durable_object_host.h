// The Durable Objects of one worker, each in an isolate of its own: the
// registry (namespace and id -> the object's runtime, its storage, its
// counts) shared by the worker's isolate and every object's isolate, and the
// natives through which a stub's call crosses from one isolate to another.
//
// A call runs to completion, nested: the caller's native objectCall enters
// the object's isolate, delivers the event, drains that isolate's microtasks
// and virtual-time timers until the event settles, and returns its result to
// the caller, whose JavaScript then resumes. The embedded runtime has no I/O,
// so an event settles through microtasks and timers alone, and one object's
// events never overlap: the input gate holds trivially between events (and
// within one, js/durable_objects.js keeps it for blockConcurrencyWhile). A
// call into an object that is running an event now (from itself, or from an
// object it called) is refused with an error instead of deadlocking.
//
// What crosses: bytes of V8's ValueSerializer, made and read in JavaScript
// (natives serialize/deserialize), so no isolate sees another's values.
// Storage lives here, outside the object's isolate, as serialized values in
// key order (UTF-8 byte order, which is code point order, as workerd sorts),
// so it survives the isolate being dropped and recreated.
#pragma once

#include <v8.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/runtime/worker_runtime.h"

namespace heapprof::internal {

// One object: where it lives and what it keeps.
struct DurableObjectEntry {
  size_t ns = 0;                               // index into WorkerOptions::durable_objects
  std::string hex;                             // 64 hex digits
  std::string name;                            // "" unless the first call's id came from idFromName
  std::map<std::string, std::string> storage;  // key -> serialized value
  std::unique_ptr<WorkerRuntime> runtime;      // null before the first event and after an eviction
  uint64_t requests = 0;
  uint64_t restarts = 0;  // isolates made after the first (heap limit, eviction)
  bool busy = false;      // an event of it is running now
  bool made = false;      // an isolate was made for it before
  std::chrono::steady_clock::time_point last_event{};
};

class DurableObjectHost {
 public:
  // `options` are the worker's; each object's isolate gets the same ones
  // (heap limit, time limit, bindings, console), named "<binding>:<name>".
  explicit DurableObjectHost(const WorkerOptions& options);
  DurableObjectHost(const DurableObjectHost&) = delete;
  DurableObjectHost& operator=(const DurableObjectHost&) = delete;
  ~DurableObjectHost();

  // The worker's main module, which each object's isolate loads for its class.
  void SetMainModule(std::string source, std::string filename, std::string module_root);

  // Delivers one event (a serialized envelope of js/durable_objects.js) to
  // the object `hex` of namespace `ns`, making its isolate on first use, and
  // answers the serialized outcome. Fails (kFailedPrecondition) for an object
  // busy now, or as the object's isolate failed (heap limit, time limit, load).
  Result<std::string> Call(size_t ns, const std::string& hex, const std::string& name, std::string_view payload);

  // Every object that received an event, namespace by namespace in creation order.
  std::vector<DurableObjectReport> Report();
  // The runtime of binding:NAME (name, or id in hex), or null before it exists.
  WorkerRuntime* Find(std::string_view binding, std::string_view name_or_id);
  // Ends the JavaScript every object runs now (any thread).
  void TerminateAll();

 private:
  Status Make(DurableObjectEntry& entry);
  // Drops the isolates of objects idle past WorkerOptions::durable_object_idle_limit.
  void EvictIdle();
  DurableObjectReport ReportOf(const DurableObjectEntry& entry) const;

  WorkerOptions options_;
  std::string source_, filename_, module_root_;
  std::mutex mu_;  // guards entries_' list (TerminateAll runs on another thread)
  std::vector<std::unique_ptr<DurableObjectEntry>> entries_;
};

// Natives of js/durable_objects.js (worker_natives.cpp lists them):
// objectCall(ns, hex, name, payload) -> Uint8Array, or throws the failure;
// objectStorage(op, key, bytes): "get" -> Uint8Array | undefined, "put",
// "delete" -> boolean, "keys" -> sorted array, "clear", for the object the
// isolate serves; serialize(value) -> Uint8Array, deserialize(bytes) -> value.
void ObjectCall(const v8::FunctionCallbackInfo<v8::Value>& info);
void ObjectStorage(const v8::FunctionCallbackInfo<v8::Value>& info);
void Serialize(const v8::FunctionCallbackInfo<v8::Value>& info);
void Deserialize(const v8::FunctionCallbackInfo<v8::Value>& info);

}  // namespace heapprof::internal
