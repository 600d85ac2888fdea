// The full GC before an in-use snapshot, and knowing when none may start.
#include "heapprof/v8/gc.h"

#include <atomic>

namespace heapprof::internal {
namespace {

std::atomic<bool> g_full_gc_available{false};
thread_local bool t_inside_gc_callback = false;

}  // namespace

void SetFullGcAvailable(bool available) { g_full_gc_available.store(available); }

bool InsideGcCallback() { return t_inside_gc_callback; }
GcCallbackScope::GcCallbackScope() : previous_(t_inside_gc_callback) { t_inside_gc_callback = true; }
GcCallbackScope::~GcCallbackScope() { t_inside_gc_callback = previous_; }

void CollectGarbageForSnapshot(v8::Isolate* isolate, const std::function<void()>& full_gc) {
  if (InsideGcCallback()) return;  // a GC is already running on this thread
  if (g_full_gc_available.load()) {
    isolate->RequestGarbageCollectionForTesting(v8::Isolate::kFullGarbageCollection);
  } else if (full_gc) {
    full_gc();
  } else {
    // V8 was started by someone else (e.g. Node.js), so the testing API is off.
    CollectGarbageReducingMemory(isolate);
  }
}

// A critical memory-pressure notification on the isolate's thread runs a full
// GC at once (usually one, where LowMemoryNotification runs up to seven):
// stop() on Node 20 with 32 MiB kept took 31-38 ms instead of 55-62 ms, Node 26
// 39-50 ms instead of 58-71 ms, with the same in-use bytes. V8 only acts on a
// change to kCritical, so the level goes to kNone first, and back to kNone
// after (V8 then stops acting as if under pressure).
void CollectGarbageReducingMemory(v8::Isolate* isolate) {
  if (InsideGcCallback()) return;
  isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kNone);
  isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kCritical);
  isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kNone);
}

void HideGcGlobal(v8::Isolate* isolate, v8::Local<v8::Context> context) {
  v8::Local<v8::String> name = v8::String::NewFromUtf8Literal(isolate, kGcGlobalName, v8::NewStringType::kInternalized);
  // The extension declares it like a `var` (not deletable): overwrite it.
  if (!context->Global()->Delete(context, name).FromMaybe(false)) {
    context->Global()->Set(context, name, v8::Undefined(isolate)).FromMaybe(false);
  }
}

}  // namespace heapprof::internal
