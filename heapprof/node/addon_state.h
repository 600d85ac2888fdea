// Per-isolate state of the Node.js addon: the open window and the armed
// near-heap-limit capture. One per loaded instance (main thread or worker).
#pragma once

#include <v8.h>

#include <optional>
#include <string>

#include "heapprof/session.h"

namespace heapprof::node_addon {

struct AddonState {
  v8::Isolate* isolate = nullptr;
  std::optional<Session> session;
  SessionOptions options;
  // Near-heap-limit capture: where to write, and whether it is armed/pending.
  std::string near_limit_path;
  bool near_limit_armed = false;
  bool near_limit_pending = false;
  int near_limit_raises = 0;  // limit raises while the capture is pending
  size_t initial_heap_limit = 0;
  std::string near_limit_error;  // last failure of a capture, for the JS side
  bool near_limit_written = false;
};

// Arms the capture: installs V8's near-heap-limit callback on the isolate.
void ArmNearHeapLimit(AddonState& state, std::string path);
// Removes the callback (and restores the limit) if it is installed.
void DisarmNearHeapLimit(AddonState& state);

}  // namespace heapprof::node_addon
