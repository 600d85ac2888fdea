// heapprof::Isolate: an isolate with a heap limit that ends scripts cleanly
// instead of aborting the process when the limit is reached.
#include <v8.h>

#include <algorithm>
#include <string_view>

#include "heapprof/v8/gc.h"
#include "heapprof/v8/heap_limit.h"
#include "heapprof/v8/isolate_state.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof {
namespace {

constexpr size_t kHeadroom = 16u * 1024 * 1024;

// Runs the embedder's hook outside any GC (V8 forbids starting a GC, and
// allocating freely, inside the near-limit callback), then ends the script.
void RunHookInInterrupt(v8::Isolate* isolate, void* data) {
  auto* state = static_cast<Isolate::State*>(data);
  state->RunPendingNearLimitHook();
  isolate->TerminateExecution();
}

// V8 calls this when the heap nears its limit. With a hook, heapprof raises
// the limit and asks V8 to interrupt the running JS, where the hook captures
// what it needs; then the script is terminated with enough room to unwind
// instead of a fatal OOM. Without a hook, it terminates at once.
size_t OnNearHeapLimit(void* data, size_t current_limit, size_t /*initial_limit*/) {
  auto* state = static_cast<Isolate::State*>(data);
  state->heap_limit_reached.store(true);
  ++state->near_limit_calls;
  if (state->near_limit_calls == 1 && state->on_near_heap_limit) {
    state->hook_pending = true;
    state->isolate->RequestInterrupt(RunHookInInterrupt, state);
    return current_limit + current_limit / 2 + kHeadroom;
  }
  if (state->hook_pending && state->near_limit_calls <= 3) {
    return current_limit + current_limit / 4 + kHeadroom;  // the interrupt has not run yet
  }
  state->isolate->TerminateExecution();
  return current_limit + current_limit / 2 + kHeadroom;
}

// On the isolate's thread once its ArrayBuffers passed their share of the
// limit (ArrayBufferBudget): a memory-reducing GC frees the buffers that are
// garbage, then the V8 heap and the buffers still held must fit the limit
// together; if they do not, the script ends as at the heap limit.
void CheckArrayBuffers(v8::Isolate* isolate, void* data) {
  auto* state = static_cast<Isolate::State*>(data);
  if (state->heap_limit_reached.load()) return;
  internal::CollectGarbageReducingMemory(isolate);
  v8::HeapStatistics stats;
  isolate->GetHeapStatistics(&stats);
  size_t heap = stats.used_heap_size();
  size_t buffers = state->allocator->live_bytes();
  if (heap + buffers <= state->heap_limit_bytes) {
    // Check again when the buffers could fill what the heap leaves (at least
    // a sixteenth of the limit, so a full heap does not mean a GC per buffer).
    size_t room = heap < state->heap_limit_bytes ? state->heap_limit_bytes - heap : 0;
    state->allocator->Rearm(std::max(room, state->heap_limit_bytes / 16));
    return;
  }
  state->array_buffer_bytes_at_limit = buffers;
  state->heap_limit_reached.store(true);
  if (++state->near_limit_calls == 1 && state->on_near_heap_limit) {
    state->hook_pending = true;
    state->RunPendingNearLimitHook();
  }
  isolate->TerminateExecution();
}

}  // namespace

Isolate::Isolate(std::unique_ptr<State> state) : state_(std::move(state)) {}
Isolate::Isolate(Isolate&&) noexcept = default;
Isolate& Isolate::operator=(Isolate&& other) noexcept {
  if (this != &other) {
    Isolate dying(std::move(*this));
    state_ = std::move(other.state_);
  }
  return *this;
}

Isolate::~Isolate() {
  if (!state_ || !state_->isolate) return;
  state_->context.Reset();
  if (state_->lazy_globals) state_->lazy_globals->Reset();
  state_->isolate->RemoveNearHeapLimitCallback(OnNearHeapLimit, 0);
  state_->isolate->Dispose();
}

size_t OldGenerationLimitBytes(size_t heap_limit_bytes) {
  v8::ResourceConstraints constraints;
  constraints.ConfigureDefaultsFromHeapSize(0, heap_limit_bytes);  // as Create configures every isolate
  return constraints.max_old_generation_size_in_bytes();
}

