// The Node.js addon: start/stop a heapprof window on the calling thread's
// isolate and hand back gzipped pprof bytes. Built against one Node's own
// headers (V8 API + node.h); V8 and node symbols resolve from the node process.
#include <node.h>
#include <node_buffer.h>
#include <v8.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "heapprof/core/pprof.h"
#include "heapprof/node/addon_state.h"
#include "heapprof/v8/session.h"

namespace heapprof::node_addon {

void Throw(v8::Isolate* isolate, const std::string& message) {
  std::string text = "heapprof: " + message;
  v8::Local<v8::String> s =
      v8::String::NewFromUtf8(isolate, text.data(), v8::NewStringType::kNormal, static_cast<int>(text.size()))
          .ToLocalChecked();
  isolate->ThrowException(v8::Exception::Error(s));
}

namespace {

// One state per isolate (the main thread and each worker load the addon apart).
std::mutex g_states_mutex;
std::unordered_map<v8::Isolate*, AddonState*> g_states;

AddonState& StateOf(const v8::FunctionCallbackInfo<v8::Value>& info) { return node_addon::StateOf(info.GetIsolate()); }

}  // namespace

// Reads an optional positive integer argument; false (and a thrown Error) on bad input.
bool ReadUint(const v8::FunctionCallbackInfo<v8::Value>& info, int index, const char* what, uint64_t& out) {
  v8::Isolate* isolate = info.GetIsolate();
  if (index >= info.Length() || info[index]->IsUndefined()) return true;
  if (!info[index]->IsNumber()) {
    Throw(isolate, std::string(what) + " must be a number");
    return false;
  }
  double v = info[index].As<v8::Number>()->Value();
  if (!(v >= 1) || v > 9.0e15 || v != static_cast<double>(static_cast<uint64_t>(v))) {
    Throw(isolate, std::string(what) + " must be a positive integer");
    return false;
  }
  out = static_cast<uint64_t>(v);
  return true;
}

bool ReadStartArgs(const v8::FunctionCallbackInfo<v8::Value>& info, AddonState& state, StartArgs& args) {
  v8::Isolate* isolate = info.GetIsolate();
  uint64_t depth = static_cast<uint64_t>(args.depth);
  if (!ReadUint(info, 0, "interval", args.interval) || !ReadUint(info, 1, "depth", depth)) return false;
  if (depth > 1024) {
    Throw(isolate, "depth must be between 1 and 1024");
    return false;
  }
  args.depth = static_cast<int>(depth);
  if (info.Length() > 2 && !info[2]->IsUndefined()) args.full_gc = info[2]->BooleanValue(isolate);
  state.full_gc.Reset();
  args.gc_function = info.Length() > 3 && info[3]->IsFunction();
  if (args.gc_function) state.full_gc.Reset(isolate, info[3].As<v8::Function>());
  return true;
}

// Calls the gc() kept in the state: a plain full GC that first finishes any
// incremental marking. Runs inside stop(), so a context is entered; no user
// JavaScript runs (gc is a V8 builtin).
void RunFullGc(AddonState& state) {
  v8::Isolate* isolate = state.isolate;
  v8::HandleScope scope(isolate);
  v8::TryCatch ignored(isolate);  // it does not throw; if it ever did, the snapshot is still taken
  v8::MaybeLocal<v8::Value> result =
      state.full_gc.Get(isolate)->Call(isolate->GetCurrentContext(), v8::Undefined(isolate), 0, nullptr);
  (void)result;
}

namespace {

// start(interval, depth, gcBeforeSnapshot, gc)
void Start(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  AddonState& state = StateOf(info);
  if (state.session && state.session->active()) {
    Throw(isolate, "a profile is already running; call stop() first");
    return;
  }
  if (state.leak_sampler) {
    Throw(isolate, "a leak session is running and holds V8's sampler; call leaks.stop() first");
    return;
  }
  SessionOptions options;
  StartArgs args{options.interval_bytes, options.max_stack_depth, options.gc_before_snapshot};
  if (!ReadStartArgs(info, state, args)) return;
  options.interval_bytes = args.interval;
  options.max_stack_depth = args.depth;
  options.gc_before_snapshot = args.full_gc;
  if (args.gc_function) options.full_gc = [&state] { RunFullGc(state); };
  options.isolate_name = "node";
  Result<Session> session = Session::Start(isolate, options);
  if (!session.ok()) {
    const Status& s = session.status();
    Throw(isolate, s.code() == ErrorCode::kUnavailable ? "the sampler is busy: " + s.message() : s.message());
    return;
  }
  state.session.emplace(std::move(session).value());
  state.options = options;
}

// stop() -> Buffer with the gzipped pprof profile.
void Stop(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  AddonState& state = StateOf(info);
  if (!state.session || !state.session->active()) {
    Throw(isolate, "no profile is running; call start() first");
    return;
  }
  Session session = std::move(*state.session);
  state.session.reset();
  Result<Profile> profile = std::move(session).StopAndBuild();
  if (!profile.ok()) {
    Throw(isolate, profile.status().message());
    return;
  }
  Result<std::string> bytes = EncodePprofGzip(profile.value());
  if (!bytes.ok()) {
    Throw(isolate, bytes.status().message());
    return;
  }
  v8::Local<v8::Object> buffer;
  if (!node::Buffer::Copy(isolate, bytes->data(), bytes->size()).ToLocal(&buffer)) return;
  info.GetReturnValue().Set(buffer);
}

void IsRunning(const v8::FunctionCallbackInfo<v8::Value>& info) {
  AddonState& state = StateOf(info);
  info.GetReturnValue().Set(state.session.has_value() && state.session->active());
}

// onHeapLimit(path): arm a one-shot capture of the running window near the limit.
void OnHeapLimit(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  AddonState& state = StateOf(info);
  if (info.Length() < 1 || !info[0]->IsString()) {
    Throw(isolate, "onHeapLimit needs a file path (string)");
    return;
  }
  v8::String::Utf8Value path(isolate, info[0]);
  if (*path == nullptr || path.length() == 0) {
    Throw(isolate, "onHeapLimit needs a non-empty file path");
    return;
  }
  ArmNearHeapLimit(state, std::string(*path, static_cast<size_t>(path.length())));
}

void StrategyName(const v8::FunctionCallbackInfo<v8::Value>& info) {
  info.GetReturnValue().Set(v8::String::NewFromUtf8(info.GetIsolate(), CompiledStrategy()).ToLocalChecked());
}

void Cleanup(void* data) {
  auto* state = static_cast<AddonState*>(data);
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    g_states.erase(state->isolate);
  }
  DisarmNearHeapLimit(*state);
  state->leak_tracker.reset();
  state->leak_sampler.reset();
  state->session.reset();
  state->full_gc.Reset();
  delete state;
}

}  // namespace

