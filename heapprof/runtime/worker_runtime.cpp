// The worker runtime: an isolate with worker globals, the request dispatch
// loop (call the handler, drain microtasks and timers, await the response),
// and profiling windows on the worker's isolate.
#include "heapprof/runtime/worker_runtime.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <v8.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string_view>

#include "heapprof/runtime/lazy_runtime.h"
#include "heapprof/runtime/worker_natives.h"
#include "heapprof/runtime/worker_prelude.h"
#include "heapprof/runtime/worker_state.h"
#include "heapprof/v8/attribution.h"
#include "heapprof/v8/isolate_state.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof {

using internal::NewString;
using internal::WorkerScope;

namespace {

ConsoleSink StderrConsole(std::string name) {
  return [name = std::move(name)](std::string_view level, std::string_view text) {
    bool plain = level == "log" || level == "info" || level == "debug";
    std::string line = "[" + name + "] " + (plain ? "" : std::string(level) + ": ") + std::string(text) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
  };
}

// The key is internalized: after the first call V8 finds it in its string
// table instead of allocating it (per request, outside any JavaScript frame).
v8::Local<v8::Value> Get(v8::Local<v8::Context> context, v8::Local<v8::Object> object, const char* key) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::String> name = v8::String::NewFromUtf8(isolate, key, v8::NewStringType::kInternalized).ToLocalChecked();
  return object->Get(context, name).FromMaybe(v8::Local<v8::Value>(v8::Undefined(isolate)));
}

bool IsPending(v8::Local<v8::Value> value) {
  return value->IsPromise() && value.As<v8::Promise>()->State() == v8::Promise::kPending;
}

// env from the bindings, built by the prelude's makeEnv.
v8::MaybeLocal<v8::Value> MakeEnv(v8::Local<v8::Context> context, WorkerRuntime::State* state,
                                  const WorkerBindings& bindings,
                                  const std::vector<DurableObjectNamespaceOptions>& durable_objects) {
  v8::Isolate* isolate = context->GetIsolate();
  auto strings = [&](auto begin, auto end, auto pick) {
    std::vector<v8::Local<v8::Value>> items;
    for (auto it = begin; it != end; ++it) items.push_back(NewString(isolate, pick(*it)));
    return v8::Array::New(isolate, items.data(), items.size());
  };
  auto first = [](const auto& pair) -> const std::string& { return pair.first; };
  auto second = [](const auto& pair) -> const std::string& { return pair.second; };
  std::vector<v8::Local<v8::Value>> kv_entries;
  for (const KvNamespace& kv : bindings.kv) {
    std::vector<v8::Local<v8::Value>> flat;
    for (const auto& [key, value] : kv.entries) {
      flat.push_back(NewString(isolate, key));
      flat.push_back(NewString(isolate, value));
    }
    kv_entries.push_back(v8::Array::New(isolate, flat.data(), flat.size()));
  }
  auto binding = [](const KvNamespace& kv) -> const std::string& { return kv.binding; };
  std::vector<v8::Local<v8::Value>> objects;
  for (const DurableObjectNamespaceOptions& ns : durable_objects) {
    v8::Local<v8::Value> fields[] = {NewString(isolate, ns.binding), NewString(isolate, ns.class_name),
                                     NewString(isolate, ns.unique_key), v8::Boolean::New(isolate, ns.sqlite)};
    objects.push_back(v8::Array::New(isolate, fields, 4));
  }
  v8::Local<v8::Value> args[] = {
      strings(bindings.vars.begin(), bindings.vars.end(), first),
      strings(bindings.vars.begin(), bindings.vars.end(), second),
      strings(bindings.kv.begin(), bindings.kv.end(), binding),
      v8::Array::New(isolate, kv_entries.data(), kv_entries.size()),
      v8::Array::New(isolate, objects.data(), objects.size()),
  };
  return state->Internal("makeEnv").As<v8::Function>()->Call(context, v8::Undefined(isolate), 5, args);
}

}  // namespace

