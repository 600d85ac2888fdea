// The full GC that precedes an in-use snapshot.
#pragma once

#include <v8.h>

#include <functional>

namespace heapprof::internal {

// Name of the JS global V8 installs for --expose-gc-as; heapprof removes it.
inline constexpr char kGcGlobalName[] = "__heapprof_gc";

// Set by InitializeV8 when it enabled V8's API for a single full GC.
void SetFullGcAvailable(bool available);
// One full GC when heapprof started V8 (it enables the API for it), else
// `full_gc` when the embedder gave one, else a critical memory-pressure
// notification (a memory-reducing full GC, sometimes two).
void CollectGarbageForSnapshot(v8::Isolate* isolate, const std::function<void()>& full_gc);
// A memory-reducing full GC through a critical memory-pressure notification,
// on the isolate's thread (it runs at once there). V8 frees the dead
// ArrayBuffers' memory before it returns (a memory-reducing GC does not leave
// them to a concurrent sweeper).
void CollectGarbageReducingMemory(v8::Isolate* isolate);
// True while the current thread runs inside a V8 GC callback that heapprof
// installed (e.g. near the heap limit), where starting another GC is illegal.
bool InsideGcCallback();
// Marks the current thread as inside such a callback for the scope's life.
class GcCallbackScope {
 public:
  GcCallbackScope();
  ~GcCallbackScope();
  GcCallbackScope(const GcCallbackScope&) = delete;
  GcCallbackScope& operator=(const GcCallbackScope&) = delete;

 private:
  bool previous_;
};

// Removes the GC global from a context heapprof created.
void HideGcGlobal(v8::Isolate* isolate, v8::Local<v8::Context> context);

}  // namespace heapprof::internal
