// Heap profiles of a remote V8 through the DevTools protocol (workerd /
// `wrangler dev`, `node --inspect`, Chrome). The protocol's sampling window
// gives either every sampled allocation (includeObjectsCollectedByMajorGC /
// MinorGC) or only what is still alive at its end, never both with liveness;
// so a profile with both alloc_* and inuse_* comes from two back-to-back
// windows of the same length, and its comments say so.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/status.h"
#include "heapprof/remote/devtools_client.h"

namespace heapprof::remote {

// Which sample types the remote profile measures.
enum class RemoteSampleTypes {
  kBoth,   // an alloc window, then an in-use window of the same length
  kAlloc,  // one include-collected window: alloc_* (inuse_* stay 0)
  kInuse,  // one window without the flags: inuse_* (alloc_* stay 0)
};

// "both" / "alloc" / "inuse".
std::string_view SampleTypesName(RemoteSampleTypes types);
Result<RemoteSampleTypes> ParseSampleTypes(std::string_view name);

struct RemoteWindowOptions {
  uint64_t interval_bytes = kDefaultIntervalBytes;
  std::chrono::nanoseconds window{std::chrono::seconds(5)};  // length of each window
  RemoteSampleTypes types = RemoteSampleTypes::kBoth;
  bool gc_before_inuse = true;  // HeapProfiler.collectGarbage before the in-use snapshot
  std::function<bool()> stop;   // when it turns true, the open window ends now (e.g. Ctrl-C)
  // When it turns true, the open window ends as if its time were up (e.g. it
  // has seen its share of --requests); not an interruption.
  std::function<bool()> window_full;
  std::function<void(std::string_view)> on_window;  // told "alloc" / "inuse" once each window's sampler runs
  Millis command_timeout{30000};                    // per protocol command (a big getSamplingProfile takes a while)
  // Metadata for the profile's comments.
  std::string target_name;         // the isolate comment
  std::string runtime;             // e.g. "node.js/v20.19.0", "workerd"
  int inlining_allowed = -1;       // 1 yes, 0 no, -1 unknown
  std::vector<std::string> notes;  // extra "key: value" comments
};

// What ProfileRemote measured besides the profile.
struct RemoteProfile {
  Profile profile;
  bool interrupted = false;           // `stop` ended a window early
  bool inuse_window_skipped = false;  // kBoth interrupted in the alloc window: no in-use window ran
};

// Enables the target's HeapProfiler domain and checks that its sampler is
// not running (kUnavailable: DevTools' Memory panel or another profiler holds it).
Status CheckSamplerFree(DevToolsSession& session, Millis timeout);

// Runs the window(s) on the session's target and builds the profile. Fails
// with kUnavailable when the target's sampling heap profiler is already
// running (DevTools' Memory panel or another profiler holds it) or the
// target goes away, kFailedPrecondition on a protocol error. The sampler is
// stopped again on every path where the connection still works.
Result<RemoteProfile> ProfileRemote(DevToolsSession& session, const RemoteWindowOptions& options);

}  // namespace heapprof::remote
