// A small Workers-style host on one embedded isolate: loads a worker script,
// calls its fetch handler for synthetic requests, and lets a profiling window
// be opened around any part of that (even before the script is compiled).
//
// What a worker may be:
// - an ES module (any file that imports or exports) whose default export has
//   `fetch(request, env, ctx)`; relative imports are resolved from the file;
// - a classic script (no import/export) that calls
//   `addEventListener('fetch', event => event.respondWith(...))`, or defines a
//   global `function fetch(request, env, ctx)`.
// Globals offered (heapprof/runtime/worker_prelude.js): console (to a sink),
// Headers (sorted iteration, getSetCookie), Request and Response (string,
// byte and stream bodies, `.body` as a ReadableStream created on first use,
// bodyUsed, clone by tee, json, redirect, request.cf), URL (the WHATWG
// canonical forms and setters; no IDNA or IPv6), URLPattern (npm
// urlpattern-polyfill), URLSearchParams,
// Blob, File, FormData, TextEncoder/TextDecoder (V8's UTF-8, streaming
// decode), TextEncoderStream/TextDecoderStream, CompressionStream/
// DecompressionStream (gzip, deflate, deflate-raw through zlib, chunk by
// chunk: output in pieces of at most 64 KiB as the reader takes them, so a
// gzip bomb read piece by piece takes little memory), the WHATWG streams
// (ReadableStream, WritableStream, TransformStream, readers, controllers and
// queuing strategies, from the npm package web-streams-polyfill bundled at
// build time: heapprof/runtime/js), atob/btoa, structuredClone (V8's serializer),
// crypto (getRandomValues, randomUUID, subtle digest and HMAC
// import/sign/verify, through OpenSSL), Event, EventTarget,
// AbortController/AbortSignal, caches (in memory, per isolate),
// performance.now, queueMicrotask, setTimeout/setInterval on virtual time
// (timers fire in order once microtasks are drained, without waiting). A
// Response whose body is a stream is read to its end by the host; an error in
// that stream fails the request. There is no network: fetch() is answered by
// WorkerOptions::fetch_handler's module, or rejects with a message. No I/O,
// no dynamic import.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"
#include "heapprof/workload/bindings.h"
#include "heapprof/workload/traffic.h"  // SyntheticRequest
#include "heapprof/workload/worker_messages.h"