v8::Local<v8::Context> WorkerRuntime::State::Context() const { return internal::IsolateAccess::Of(isolate)->Context(); }

v8::Local<v8::Value> WorkerRuntime::State::Internal(const char* name) const {
  v8::Local<v8::Context> context = Context();
  return Get(context, internals.Get(v8()), name);
}

const char* WorkerKindName(WorkerKind kind) {
  switch (kind) {
    case WorkerKind::kNotLoaded:
      return "no worker loaded";
    case WorkerKind::kModule:
      return "module worker";
    case WorkerKind::kEventListener:
      return "service-worker script";
    case WorkerKind::kGlobalFetch:
      return "script with a global fetch()";
  }
  return "?";
}

namespace {

DispatchResult Failed(internal::ScriptError error) { return {error.kind, std::move(error.status)}; }

// Calls the prelude's internals.NAME() for its effect; false when it threw
// (the caller's TryCatch has the exception).
bool CallInternal(WorkerRuntime::State* state, v8::Local<v8::Context> context, const char* name) {
  v8::Local<v8::Value> ignored;
  return state->Internal(name)
      .As<v8::Function>()
      ->Call(context, v8::Undefined(state->v8()), 0, nullptr)
      .ToLocal(&ignored);
}

// The status, headers and body of what a handler returned (a Response, else
// an error: a thrown one is the prelude refusing what is not a Response).
DispatchResult ReadResponse(WorkerRuntime::State* state, v8::Local<v8::Value> response) {
  const std::string what;  // the caller names the request
  v8::Isolate* isolate = state->v8();
  v8::Local<v8::Context> context = state->Context();
  v8::TryCatch try_catch(isolate);
  WorkerResponse out;
  state->response_out = &out;
  state->responded = false;
  struct ClearOut {
    WorkerRuntime::State* state;
    ~ClearOut() { state->response_out = nullptr; }
  } clear_out{state};
  v8::Local<v8::Value> read;
  if (!state->Internal("readResponse")
           .As<v8::Function>()
           ->Call(context, v8::Undefined(isolate), 1, &response)
           .ToLocal(&read)) {
    internal::ScriptError error = internal::ScriptFailure(state, try_catch, what);
    if (error.kind == WorkerFailure::kThrew) error.kind = WorkerFailure::kBadResponse;
    return Failed(std::move(error));
  }
  if (read->IsPromise()) {  // a stream body, read to its end
    if (internal::ScriptError e = internal::RunUntil(
            state, [&] { return !IsPending(read); }, what.c_str());
        !e.ok()) {
      return Failed(std::move(e));
    }
    v8::Local<v8::Promise> promise = read.As<v8::Promise>();
    if (promise->State() == v8::Promise::kRejected) {
      return {WorkerFailure::kBadResponse,
              Error(ErrorCode::kScriptError, internal::DescribeValue(isolate, context, promise->Result()))};
    }
  }
  if (!state->responded) {
    return {WorkerFailure::kBadResponse, Error(ErrorCode::kInternal, "the runtime did not hand over the response")};
  }
  return out;
}

}  // namespace

WorkerRuntime::WorkerRuntime(std::unique_ptr<State> state) : state_(std::move(state)) {}
WorkerRuntime::WorkerRuntime(WorkerRuntime&&) noexcept = default;
WorkerRuntime& WorkerRuntime::operator=(WorkerRuntime&&) noexcept = default;
WorkerRuntime::~WorkerRuntime() = default;

namespace {

// The prelude's options from the compatibility flags, or the error naming a
// flag the runtime does not honour.
struct CompatibilityOptions {
  bool nodejs_compat = false;
  bool nodejs_als = false;
  bool populate_process_env = false;
};

}  // namespace

