// Near-heap-limit capture for the Node.js addon. V8 forbids allocating or
// starting a GC inside the near-limit callback, so the callback only raises
// the limit and requests an interrupt; the interrupt (ordinary JS-thread
// context) closes the window, writes the in-use profile and restores the limit.
#include <v8.h>

#include "heapprof/node/addon_state.h"
#include "heapprof/pprof.h"

namespace heapprof::node_addon {
namespace {

constexpr size_t kHeadroom = 32u * 1024 * 1024;

void CaptureInInterrupt(v8::Isolate* isolate, void* data);

size_t OnNearHeapLimit(void* data, size_t current_limit, size_t initial_limit) {
  auto* state = static_cast<AddonState*>(data);
  if (state->initial_heap_limit == 0) state->initial_heap_limit = initial_limit;
  if (!state->near_limit_pending) {
    state->near_limit_pending = true;
    state->near_limit_raises = 0;
    state->isolate->RequestInterrupt(CaptureInInterrupt, state);
  }
  // Room for the GC and the snapshot that the interrupt will run; but only a
  // few times, so that a program the interrupt never reaches still fails.
  if (++state->near_limit_raises > 3) return current_limit;
  return current_limit + current_limit / 2 + kHeadroom;
}

void CaptureInInterrupt(v8::Isolate* isolate, void* data) {
  auto* state = static_cast<AddonState*>(data);
  state->near_limit_pending = false;
  if (state->session && state->session->active()) {
    Session session = std::move(*state->session);
    state->session.reset();
    Result<Profile> profile = std::move(session).StopAndBuild();
    Status written = profile.ok() ? WritePprofFile(state->near_limit_path, profile.value())
                                  : profile.status();
    state->near_limit_written = written.ok();
    if (!written.ok()) state->near_limit_error = written.message();
  } else {
    state->near_limit_error = "no profiling window was open when the heap neared its limit";
  }
  (void)isolate;
  // One capture per arming: restore the limit so the process then fails as it would have.
  DisarmNearHeapLimit(*state);
}

}  // namespace

void ArmNearHeapLimit(AddonState& state, std::string path) {
  state.near_limit_path = std::move(path);
  state.near_limit_error.clear();
  state.near_limit_written = false;
  if (state.near_limit_armed) return;
  state.isolate->AddNearHeapLimitCallback(OnNearHeapLimit, &state);
  state.near_limit_armed = true;
}

void DisarmNearHeapLimit(AddonState& state) {
  if (!state.near_limit_armed) return;
  state.isolate->RemoveNearHeapLimitCallback(OnNearHeapLimit, state.initial_heap_limit);
  state.near_limit_armed = false;
  state.initial_heap_limit = 0;
}

}  // namespace heapprof::node_addon
