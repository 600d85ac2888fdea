// On-demand profiling of live isolates. The embedder registers isolates under
// names; any thread asks for a window on a target; the controller touches the
// isolate only for the lifecycle steps (start; stop + snapshot), on the
// isolate's own thread, and builds and encodes the profile on its own thread.
//
// How the controller reaches an isolate's thread: V8 interrupts while the
// isolate runs JS (Isolate::RequestInterrupt), and Controller::Pump() from the
// embedder's loop while it is idle (call it between tasks; it is cheap).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "heapprof/profile.h"
#include "heapprof/status.h"
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

  // Opens a window on the target from any thread; the future yields the
  // profile after `duration`, or an error (unknown target, already being
  // profiled, sampler busy, target unregistered, controller shut down).
  // The window opens at the target's next interrupt or Pump after this call
  // returns: on the isolate's own thread, Profile() then Pump() opens it now.
  std::future<Result<WindowProfile>> Profile(const WindowRequest& request);

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

  // Near-heap-limit capture: while no requested window is open, the target
  // keeps a background window; when V8 nears the heap limit the controller
  // raises the limit a little, captures the in-use profile into `sink`, and
  // restores the limit. Call on the isolate's thread. Without
  // `between_windows` only a requested window is captured (the sink gets an
  // error when none was open).
  Status EnableNearHeapLimitCapture(const std::string& name, ProfileSink sink,
                                    const SessionOptions& options = {}, bool between_windows = true);

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