std::vector<std::string> WorkerRuntimeV8Flags(bool allow_inlining) {
  std::vector<std::string> flags = {"--no-sparkplug"};
  if (!allow_inlining) {
    const std::vector<std::string> no_inlining = NoInliningFlags();
    flags.insert(flags.end(), no_inlining.begin(), no_inlining.end());
  }
  return flags;
}

const std::vector<std::string>& HonouredCompatibilityFlags() {
  static const std::vector<std::string> flags = {"nodejs_compat", "nodejs_compat_v2", "nodejs_als",
                                                 "nodejs_compat_populate_process_env"};
  return flags;
}

namespace {

Result<CompatibilityOptions> ReadCompatibilityFlags(const std::vector<std::string>& flags) {
  CompatibilityOptions out;
  for (const std::string& flag : flags) {
    if (flag == "nodejs_compat" || flag == "nodejs_compat_v2") {
      out.nodejs_compat = true;
    } else if (flag == "nodejs_als") {
      out.nodejs_als = true;
    } else if (flag == "nodejs_compat_populate_process_env") {
      out.populate_process_env = true;
    } else {
      return Error(ErrorCode::kInvalidArgument, "compatibility flag \"" + flag +
                                                    "\" is not honoured by heapprof's embedded runtime (it knows " +
                                                    fmt::format("{}", fmt::join(HonouredCompatibilityFlags(), ", ")) +
                                                    "); profile this worker in workerd with --runtime workerd");
    }
  }
  return out;
}

}  // namespace

Result<WorkerRuntime> WorkerRuntime::Create(const WorkerOptions& options) { return CreateWith(options, nullptr); }

