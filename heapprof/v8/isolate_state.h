// The state behind heapprof::Isolate, shared by the V8-facing code.
#pragma once

#include <v8.h>

#include <atomic>
#include <memory>
#include <string>

#include "heapprof/v8/v8_host.h"

namespace heapprof {

struct Isolate::State {
  v8::Isolate* isolate = nullptr;
  std::unique_ptr<v8::ArrayBuffer::Allocator> allocator;
  v8::Global<v8::Context> context;
  std::string name;
  size_t heap_limit_bytes = 0;
  NearHeapLimitHook on_near_heap_limit;
  std::atomic<bool> heap_limit_reached{false};
  int near_limit_calls = 0;
  bool hook_pending = false;  // near the limit, the hook waits for an interrupt

  // Runs the near-limit hook if the limit was reached and it has not run yet
  // (call after JS returns: the interrupt only fires while JS runs).
  void RunPendingNearLimitHook() {
    if (!hook_pending) return;
    hook_pending = false;
    on_near_heap_limit(isolate, heap_limit_bytes);
  }

  v8::Local<v8::Context> Context() const { return context.Get(isolate); }
};

namespace internal {
// The State of an Isolate, for heapprof's own V8-facing code (not API).
class IsolateAccess {
 public:
  static Isolate::State* Of(const Isolate& isolate) { return isolate.state_.get(); }
};
}  // namespace internal

}  // namespace heapprof
