// The state behind heapprof::Isolate, shared by the V8-facing code.
#pragma once

#include <v8.h>

#include <atomic>
#include <memory>
#include <string>

#include "heapprof/v8/array_buffer_budget.h"
#include "heapprof/v8/lazy_globals.h"
#include "heapprof/v8/v8_host.h"

namespace heapprof {

struct Isolate::State {
  v8::Isolate* isolate = nullptr;
  std::unique_ptr<internal::ArrayBufferBudget> allocator;  // counts ArrayBuffer bytes toward the limit
  v8::Global<v8::Context> context;
  std::unique_ptr<internal::LazyGlobals> lazy_globals;  // with IsolateOptions::lazy_globals
  std::string name;
  size_t heap_limit_bytes = 0;
  NearHeapLimitHook on_near_heap_limit;
  std::atomic<bool> heap_limit_reached{false};
  size_t array_buffer_bytes_at_limit = 0;  // non-zero when the ArrayBuffers' bytes took the isolate over its limit
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

  // " (N MiB of it in ArrayBuffers)" when those took the isolate over its limit, else "".
  std::string LimitDetail() const {
    if (array_buffer_bytes_at_limit == 0) return "";
    return " (" + std::to_string(array_buffer_bytes_at_limit / (1024 * 1024)) + " MiB of it in ArrayBuffers)";
  }
};

namespace internal {
// The State of an Isolate, for heapprof's own V8-facing code (not API).
class IsolateAccess {
 public:
  static Isolate::State* Of(const Isolate& isolate) { return isolate.state_.get(); }
};
// The isolate's lazy-globals table, or nullptr when it was made without one.
inline LazyGlobals* LazyGlobalsOf(const Isolate& isolate) { return IsolateAccess::Of(isolate)->lazy_globals.get(); }
}  // namespace internal

}  // namespace heapprof
