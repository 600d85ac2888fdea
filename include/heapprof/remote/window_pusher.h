// Each closed window of a profiled target, pushed to a continuous-profiling
// store (heapprof/remote/pyroscope_push.h) under the labels of who runs it:
// __name__=memory, service_name, __delta__=false, runtime, heapprof_version,
// version, the target's own label (replica by default) and the embedder's.
// What serve, run and attach push with --push, and the push hook of the C++
// API: an embedder hands it every window of Controller::StartContinuous with
//   controller.StartContinuous(request, remote::PushingSink(pusher));
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"
#include "heapprof/remote/pyroscope_push.h"

namespace heapprof::remote {

// Who is pushing: the automatic labels of every series.
struct PushIdentity {
  std::string service_name;  // the worker's name (its config's), else the script's stem
  std::string version;       // e.g. a short SHA-256 of the main module; "" leaves the label out
  std::string runtime;       // "embedded", "workerd", "node", ...
  // The label naming each window's target: "replica" for replicas of one
  // worker; an embedder whose targets are Durable Objects (an isolate per
  // object) says "durable_object".
  std::string target_label = "replica";
  // More labels (NAME, VALUE): one with an automatic label's name replaces it;
  // __name__, __delta__ and the target label are refused.
  std::vector<PushLabel> extra;
};

// The push's counters, as the debug index and the final reports show them.
struct WindowPushStats {
  PushStats push;             // the pusher's (sent, retried, dropped, refused, queued, last error)
  uint64_t queued_bytes = 0;  // gzipped bytes waiting now
  uint64_t failed = 0;        // windows that failed before reaching the pusher (the window or its split)
  uint64_t split = 0;         // windows pushed as more than one profile (the store's limits)
};

class WindowPusher {
 public:
  // Checks the labels (as the store will see them) and starts the pusher.
  static Result<std::unique_ptr<WindowPusher>> Start(PushOptions options, PushIdentity identity);
  WindowPusher(const WindowPusher&) = delete;
  WindowPusher& operator=(const WindowPusher&) = delete;

  // Splits, labels and queues one window of `target`; never waits for the
  // network. Any thread.
  void Window(const std::string& target, const Profile& profile);
  // A window that never came (its error); counted, said in the log.
  void Failed(const std::string& target, const Status& error);
  // Pushes what is queued for at most `drain`, then stops. Idempotent.
  void Stop(std::chrono::milliseconds drain);
  WindowPushStats Stats() const;
  // "pushed N windows (M profiles, B bytes) to URL in R requests; ..."
  std::string Summary() const;
  // The counters as (name, value) rows: store, sent, profiles, bytes,
  // requests, retried, refused, dropped, failed, unsent, queued, queued
  // bytes, last error.
  std::vector<std::pair<std::string, std::string>> CounterRows() const;
  // Every window given so far reached the store.
  bool AllPushed() const;
  // Where it pushes, for messages.
  std::string url() const { return pusher_->Describe(); }
  // The labels of every series, without the target's.
  const std::vector<PushLabel>& labels() const { return labels_; }

 private:
  WindowPusher() = default;
  PushOptions options_;
  std::string target_label_;
  std::vector<PushLabel> labels_;
  std::unique_ptr<Pusher> pusher_;
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> split_{0};
};

// The one-line adapter to Controller's ProfileSink (heapprof/v8/controller.h)
// that keeps this library free of V8: a callable taking the sink's
// Result<WindowProfile> (anything with ok(), status(), ->target, ->profile).
inline auto PushingSink(std::shared_ptr<WindowPusher> pusher) {
  return [pusher = std::move(pusher)](auto window) {
    if (window.ok()) {
      pusher->Window(window->target, window->profile);
    } else {
      pusher->Failed("a target", window.status());
    }
  };
}

}  // namespace heapprof::remote