void SetMethod(v8::Local<v8::Context> context, v8::Local<v8::Object> exports, const char* name,
               v8::FunctionCallback fn) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();  // Context::GetIsolate is gone in newer V8
  v8::Local<v8::Function> f = v8::FunctionTemplate::New(isolate, fn)->GetFunction(context).ToLocalChecked();
  v8::Local<v8::String> key = v8::String::NewFromUtf8(isolate, name, v8::NewStringType::kInternalized).ToLocalChecked();
  f->SetName(key);
  exports->Set(context, key, f).Check();
}

AddonState& StateOf(v8::Isolate* isolate) {
  std::lock_guard<std::mutex> lock(g_states_mutex);
  return *g_states.at(isolate);
}

void Initialize(v8::Local<v8::Object> exports, v8::Local<v8::Context> context) {
  v8::Isolate* isolate = v8::Isolate::GetCurrent();  // Context::GetIsolate is gone in newer V8
  AddonState* state = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    AddonState*& slot = g_states[isolate];
    if (slot == nullptr) {  // loaded twice on one isolate: share the state
      slot = new AddonState();
      slot->isolate = isolate;
      state = slot;
    }
  }
  if (state != nullptr) node::AddEnvironmentCleanupHook(isolate, Cleanup, state);
  SetMethod(context, exports, "start", Start);
  SetMethod(context, exports, "stop", Stop);
  SetMethod(context, exports, "isRunning", IsRunning);
  SetMethod(context, exports, "onHeapLimit", OnHeapLimit);
  SetMethod(context, exports, "strategy", StrategyName);
  AddLeakMethods(context, exports);
}

}  // namespace heapprof::node_addon

NODE_MODULE_INIT(/* exports, module, context */) {
  (void)module;
  heapprof::node_addon::Initialize(exports, context);
}
