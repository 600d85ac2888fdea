// Go's net/http/pprof paths for heap profiles, over any source of profiling
// windows (the live service's replicas, or a fake in tests):
//   /debug/pprof/                        index: targets, heap use, captures
//   /debug/pprof/heap?seconds=N&target=T gzipped pprof, inuse_space default
//   /debug/pprof/allocs?seconds=N        the same window, alloc_space default
//   /debug/heapprof/flamegraph?seconds=N the interactive flamegraph page
//   /debug/heapprof/captures/FILE        a near-heap-limit capture
// Without `seconds`, heap and allocs return what the continuous window of the
// target has seen since it opened (and open the next one). One window per
// target at a time: a second request gets 409 naming who holds it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/http_server.h"
#include "heapprof/profile.h"
#include "heapprof/status.h"

namespace heapprof {

// One profiling target as the index shows it.
struct TargetStatus {
  std::string name;
  uint64_t heap_used_bytes = 0;
  uint64_t heap_limit_bytes = 0;
  uint64_t requests = 0;  // answered by the worker
  uint64_t failures = 0;  // script errors, time-outs, heap-limit crashes
  uint64_t restarts = 0;  // isolates recreated after a time-out or a heap-limit crash
};

// A near-heap-limit capture kept on disk.
struct CaptureFile {
  std::string target;
  std::string path;  // full path; the endpoint serves it by file name
};

// Where the windows come from. Called from the endpoint's threads.
class ProfileSource {
 public:
  virtual ~ProfileSource() = default;
  virtual std::vector<TargetStatus> Targets() = 0;
  // Opens a window on `target`, waits `duration` (or less if the service
  // shuts down), returns what it saw.
  virtual Result<Profile> Window(const std::string& target, std::chrono::nanoseconds duration) = 0;
  // What the target's continuous window has seen since it opened; a new one
  // opens at once. kFailedPrecondition when there is no continuous window.
  virtual Result<Profile> SinceContinuousStart(const std::string& target) = 0;
  virtual std::vector<CaptureFile> Captures() = 0;
};

struct PprofEndpointOptions {
  std::chrono::seconds max_window = std::chrono::hours(1);  // longer `seconds` get 400
  bool continuous = false;  // whether SinceContinuousStart is available (else `seconds` is required)
};

class PprofEndpoints {
 public:
  PprofEndpoints(ProfileSource& source, const PprofEndpointOptions& options = {});

  // Whether `target` is one of the paths above (else the caller answers 404).
  static bool Handles(std::string_view target);
  // Answers one request; blocks for the window's length (run it off the
  // server's threads).
  HttpResponse Handle(const HttpRequest& request);

 private:
  HttpResponse ProfileResponse(const HttpRequest& request, std::string_view kind);
  HttpResponse Index();
  HttpResponse CaptureFileResponse(std::string_view name);

  ProfileSource& source_;
  PprofEndpointOptions options_;
  std::mutex mu_;
  std::map<std::string, std::string> holders_;  // target -> who holds its window
};

// Splits a request target into its path and decoded query parameters.
struct ParsedTarget {
  std::string path;
  std::map<std::string, std::string> query;
};
Result<ParsedTarget> ParseRequestTarget(std::string_view target);
// Decodes %XX escapes and '+' (as a space); kInvalidArgument on a bad escape.
Result<std::string> PercentDecode(std::string_view text);

// Makes `sample_type` ("inuse_space", "alloc_space", ...) the profile's default.
Status SetDefaultSampleType(heapprof::Profile& profile, std::string_view sample_type);

}  // namespace heapprof
