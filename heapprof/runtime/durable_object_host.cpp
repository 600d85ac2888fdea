// Durable Objects each in an isolate of their own: the registry, the nested
// call into an object's isolate, and the natives of js/durable_objects.js.
#include "heapprof/runtime/durable_object_host.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "heapprof/runtime/worker_natives.h"
#include "heapprof/runtime/worker_state.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {
namespace {

WorkerRuntime::State* StateOf(const v8::FunctionCallbackInfo<v8::Value>& info) {
  return static_cast<WorkerRuntime::State*>(info.Data().As<v8::External>()->Value());
}

v8::Local<v8::Uint8Array> NewBytes(v8::Isolate* isolate, const void* data, size_t size) {
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, size);
  if (size > 0) std::memcpy(buffer->GetBackingStore()->Data(), data, size);
  return v8::Uint8Array::New(buffer, 0, size);
}

void Throw(v8::Isolate* isolate, const std::string& message) {
  isolate->ThrowException(v8::Exception::Error(NewString(isolate, message)));
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

DurableObjectHost::DurableObjectHost(const WorkerOptions& options) : options_(options) {}

DurableObjectHost::~DurableObjectHost() = default;

void DurableObjectHost::SetMainModule(std::string source, std::string filename, std::string module_root) {
  source_ = std::move(source);
  filename_ = std::move(filename);
  module_root_ = std::move(module_root);
}

Status DurableObjectHost::Make(DurableObjectEntry& entry) {
  const DurableObjectNamespaceOptions& ns = options_.durable_objects[entry.ns];
  WorkerOptions options = options_;
  options.name = ns.binding + ":" + (entry.name.empty() ? entry.hex : entry.name);
  options.on_near_heap_limit = nullptr;  // the worker's own hook is for the worker's isolate
  if (options_.on_durable_object_near_heap_limit) {
    options.on_near_heap_limit = [this, e = &entry](v8::Isolate*, size_t) {
      if (e->runtime != nullptr) options_.on_durable_object_near_heap_limit(ReportOf(*e), *e->runtime);
    };
  }
  HEAPPROF_ASSIGN_OR_RETURN(WorkerRuntime created, WorkerRuntime::CreateWith(options, this));
  auto runtime = std::make_unique<WorkerRuntime>(std::move(created));
  runtime->state_->serving = &entry;
  runtime->state_->module_root = module_root_;
  if (options_.on_durable_object_created) options_.on_durable_object_created(ReportOf(entry), *runtime);
  if (entry.made) ++entry.restarts;
  entry.made = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry.runtime = std::move(runtime);
  }
  Status loaded = entry.runtime->Load(source_, filename_);
  if (!loaded.ok()) return Error(loaded.code(), "Durable Object " + options.name + ": " + loaded.message());
  return Status::Ok();
}

Result<std::string> DurableObjectHost::Call(size_t ns, const std::string& hex, const std::string& name,
                                            std::string_view payload) {
  if (ns >= options_.durable_objects.size()) {
    return Error(ErrorCode::kInvalidArgument, "no Durable Object namespace " + std::to_string(ns));
  }
  EvictIdle();
  DurableObjectEntry* entry = nullptr;
  for (const auto& e : entries_) {
    if (e->ns == ns && e->hex == hex) entry = e.get();
  }
  if (entry == nullptr) {
    auto made = std::make_unique<DurableObjectEntry>();
    made->ns = ns;
    made->hex = hex;
    made->name = name;
    entry = made.get();
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back(std::move(made));
  }
  const std::string label =
      "Durable Object " + options_.durable_objects[ns].binding + ":" + (entry->name.empty() ? hex : entry->name);
  if (entry->busy) {
    return Error(ErrorCode::kFailedPrecondition,
                 label +
                     " was called while it runs an event (a call into itself, directly or through another object); "
                     "heapprof's embedded runtime runs an object's events one at a time, each to its end");
  }
  ++entry->requests;
  entry->last_event = std::chrono::steady_clock::now();
  if (entry->runtime != nullptr && entry->runtime->heap_limit_reached()) {
    return Error(ErrorCode::kResourceExhausted, label + " reached its heap limit earlier");
  }
  if (entry->runtime == nullptr) HEAPPROF_RETURN_IF_ERROR(Make(*entry));
  entry->busy = true;
  struct Unbusy {
    DurableObjectEntry* entry;
    ~Unbusy() { entry->busy = false; }
  } unbusy{entry};

  WorkerRuntime::State* state = entry->runtime->state_.get();
  v8::Isolate* isolate = state->v8();
  WorkerScope scope(state);
  Watchdog::Scope deadline(*state->watchdog);
  v8::Local<v8::Context> context = scope.context();
  v8::TryCatch try_catch(isolate);
  v8::Local<v8::Value> args[] = {v8::Integer::NewFromUnsigned(isolate, static_cast<uint32_t>(ns)),
                                 NewString(isolate, hex), NewString(isolate, entry->name),
                                 NewBytes(isolate, payload.data(), payload.size())};
  v8::Local<v8::Value> outcome;
  if (!state->Internal("durableObjectEvent")
           .As<v8::Function>()
           ->Call(context, v8::Undefined(isolate), 4, args)
           .ToLocal(&outcome)) {
    return ScriptFailure(state, try_catch, label).status;
  }
  HEAPPROF_RETURN_IF_ERROR(RunUntil(
      state, [&] { return !outcome->IsPromise() || outcome.As<v8::Promise>()->State() != v8::Promise::kPending; },
      label.c_str()));
  if (outcome->IsPromise()) {
    v8::Local<v8::Promise> promise = outcome.As<v8::Promise>();
    if (promise->State() == v8::Promise::kRejected) {
      return Error(ErrorCode::kScriptError, label + ": " + DescribeValue(isolate, context, promise->Result()));
    }
    outcome = promise->Result();
  }
  std::string_view bytes;
  if (!ViewBytes(outcome, &bytes)) {
    return Error(ErrorCode::kInternal, label + ": the event's outcome is not serialized bytes");
  }
  return std::string(bytes);
}

