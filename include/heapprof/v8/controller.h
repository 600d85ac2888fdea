// On-demand profiling of live isolates. The embedder registers isolates under
// names; any thread asks for a window on a target; the controller touches the
// isolate only for the lifecycle steps (start; stop + snapshot), on the
// isolate's own thread, and builds and encodes the profile on its own thread.
//
// How the controller reaches an isolate's thread: V8 interrupts while the
// isolate runs JS (Isolate::RequestInterrupt), and Controller::Pump() from the
// embedder's loop while it is idle (call it between tasks; it is cheap).
//
// Each target has one always-on sampler (heapprof/v8/sampler.h), started by
// its first window, near-limit capture or live snapshot and stopped only by
// Unregister. A window is a range of the sampler's sample ids, so windows on
// one target may overlap (each gets the alloc_*/inuse_* of its own range) as
// long as they share the interval and stack depth; a near-limit capture and
// LiveSnapshot see every sample alive, whatever its age.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"

namespace v8 {
class Isolate;
}  // namespace v8

namespace heapprof {

// What a window produced: the model and its gzipped pprof encoding.
struct WindowProfile {
  std::string target;
  Profile profile;
  std::string pprof_gzip;
};

struct WindowRequest {
  std::string target;  // a registered name
  // How long the window stays open; a year or more means until EndWindows.
  std::chrono::nanoseconds duration = std::chrono::seconds(10);
  SessionOptions options;
  // When the target is unregistered mid-window (its isolate ends, e.g. a
  // replica restarts): false, the request fails (kNotFound); true, it yields
  // what the window saw until then, with a "window_end" comment saying so.
  bool partial_on_unregister = false;
};

// Receives each window of a continuous run, or a near-limit capture.
using ProfileSink = std::function<void(Result<WindowProfile>)>;

class Controller {
 public:
  Controller();
  ~Controller();  // Shutdown()
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Makes an isolate a target under `name` (e.g. "worker@v3" or an object id).
  // Call on the isolate's thread.
  Status Register(const std::string& name, v8::Isolate* isolate);
  Status Register(const std::string& name, Isolate& isolate);
  // Removes a target. Call on the isolate's thread, before disposing it: an
  // open window is closed and its request ends with an error.
  Status Unregister(const std::string& name);
  std::vector<std::string> Targets() const;

  // Runs lifecycle steps waiting for this isolate. Call on its thread when it
  // is idle (not running JS); no-op when nothing waits.
  void Pump(v8::Isolate* isolate);
  void Pump(Isolate& isolate);
  // How many lifecycle steps were queued so far, on every target. A step
  // queued after a read of this changes it, so an embedder with many idle
  // isolates pumps them only when it changed since its last round.
  uint64_t StepsPosted() const;

  // Opens a window on the target from any thread; the future yields the
  // profile after `duration`, or an error (unknown target, already being
  // profiled at another interval or stack depth, sampler busy, target
  // unregistered, controller shut down). Windows at the same interval and
  // depth overlap freely.
  // The window opens at the target's next interrupt or Pump after this call
  // returns: on the isolate's own thread, Profile() then Pump() opens it now.
  std::future<Result<WindowProfile>> Profile(const WindowRequest& request);
  // The same; `window_id` (if given) gets the window's id for EndWindow.
  std::future<Result<WindowProfile>> Profile(const WindowRequest& request, uint64_t* window_id);
  // Cuts short one window of Profile (by its id): it delivers what it has so
  // far; the target's other windows go on. Any thread; does not wait; an
  // unknown or finished id is ignored.
  void EndWindow(uint64_t window_id);

  // Back-to-back windows of `window` length on the target until stopped,
  // each handed to `sink`. Returns an id for StopContinuous.
  Result<uint64_t> StartContinuous(const WindowRequest& request, ProfileSink sink);
  // Ends a continuous run after delivering its last, partial window. Blocks
  // until then: call it from any thread but the target isolate's.
  void StopContinuous(uint64_t id);

  // Cuts short every window requested before this call (Profile and
  // continuous runs): each delivers the profile of what it has so far, and a
  // continuous run ends after that partial window. Windows requested later run
  // their full length. Any thread; does not wait. (E.g. on Ctrl-C.)
  void EndWindows();
  // The same for one target's windows (e.g. after its last request).
  void EndWindows(const std::string& name);
  // Whether a requested window or continuous run holds the target.
  bool Profiling(const std::string& name) const;

  // Every sample alive on the target now, whatever its age (live = true,
  // allocated = false; sample ids are the sampler's), after a full GC when
  // `full_gc`. Starts the target's sampler if none runs yet (with `options`'
  // interval and depth; a running sampler keeps its own), so a first call
  // sees nothing older than itself. Any thread; answered at the target's
  // next interrupt or Pump.
  std::future<Result<RawSnapshot>> LiveSnapshot(const std::string& target, bool full_gc);
  std::future<Result<RawSnapshot>> LiveSnapshot(const std::string& target, bool full_gc, const SessionOptions& options);

  // Near-heap-limit capture: the target's sampler runs from now on (with
  // `options`' interval, unless a window started it already); when V8 nears
  // the heap limit the controller raises the limit a little, captures every
  // sample alive (in-use only, any age) into `sink`, and restores the limit.
  // Open windows go on. The reported heap limit is the configured one. Call
  // on the isolate's thread. Without `between_windows` the sampler starts
  // with the first window only, and a capture with no window open gives the
  // sink an error.
  Status EnableNearHeapLimitCapture(const std::string& name, ProfileSink sink, const SessionOptions& options = {},
                                    bool between_windows = true);

  // Fails every request in flight with an error and joins the threads.
  void Shutdown();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Writes each profile a sink gets to DIR/NAME-<start-time>.pb.gz (atomically),
// and reports errors to `on_error`.
ProfileSink RotatingFileSink(const std::string& directory, const std::string& name,
                             std::function<void(const Status&)> on_error = {});

}  // namespace heapprof
