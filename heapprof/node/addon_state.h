// Per-isolate state of the Node.js addon: the open window and the armed
// near-heap-limit capture. One per loaded instance (main thread or worker).
#pragma once

#include <v8.h>

#include <optional>
#include <string>

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
};

// Arms the capture: installs V8's near-heap-limit callback on the isolate.
void ArmNearHeapLimit(AddonState& state, std::string path);
// Removes the callback if it is installed (the limit is left as it is).
void DisarmNearHeapLimit(AddonState& state);

}  // namespace heapprof::node_addon