namespace heapprof {

// Where console output goes: level is "log", "info", "debug", "warn" or "error".
using ConsoleSink = std::function<void(std::string_view level, std::string_view text)>;

// Like the platform's default CPU limit of a paid plan's request.
inline constexpr std::chrono::milliseconds kDefaultRequestTimeout{30'000};

// One namespace of env's Durable Objects (wrangler's [[durable_objects.bindings]]):
// env.<binding> makes ids and stubs of the worker's exported class_name. Its
// ids are workerd's for the same unique key (wrangler's "<worker>-<class>").
struct DurableObjectNamespaceOptions {
  std::string binding;
  std::string class_name;
  std::string unique_key;
  bool sqlite = false;  // new_sqlite_classes: ctx.storage.sql is refused by name on use
};

// One object that received events, for the run's report.
struct DurableObjectReport {
  std::string binding;
  std::string id;              // 64 hex digits
  std::string name;            // "" for an id not made by idFromName
  uint64_t requests = 0;       // fetch() and RPC calls it started
  size_t heap_used_bytes = 0;  // its isolate's heap now (0 once the isolate is gone)
  uint64_t restarts = 0;       // isolates made for it after its first
};

class WorkerRuntime;
namespace internal {
class DurableObjectHost;
}  // namespace internal

struct WorkerOptions {
  std::string name = "worker";                       // isolate name, recorded in profiles
  size_t heap_limit_bytes = kDefaultHeapLimitBytes;  // whole V8 heap, like the platform's limit
  NearHeapLimitHook on_near_heap_limit;              // runs before the script is terminated
  ConsoleSink console;                               // default: stderr, prefixed with the name
  // Wall-clock limit of one Dispatch (handler, microtasks, timers, body) and of
  // Load (a module's top level); past it the JavaScript is terminated and the
  // call fails with kDeadlineExceeded, and the runtime serves on. Zero: none.
  std::chrono::milliseconds request_timeout{kDefaultRequestTimeout};
  // The `env` of every request: vars (JSON values) and in-memory KV namespaces.
  WorkerBindings bindings;
  // env's Durable Object namespaces. Each object lives in an isolate of its
  // own, made at its first event with these same options (its name
  // "<binding>:<name or hex id>"), that loads the worker's main module for
  // its class; its storage is kept in memory outside that isolate
  // (heapprof/runtime/durable_object_host.h, js/durable_objects.js).
  std::vector<DurableObjectNamespaceOptions> durable_objects;
  // Called on the calling thread when an object's isolate has been made,
  // before its module loads (to open a profiling window from its start).
  std::function<void(const DurableObjectReport& object, WorkerRuntime& runtime)> on_durable_object_created;
  // Called on an object's isolate's thread when its heap nears its limit,
  // before its JavaScript is terminated (e.g. to capture its in-use profile);
  // the call into it then fails, naming the object, and the worker serves on.
  std::function<void(const DurableObjectReport& object, WorkerRuntime& runtime)> on_durable_object_near_heap_limit;
  // An object that received no event for this long is evicted before the
  // next call into any object: its isolate is dropped, its storage kept, and
  // a new isolate is made for it at its next event (a restart). Zero: never.
  std::chrono::milliseconds durable_object_idle_limit{0};
  // Called on the calling thread just before an object's isolate is dropped
  // by eviction (e.g. to close a profiling window on it).
  std::function<void(const DurableObjectReport& object, WorkerRuntime& runtime)> on_durable_object_evicted;
  // A module whose default export's fetch(request) answers the worker's
  // fetch() subrequests (a Request in, a Response out), loaded into the
  // worker's isolate (its allocations count there too). Empty: fetch() rejects,
  // as there is no network.
  std::string fetch_handler;
  // workerd's compatibility flags the runtime honours: nodejs_compat (the
  // node: modules it has, bare names too, and the globals Buffer, process,
  // global, setImmediate, clearImmediate), nodejs_compat_v2 (the same),
  // nodejs_als (node:async_hooks alone), nodejs_compat_populate_process_env
  // (process.env holds the text vars). Create refuses any other flag.
  std::vector<std::string> compatibility_flags;
};

// The compatibility flags WorkerOptions::compatibility_flags may hold: the
// ones the embedded runtime honours (a configuration's other flags are for
// its caller to refuse or warn about).
const std::vector<std::string>& HonouredCompatibilityFlags();

// The V8 flags the embedded runtime's isolates run under, for a process
// that starts V8 to serve workers (before the caller's own flags, which
// override them): the tiers workerd runs a worker's JavaScript in. workerd
// does not baseline-compile (Sparkplug: a function it calls thousands of
// times stays in the interpreter until its optimizing compilers take it;
// docs/performance.md), so neither does this runtime, and an empty worker's
// heap does not carry baseline code for the runtime's own request path.
// Then, unless `allow_inlining`, NoInliningFlags (exact attribution).
std::vector<std::string> WorkerRuntimeV8Flags(bool allow_inlining);

// How the loaded worker exposes its handler.
enum class WorkerKind { kNotLoaded, kModule, kEventListener, kGlobalFetch };
// "module", "service-worker script", "script with a global fetch" (for messages).
const char* WorkerKindName(WorkerKind kind);

// Heap numbers for progress lines.
struct HeapUsage {
  size_t used_bytes = 0;
  size_t limit_bytes = 0;
};

// One worker in its own isolate. Move-only; use from one thread.
class WorkerRuntime {
 public:
  // Creates the isolate and its globals; loads no script yet, so a profiling
  // window can be opened before the worker is compiled.
  static Result<WorkerRuntime> Create(const WorkerOptions& options = {});
  WorkerRuntime(WorkerRuntime&&) noexcept;
  WorkerRuntime& operator=(WorkerRuntime&&) noexcept;
  WorkerRuntime(const WorkerRuntime&) = delete;
  WorkerRuntime& operator=(const WorkerRuntime&) = delete;
  ~WorkerRuntime();

  // Reads and loads a worker file (module or classic script, detected).
  Status LoadFile(const std::string& path);
  // Loads worker source; `filename` names it in stacks and resolves imports.
  Status Load(std::string_view source, const std::string& filename);
  WorkerKind kind() const;

  // Calls the handler once, runs microtasks and timers until its promise (and
  // every ctx.waitUntil promise) settles, and reads the Response's status,
  // headers and body. A failure says its kind (WorkerFailure): a throw or
  // rejection, or a handler that answers something other than a Response, is
  // kScriptError with the JS stack; hitting the heap limit is
  // kResourceExhausted; the time limit, kDeadlineExceeded.
  DispatchResult Dispatch(const WorkerRequest& request);

  // Opens a profiling window on this worker's isolate (enters it as needed).
  Result<Session> StartSession(const SessionOptions& options);
  // Closes a window opened by StartSession and builds its profile. Also safe
  // inside the NearHeapLimitHook.
  Result<Profile> StopSession(Session session);

  // Ends the JavaScript this worker runs now; any thread (e.g. on Ctrl-C).
  // The Dispatch or load in progress returns kScriptError ("execution was
  // terminated"); one that arrives between calls ends the next call.
  void Terminate();

  // Every Durable Object that received an event so far, namespace by namespace.
  Result<std::vector<DurableObjectReport>> DurableObjects();
  // The runtime of the object binding:NAME (NAME its idFromName name or its
  // 64-hex id), owned by this worker's runtime; null before its first event.
  WorkerRuntime* DurableObjectRuntime(std::string_view binding, std::string_view name_or_id);

  HeapUsage heap_usage() const;
  bool heap_limit_reached() const;
  Isolate& isolate();

  struct State;

 private:
  friend class internal::DurableObjectHost;
  explicit WorkerRuntime(std::unique_ptr<State> state);
  // Create, for the worker (`objects` null: it owns its objects' host) or
  // for one of its objects (the worker's host).
  static Result<WorkerRuntime> CreateWith(const WorkerOptions& options, internal::DurableObjectHost* objects);
  std::unique_ptr<State> state_;
};

}  // namespace heapprof