Result<WorkerRuntime> WorkerRuntime::CreateWith(const WorkerOptions& options, internal::DurableObjectHost* objects) {
  HEAPPROF_ASSIGN_OR_RETURN(CompatibilityOptions compatibility, ReadCompatibilityFlags(options.compatibility_flags));
  IsolateOptions isolate_options;
  isolate_options.name = options.name;
  isolate_options.heap_limit_bytes = options.heap_limit_bytes;
  isolate_options.on_near_heap_limit = options.on_near_heap_limit;
  isolate_options.lazy_globals = true;
  HEAPPROF_ASSIGN_OR_RETURN(Isolate isolate, Isolate::Create(isolate_options));

  auto state = std::make_unique<State>(std::move(isolate));
  state->console = options.console ? options.console : StderrConsole(options.name);
  if (objects == nullptr && !options.durable_objects.empty()) {
    state->owned_objects = std::make_unique<internal::DurableObjectHost>(options);
    objects = state->owned_objects.get();
  }
  state->objects = objects;
  v8::Isolate* v8_isolate = state->v8();
  state->watchdog = std::make_unique<internal::Watchdog>(v8_isolate, options.request_timeout);
  // heapprof decides when microtasks run: after each handler call, like a host's event loop.
  v8_isolate->SetMicrotasksPolicy(v8::MicrotasksPolicy::kExplicit);

  WorkerScope scope(state.get());
  v8::Local<v8::Context> context = scope.context();
  v8::TryCatch try_catch(v8_isolate);
  // The prelude, handed the natives and the libraries bundle's loader.
  // The installer is the bundle as the body of a function of three parameters:
  // a function V8 compiles apart from scripts (ScriptCompiler::CompileFunction)
  // does not go into the isolate's script cache, which would keep the
  // bundle's top-level function, and through it the bytecode of everything
  // that ran once at startup, for as long as the isolate lives.
  auto compile_installer = [&](const char* name, const char* source, v8::Local<v8::Value>* out) {
    v8::ScriptOrigin origin(v8_isolate, NewString(v8_isolate, name));
    v8::ScriptCompiler::Source compiler_source(internal::RuntimeScriptSource(v8_isolate, source), origin);
    v8::Local<v8::String> parameters[] = {NewString(v8_isolate, "hostNatives"), NewString(v8_isolate, "hostLibraries"),
                                          NewString(v8_isolate, "hostOptions")};
    v8::Local<v8::Function> installer;
    if (!v8::ScriptCompiler::CompileFunction(context, &compiler_source, 3, parameters).ToLocal(&installer)) {
      return false;
    }
    *out = installer;
    return true;
  };
  v8::Local<v8::Object> libraries;
  v8::Local<v8::Value> installer;
  v8::Local<v8::Object> natives;
  if (!internal::MakeWorkerLibraries(context).ToLocal(&libraries) ||
      !compile_installer(internal::kWorkerPreludeName, internal::kWorkerPreludeSource, &installer) ||
      !installer->IsFunction() || !internal::MakeWorkerNatives(context, state.get()).ToLocal(&natives)) {
    return Error(ErrorCode::kInternal,
                 "the worker runtime's prelude failed: " + internal::DescribeException(v8_isolate, context, try_catch));
  }
  v8::Local<v8::Object> prelude_options = v8::Object::New(v8_isolate);
  auto set_option = [&](const char* name, bool value) {
    return prelude_options->Set(context, NewString(v8_isolate, name), v8::Boolean::New(v8_isolate, value))
        .FromMaybe(false);
  };
  if (!set_option("nodejsCompat", compatibility.nodejs_compat) || !set_option("nodejsAls", compatibility.nodejs_als) ||
      !set_option("populateProcessEnv", compatibility.populate_process_env)) {
    return Error(ErrorCode::kInternal, "the worker runtime's prelude options could not be made");
  }
  v8::Local<v8::Value> args[] = {natives, libraries, prelude_options};
  v8::Local<v8::Value> completion;
  if (!installer.As<v8::Function>()->Call(context, v8::Undefined(v8_isolate), 3, args).ToLocal(&completion) ||
      state->internals.IsEmpty()) {
    return Error(ErrorCode::kInternal,
                 "the worker runtime's prelude failed: " +
                     (try_catch.HasCaught() ? internal::DescribeException(v8_isolate, context, try_catch)
                                            : std::string("it did not hand over its internals")));
  }
  v8::Local<v8::Value> env;
  state->has_durable_objects = !options.durable_objects.empty();
  if (!MakeEnv(context, state.get(), options.bindings, options.durable_objects).ToLocal(&env) || !env->IsObject()) {
    return Error(ErrorCode::kInvalidArgument, "the worker's bindings could not be set up: " +
                                                  internal::DescribeException(v8_isolate, context, try_catch));
  }
  state->env.Reset(v8_isolate, env.As<v8::Object>());
  if (!options.fetch_handler.empty()) {
    HEAPPROF_RETURN_IF_ERROR(internal::LoadFetchHandler(state.get(), options.fetch_handler));
  }
  return WorkerRuntime(std::move(state));
}

WorkerKind WorkerRuntime::kind() const { return state_->kind; }
Isolate& WorkerRuntime::isolate() { return state_->isolate; }
bool WorkerRuntime::heap_limit_reached() const { return state_->isolate.heap_limit_reached(); }

void WorkerRuntime::Terminate() {
  state_->v8()->TerminateExecution();
  if (state_->owned_objects != nullptr) state_->owned_objects->TerminateAll();
}

WorkerRuntime* WorkerRuntime::DurableObjectRuntime(std::string_view binding, std::string_view name_or_id) {
  return state_->owned_objects == nullptr ? nullptr : state_->owned_objects->Find(binding, name_or_id);
}

Result<std::vector<DurableObjectReport>> WorkerRuntime::DurableObjects() {
  if (state_->owned_objects == nullptr) return std::vector<DurableObjectReport>{};
  return state_->owned_objects->Report();
}

HeapUsage WorkerRuntime::heap_usage() const {
  v8::HeapStatistics stats;
  state_->v8()->GetHeapStatistics(&stats);
  return {stats.used_heap_size(), state_->isolate.heap_limit_bytes()};
}

