// Per-isolate state of the Node.js addon: the open window and the armed
// near-heap-limit capture. One per loaded instance (main thread or worker).
#pragma once

#include <v8.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "heapprof/core/leaks.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/v8/sampler.h"
#include "heapprof/v8/session.h"

namespace heapprof::node_addon {

struct AddonState {
  v8::Isolate* isolate = nullptr;
  std::optional<Session> session;
  SessionOptions options;
  // The gc() index.js obtained (see there), called for the GC before the
  // in-use snapshot; empty: the session falls back to a memory-pressure GC.
  v8::Global<v8::Function> full_gc;
  // Near-heap-limit capture: where to write, whether it is armed, and
  // whether a capture is running (V8 may call back from a GC it starts).
  std::string near_limit_path;
  bool near_limit_armed = false;
  bool near_limit_capturing = false;
  size_t near_limit_raised = 0;  // the heap limit V8 was given while capturing
  // A leak session (leaks.cpp): the always-on sampler, the tracker of its
  // live snapshots, the last snapshot (for the profile) and what they cost.
  std::unique_ptr<Sampler> leak_sampler;
  std::unique_ptr<LeakTracker> leak_tracker;
  RawSnapshot leak_last;
  bool leak_full_gc = true;
  uint64_t leak_looks = 0;
  int64_t leak_snapshot_nanos_max = 0, leak_snapshot_nanos_total = 0;
};

// Adds leaksStart, leaksSnapshot, leaksReport, leaksProfile and leaksStop (leaks.cpp).
void AddLeakMethods(v8::Local<v8::Context> context, v8::Local<v8::Object> exports);
// Calls the gc() kept in the state (addon.cpp): the full GC before a snapshot.
void RunFullGc(AddonState& state);
// The state of the calling isolate (addon.cpp).
AddonState& StateOf(v8::Isolate* isolate);
// Throws a JavaScript Error "heapprof: message" (addon.cpp).
void Throw(v8::Isolate* isolate, const std::string& message);
// Reads the optional positive integer argument `index` into `out`; false
// (and a thrown Error naming `what`) on bad input (addon.cpp).
bool ReadUint(const v8::FunctionCallbackInfo<v8::Value>& info, int index, const char* what, uint64_t& out);
// The arguments start() and leaksStart() share: (interval, depth,
// gcBeforeSnapshot, gc). The fields hold the defaults when called; false
// (and a thrown Error) on bad input; a gc function is kept in state.full_gc.
struct StartArgs {
  uint64_t interval = 0;
  int depth = 0;
  bool full_gc = true;
  bool gc_function = false;
};
bool ReadStartArgs(const v8::FunctionCallbackInfo<v8::Value>& info, AddonState& state, StartArgs& args);
// Sets exports[name] = fn (addon.cpp).
void SetMethod(v8::Local<v8::Context> context, v8::Local<v8::Object> exports, const char* name,
               v8::FunctionCallback fn);

// Arms the capture: installs V8's near-heap-limit callback on the isolate.
void ArmNearHeapLimit(AddonState& state, std::string path);
// Removes the callback if it is installed (the limit is left as it is).
void DisarmNearHeapLimit(AddonState& state);

}  // namespace heapprof::node_addon
