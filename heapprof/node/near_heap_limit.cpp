// Near-heap-limit capture for the Node.js addon. The profile is taken inside
// V8's near-heap-limit callback itself: V8 calls it with garbage collection
// explicitly allowed and a handle scope open, and Node's own
// --heapsnapshot-near-heap-limit writes a whole heap snapshot from there. An
// interrupt requested from the callback is no substitute: on V8 14 (Node 26)
// a hot optimized allocation loop ran no interrupt check before the raised
// limits ran out, so nothing was written.
// No GC precedes the snapshot: V8 has just run its last mark-compacts, so
// what the samples say is live is fresh, and a GC here would only re-enter.
#include <v8.h>

#include <cstdio>

#include "heapprof/core/pprof.h"
#include "heapprof/node/addon_state.h"
#include "heapprof/v8/gc.h"

namespace heapprof::node_addon {
namespace {

// Room V8 gets when the capture's own allocations start a GC that calls back.
constexpr size_t kHeadroom = 32u * 1024 * 1024;

// Closes the window and writes its profile; a failure is reported on stderr
// (the process is about to run out of memory: there is no caller to tell).
void Capture(AddonState& state) {
  Status written;
  if (state.session && state.session->active()) {
    Session session = std::move(*state.session);
    state.session.reset();
    internal::GcCallbackScope no_gc;  // see the top of the file
    Result<Profile> profile = std::move(session).StopAndBuild();
    written = profile.ok() ? WritePprofFile(state.near_limit_path, profile.value()) : profile.status();
  } else {
    written = Error(ErrorCode::kFailedPrecondition, "no profiling window was open");
  }
  if (written.ok()) {
    std::fprintf(stderr, "heapprof: heap near its limit, wrote %s\n", state.near_limit_path.c_str());
  } else {
    std::fprintf(stderr, "heapprof: heap near its limit, no profile written to %s: %s\n", state.near_limit_path.c_str(),
                 written.message().c_str());
  }
}

size_t OnNearHeapLimit(void* data, size_t current_limit, size_t /*initial_limit*/) {
  auto* state = static_cast<AddonState*>(data);
  if (state->near_limit_capturing) {  // from a GC that the capture's allocations started
    state->near_limit_raised = current_limit + kHeadroom;
    return state->near_limit_raised;
  }
  state->near_limit_capturing = true;
  state->near_limit_raised = current_limit;
  Capture(*state);
  state->near_limit_capturing = false;
  // One capture per arming. The limit is raised once more, just so that the
  // next near-limit event reaches whoever handled it before heapprof: V8's
  // fatal OOM, a worker's resourceLimits (the worker is stopped, not the
  // process), or --heapsnapshot-near-heap-limit.
  DisarmNearHeapLimit(*state);
  return state->near_limit_raised + kHeadroom;
}

}  // namespace

void ArmNearHeapLimit(AddonState& state, std::string path) {
  state.near_limit_path = std::move(path);
  if (state.near_limit_armed) return;
  state.isolate->AddNearHeapLimitCallback(OnNearHeapLimit, &state);
  state.near_limit_armed = true;
}

void DisarmNearHeapLimit(AddonState& state) {
  if (!state.near_limit_armed) return;
  state.isolate->RemoveNearHeapLimitCallback(OnNearHeapLimit, 0);
  state.near_limit_armed = false;
}

}  // namespace heapprof::node_addon