DurableObjectReport DurableObjectHost::ReportOf(const DurableObjectEntry& e) const {
  DurableObjectReport r;
  r.binding = options_.durable_objects[e.ns].binding;
  r.id = e.hex;
  r.name = e.name;
  r.requests = e.requests;
  r.restarts = e.restarts;
  if (e.runtime != nullptr) r.heap_used_bytes = e.runtime->heap_usage().used_bytes;
  return r;
}

void DurableObjectHost::EvictIdle() {
  if (options_.durable_object_idle_limit.count() <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& e : entries_) {
    if (e->busy || e->runtime == nullptr || now - e->last_event < options_.durable_object_idle_limit) continue;
    if (options_.on_durable_object_evicted) options_.on_durable_object_evicted(ReportOf(*e), *e->runtime);
    std::unique_ptr<WorkerRuntime> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      dropped = std::move(e->runtime);
    }
  }
}

std::vector<DurableObjectReport> DurableObjectHost::Report() {
  std::vector<DurableObjectReport> out;
  std::vector<const DurableObjectEntry*> sorted;
  for (const auto& e : entries_) {
    if (e->requests > 0) sorted.push_back(e.get());
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->ns < b->ns; });
  for (const DurableObjectEntry* e : sorted) out.push_back(ReportOf(*e));
  return out;
}

WorkerRuntime* DurableObjectHost::Find(std::string_view binding, std::string_view name_or_id) {
  const std::string id = Lower(name_or_id);
  for (const auto& e : entries_) {
    if (options_.durable_objects[e->ns].binding != binding) continue;
    if ((!e->name.empty() && e->name == name_or_id) || e->hex == id) return e->runtime.get();
  }
  return nullptr;
}

void DurableObjectHost::TerminateAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& e : entries_) {
    if (e->runtime != nullptr) e->runtime->Terminate();
  }
}

void ObjectCall(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  WorkerRuntime::State* state = StateOf(info);
  std::string_view view;
  if (state->objects == nullptr || !info[0]->IsUint32() || !ViewBytes(info[3], &view)) {
    Throw(isolate, "objectCall(ns, id, name, payload): no such Durable Object namespace or payload");
    return;
  }
  const std::string payload(view);  // the view is into this isolate's heap, which the call may move
  Result<std::string> outcome =
      state->objects->Call(info[0].As<v8::Uint32>()->Value(), ValueToString(isolate, context, info[1]),
                           ValueToString(isolate, context, info[2]), payload);
  if (!outcome.ok()) {
    Throw(isolate, outcome.status().message());
    return;
  }
  info.GetReturnValue().Set(NewBytes(isolate, outcome->data(), outcome->size()));
}

void ObjectStorage(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  WorkerRuntime::State* state = StateOf(info);
  if (state->serving == nullptr) {
    Throw(isolate, "ctx.storage is used outside the isolate of its Durable Object");
    return;
  }
  std::map<std::string, std::string>& storage = state->serving->storage;
  const std::string op = ValueToString(isolate, context, info[0]);
  if (op == "keys") {
    std::vector<v8::Local<v8::Value>> keys;
    keys.reserve(storage.size());
    for (const auto& [key, value] : storage) keys.push_back(NewString(isolate, key));
    info.GetReturnValue().Set(v8::Array::New(isolate, keys.data(), keys.size()));
    return;
  }
  if (op == "clear") {
    storage.clear();
    return;
  }
  const std::string key = ValueToString(isolate, context, info[1]);
  if (op == "get") {
    auto it = storage.find(key);
    if (it != storage.end()) info.GetReturnValue().Set(NewBytes(isolate, it->second.data(), it->second.size()));
  } else if (op == "put") {
    std::string_view bytes;
    if (!ViewBytes(info[2], &bytes)) {
      Throw(isolate, "objectStorage put: the value is not serialized bytes");
      return;
    }
    storage[key] = std::string(bytes);
  } else if (op == "delete") {
    info.GetReturnValue().Set(v8::Boolean::New(isolate, storage.erase(key) > 0));
  } else {
    Throw(isolate, "objectStorage: no operation " + op);
  }
}

void Serialize(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::ValueSerializer serializer(isolate);
  serializer.WriteHeader();
  if (serializer.WriteValue(isolate->GetCurrentContext(), info[0]).IsNothing()) return;  // threw DataCloneError
  std::pair<uint8_t*, size_t> buffer = serializer.Release();
  info.GetReturnValue().Set(NewBytes(isolate, buffer.first, buffer.second));
  std::free(buffer.first);
}

void Deserialize(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  std::string_view view;
  if (!ViewBytes(info[0], &view)) {
    Throw(isolate, "deserialize: expected serialized bytes");
    return;
  }
  const std::string bytes(view);
  v8::ValueDeserializer deserializer(isolate, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  v8::Local<v8::Value> value;
  if (deserializer.ReadHeader(context).FromMaybe(false) && deserializer.ReadValue(context).ToLocal(&value)) {
    info.GetReturnValue().Set(value);
  }
}

}  // namespace heapprof::internal