namespace {

// Runs the worker's handler on `request`; its errors do not name the request
// (Dispatch adds it).
DispatchResult Handle(WorkerRuntime::State* state, const WorkerRequest& request) {
  v8::Isolate* isolate = state->v8();
  WorkerScope scope(state);
  internal::Watchdog::Scope deadline(*state->watchdog);
  v8::Local<v8::Context> context = scope.context();
  const std::string what;  // Dispatch names the request
  v8::TryCatch try_catch(isolate);
  // Each request starts outside every AsyncLocalStorage.run() (node:async_hooks).
  context->SetContinuationPreservedEmbedderData(v8::Undefined(isolate));

  // The timers the request sets are its own, and end with it however it
  // ends: after its response is read and its waitUntil promises settle, or
  // when it fails. workerd cancels them when the request's IoContext goes
  // (docs/runtime.md, "Lifetimes"); kept, they would hold their closures
  // forever and show as a leak that workerd does not have.
  if (!CallInternal(state, context, "beginRequest")) return Failed(internal::ScriptFailure(state, try_catch, what));
  struct EndRequest {
    WorkerRuntime::State* state;
    v8::Local<v8::Context> context;
    ~EndRequest() {
      // A terminated isolate runs no JavaScript until the termination is
      // cancelled; the next request's beginRequest() drops these timers then.
      v8::TryCatch end_try(state->v8());
      if (!state->v8()->IsExecutionTerminating()) (void)CallInternal(state, context, "endRequest");
    }
  } end_request{state, context};

  // The prelude builds the Request, reading the request's strings through
  // natives.requestParts() inside its own frame (see State::pending_request).
  state->pending_request = &request;
  struct ClearPending {
    WorkerRuntime::State* state;
    ~ClearPending() { state->pending_request = nullptr; }
  } clear_pending{state};
  v8::Local<v8::Value> js_request;
  v8::Local<v8::Value> ctx;
  v8::Local<v8::Value> waits_value;  // ctx's waitUntil() promises
  if (!state->Internal("makeRequest")
           .As<v8::Function>()
           ->Call(context, v8::Undefined(isolate), 0, nullptr)
           .ToLocal(&js_request) ||
      !state->Internal("makeContext")
           .As<v8::Function>()
           ->Call(context, v8::Undefined(isolate), 0, nullptr)
           .ToLocal(&ctx) ||
      !state->Internal("currentWaits")
           .As<v8::Function>()
           ->Call(context, v8::Undefined(isolate), 0, nullptr)
           .ToLocal(&waits_value) ||
      !waits_value->IsArray()) {
    return Failed(internal::ScriptFailure(state, try_catch, what));
  }
  v8::Local<v8::Array> waits = waits_value.As<v8::Array>();

  v8::Local<v8::Value> result;
  if (state->kind == WorkerKind::kEventListener) {
    v8::Local<v8::Value> event_args[] = {js_request, ctx};
    v8::Local<v8::Value> event_pair;
    if (!state->Internal("makeFetchEvent")
             .As<v8::Function>()
             ->Call(context, v8::Undefined(isolate), 2, event_args)
             .ToLocal(&event_pair)) {
      return Failed(internal::ScriptFailure(state, try_catch, what));
    }
    v8::Local<v8::Value> event = event_pair.As<v8::Array>()->Get(context, 0).ToLocalChecked();
    v8::Local<v8::Object> event_state = event_pair.As<v8::Array>()->Get(context, 1).ToLocalChecked().As<v8::Object>();
    v8::Local<v8::Array> listeners = state->Internal("fetchListeners").As<v8::Array>();
    for (uint32_t i = 0; i < listeners->Length(); ++i) {
      v8::Local<v8::Value> listener = listeners->Get(context, i).ToLocalChecked();
      v8::Local<v8::Value> ignored;
      if (!listener.As<v8::Function>()->Call(context, v8::Undefined(isolate), 1, &event).ToLocal(&ignored)) {
        return Failed(internal::ScriptFailure(state, try_catch, what));
      }
    }
    if (!Get(context, event_state, "responded")->IsTrue()) {
      return {WorkerFailure::kBadResponse,
              Error(ErrorCode::kScriptError, "no fetch listener called event.respondWith()")};
    }
    result = Get(context, event_state, "response");
  } else {
    v8::Local<v8::Value> args[] = {js_request, state->env.Get(isolate), ctx};
    v8::Local<v8::Value> receiver = state->receiver.Get(isolate);
    if (!state->fetch.Get(isolate)->Call(context, receiver, 3, args).ToLocal(&result)) {
      return Failed(internal::ScriptFailure(state, try_catch, what));
    }
  }

  // The handler's promise and every waitUntil promise (the list may grow while we wait).
  auto settled = [&] {
    if (IsPending(result)) return false;
    for (uint32_t i = 0; i < waits->Length(); ++i) {
      if (IsPending(waits->Get(context, i).ToLocalChecked())) return false;
    }
    return true;
  };
  if (internal::ScriptError e = internal::RunUntil(state, settled, what.c_str()); !e.ok()) return Failed(std::move(e));

  auto rejection = [&](v8::Local<v8::Value> value) -> v8::Local<v8::Value> {
    if (value->IsPromise() && value.As<v8::Promise>()->State() == v8::Promise::kRejected) {
      return value.As<v8::Promise>()->Result();
    }
    return {};
  };
  if (v8::Local<v8::Value> reason = rejection(result); !reason.IsEmpty()) {
    return {WorkerFailure::kRejected,
            Error(ErrorCode::kScriptError,
                  "the handler's promise was rejected: " + internal::DescribeValue(isolate, context, reason))};
  }
  for (uint32_t i = 0; i < waits->Length(); ++i) {
    if (v8::Local<v8::Value> reason = rejection(waits->Get(context, i).ToLocalChecked()); !reason.IsEmpty()) {
      return {WorkerFailure::kRejected,
              Error(ErrorCode::kScriptError,
                    "a ctx.waitUntil() promise was rejected: " + internal::DescribeValue(isolate, context, reason))};
    }
  }
  v8::Local<v8::Value> response = result->IsPromise() ? result.As<v8::Promise>()->Result() : result;
  if (response->IsUndefined()) {
    return {WorkerFailure::kBadResponse,
            Error(ErrorCode::kScriptError, "the fetch handler returned undefined instead of a Response")};
  }
  return ReadResponse(state, response);
}

}  // namespace

DispatchResult WorkerRuntime::Dispatch(const WorkerRequest& request) {
  State* state = state_.get();
  if (state->kind == WorkerKind::kNotLoaded) {
    return {WorkerFailure::kNotRun, Error(ErrorCode::kFailedPrecondition, "no worker is loaded")};
  }
  if (state->isolate.heap_limit_reached()) {
    return {WorkerFailure::kHeapLimit,
            Error(ErrorCode::kResourceExhausted, "the worker reached its heap limit earlier")};
  }
  DispatchResult result = Handle(state, request);
  if (result.ok()) return result;
  std::string reason = result.status().message();
  return {result.failure(), Status(result.status().code(), internal::Said(request.method + " " + request.url, reason)),
          std::move(reason)};
}

Result<Session> WorkerRuntime::StartSession(const SessionOptions& options) {
  WorkerScope scope(state_.get());
  SessionOptions copy = options;
  if (copy.isolate_name.empty()) copy.isolate_name = state_->isolate.name();
  return Session::Start(state_->v8(), copy);
}

Result<Profile> WorkerRuntime::StopSession(Session session) {
  WorkerScope scope(state_.get());
  return std::move(session).StopAndBuild();
}

}  // namespace heapprof
