// The state behind heapprof::WorkerRuntime, shared by its V8-facing files
// (worker_runtime.cpp: isolate, globals, dispatch; worker_loader.cpp: scripts
// and modules).
#pragma once

#include <v8.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/runtime/durable_object_host.h"
#include "heapprof/runtime/worker_compression.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/runtime/worker_watchdog.h"

namespace heapprof {

struct WorkerRuntime::State {
  explicit State(Isolate owned) : isolate(std::move(owned)) {}

  // Declared first so it is destroyed last: every Global below needs it.
  Isolate isolate;
  ConsoleSink console;
  std::unique_ptr<internal::Watchdog> watchdog;  // the per-request time limit; before the Globals, after the isolate
  internal::ZlibStreams zlib_streams;            // the compression streams' z_streams; after the isolate
  WorkerKind kind = WorkerKind::kNotLoaded;
  bool has_durable_objects = false;  // env has Durable Object namespaces: their classes come from the main module
  // The worker's objects (in the worker's runtime only), and the host every
  // isolate of the worker reaches them through; in an object's isolate, the
  // object it serves.
  std::unique_ptr<internal::DurableObjectHost> owned_objects;
  internal::DurableObjectHost* objects = nullptr;
  internal::DurableObjectEntry* serving = nullptr;
  v8::Global<v8::Object> internals;  // what the prelude handed over (natives.setInternals)
  v8::Global<v8::Object> env;        // the `env` argument, one per worker
  v8::Global<v8::Value> receiver;    // `this` for the handler (module default export)
  v8::Global<v8::Function> fetch;    // the module's or the script's fetch function
  std::vector<std::pair<std::string, v8::Global<v8::Module>>> modules;  // canonical path -> module
  // The built-in modules imported so far (node:*, cloudflare:workers): each
  // synthetic module and the prelude's object of its exports.
  std::vector<std::pair<v8::Global<v8::Module>, v8::Global<v8::Object>>> builtin_modules;
  // The folder of the main module loaded from a file: scripts are named
  // relative to it in stacks, Error.stack and profiles ("worker.js",
  // "lib/util.js"), as workerd names a worker's modules; "" = as given.
  std::string module_root;
  // The request Dispatch is turning into a JavaScript Request: the prelude's
  // makeRequest() reads it through natives.requestParts(), so the strings are
  // allocated under a runtime JavaScript frame, not a bare (V8 API) one.
  const WorkerRequest* pending_request = nullptr;
  // Where the prelude's readResponse() hands over what a handler returned
  // (natives.respond), while the host reads it; nullptr otherwise.
  WorkerResponse* response_out = nullptr;
  bool responded = false;
  // Which natives have been read once (MakeWorkerNatives keeps a native from its second read).
  std::vector<bool> natives_read;

  v8::Isolate* v8() const { return isolate.get(); }
  v8::Local<v8::Context> Context() const;
  // A property of the prelude's internals object.
  v8::Local<v8::Value> Internal(const char* name) const;
};

namespace internal {

// Entered isolate + handle scope + context: what every public call needs.
class WorkerScope {
 public:
  explicit WorkerScope(WorkerRuntime::State* state)
      : isolate_scope_(state->v8()), handle_scope_(state->v8()), context_(state->Context()), context_scope_(context_) {}
  v8::Local<v8::Context> context() const { return context_; }

 private:
  v8::Isolate::Scope isolate_scope_;
  v8::HandleScope handle_scope_;
  v8::Local<v8::Context> context_;
  v8::Context::Scope context_scope_;
};

// A failure of the JavaScript with its kind, typed where it is found; reads
// as its Status where only the message matters (loading, an object's event).
struct ScriptError {
  WorkerFailure kind = WorkerFailure::kInternal;
  Status status;
  bool ok() const { return status.ok(); }
  operator const Status&() const { return status; }  // NOLINT: implicit by design
};

// Drains microtasks, then fires virtual-time timers one at a time, until
// `done()` holds. Fails when nothing is left to run and it still does not.
// Its errors, like ScriptFailure's, read "<what>: <why>", or "<why>" when
// `what` is empty.
ScriptError RunUntil(WorkerRuntime::State* state, const std::function<bool()>& done, const char* what);

// "message\n    at ..." for a thrown or rejected value.
std::string DescribeValue(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Value> value);

// Loads the module at `path` into the worker's isolate; its default export's
// fetch(request) answers the worker's fetch() subrequests from then on.
Status LoadFetchHandler(WorkerRuntime::State* state, const std::string& path);

// "30 s" or "250 ms".
std::string FormatLimit(std::chrono::milliseconds limit);

// "<what>: <why>", or `why` alone when `what` is empty.
std::string Said(const std::string& what, std::string why);

// The error after a failed call: the heap limit, the time limit, a termination, or the exception.
ScriptError ScriptFailure(WorkerRuntime::State* state, const v8::TryCatch& try_catch, const std::string& what);

}  // namespace internal
}  // namespace heapprof