OldGenerationUse OldGenerationNow(v8::Isolate* isolate) {
  OldGenerationUse out;
  for (size_t i = 0; i < isolate->NumberOfHeapSpaces(); ++i) {
    v8::HeapSpaceStatistics space;
    if (!isolate->GetHeapSpaceStatistics(&space, i)) continue;
    const std::string_view name = space.space_name() ? space.space_name() : "";
    if (name.starts_with("new_") || name.starts_with("read_only")) continue;  // young generation; not counted by V8
    out.used_bytes += space.space_used_size();
    out.committed_bytes += space.space_size();
  }
  return out;
}

Result<Isolate> Isolate::Create(const IsolateOptions& options) {
  HEAPPROF_RETURN_IF_ERROR(InitializeV8());
  if (options.heap_limit_bytes < 4u * 1024 * 1024) {
    return Error(ErrorCode::kInvalidArgument, "heap limit must be at least 4 MiB");
  }
  auto state = std::make_unique<State>();
  state->name = options.name;
  state->heap_limit_bytes = options.heap_limit_bytes;
  state->on_near_heap_limit = options.on_near_heap_limit;
  Isolate::State* raw = state.get();
  state->allocator = std::make_unique<internal::ArrayBufferBudget>(options.heap_limit_bytes, [raw] {
    if (raw->isolate != nullptr) raw->isolate->RequestInterrupt(CheckArrayBuffers, raw);
  });

  v8::Isolate::CreateParams params;
  params.array_buffer_allocator = state->allocator.get();
  params.constraints.ConfigureDefaultsFromHeapSize(0, options.heap_limit_bytes);
  state->isolate = v8::Isolate::New(params);
  if (state->isolate == nullptr) return Error(ErrorCode::kInternal, "V8 could not create an isolate");
  state->isolate->AddNearHeapLimitCallback(OnNearHeapLimit, state.get());

  {
    v8::Isolate::Scope isolate_scope(state->isolate);
    v8::HandleScope handle_scope(state->isolate);
    v8::Local<v8::ObjectTemplate> global;
    if (options.lazy_globals) {
      state->lazy_globals = std::make_unique<internal::LazyGlobals>();
      global = v8::ObjectTemplate::New(state->isolate);
      state->lazy_globals->InstallOn(state->isolate, global);
    }
    v8::Local<v8::Context> context = v8::Context::New(state->isolate, nullptr, global);
    internal::HideGcGlobal(state->isolate, context);
    state->context.Reset(state->isolate, context);
  }
  return Isolate(std::move(state));
}

v8::Isolate* Isolate::get() const { return state_ ? state_->isolate : nullptr; }
const std::string& Isolate::name() const { return state_->name; }
size_t Isolate::heap_limit_bytes() const { return state_->heap_limit_bytes; }
bool Isolate::heap_limit_reached() const { return state_ && state_->heap_limit_reached.load(); }

Result<std::string> Isolate::RunScript(std::string_view source, std::string_view resource_name) {
  if (!state_ || !state_->isolate) return Error(ErrorCode::kFailedPrecondition, "isolate was moved from");
  if (heap_limit_reached()) {
    return Error(ErrorCode::kResourceExhausted, "the isolate reached its heap limit earlier");
  }
  v8::Isolate* isolate = state_->isolate;
  v8::Isolate::Scope isolate_scope(isolate);
  v8::HandleScope handle_scope(isolate);
  v8::Local<v8::Context> context = state_->Context();
  v8::Context::Scope context_scope(context);
  v8::TryCatch try_catch(isolate);

  v8::ScriptOrigin origin(isolate, internal::NewString(isolate, resource_name));
  v8::Local<v8::Script> script;
  v8::Local<v8::Value> result;
  bool ok = v8::Script::Compile(context, internal::NewString(isolate, source), &origin).ToLocal(&script) &&
            script->Run(context).ToLocal(&result);
  state_->RunPendingNearLimitHook();
  if (heap_limit_reached()) {
    isolate->CancelTerminateExecution();
    return Error(ErrorCode::kResourceExhausted, "the script exceeded the isolate's heap limit of " +
                                                    std::to_string(state_->heap_limit_bytes / (1024 * 1024)) + " MiB" +
                                                    state_->LimitDetail());
  }
  state_->RunPendingNearLimitHook();
  if (!ok) return Error(ErrorCode::kScriptError, internal::DescribeException(isolate, context, try_catch));
  return internal::ValueToString(isolate, context, result);
}

}  // namespace heapprof
