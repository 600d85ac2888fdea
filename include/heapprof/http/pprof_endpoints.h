// Go's net/http/pprof paths for heap profiles, over any source of profiling
// windows (the live service's replicas, or a fake in tests):
//   /debug/pprof/                        index: targets, heap use, captures
//   /debug/pprof/heap?seconds=N&target=T gzipped pprof, inuse_space default
//   /debug/pprof/allocs?seconds=N        the same window, alloc_space default
//   /debug/heapprof/flamegraph?seconds=N the interactive flamegraph page
//   /debug/heapprof/leaks?target=T       serve --leaks: the target's growth report (JSON)
//   /debug/heapprof/leaks.html?target=T  the same as a page: verdicts, live bytes over time
//   /debug/heapprof/captures/FILE        a near-heap-limit capture
//   DELETE /debug/heapprof/windows/ID    ends a window its client holds now
// Without `seconds`, heap and allocs return what the continuous window of the
// target has seen since it opened (and open the next one). One window per
// target at a time: a second request gets 409 naming who holds it. A window
// ends early when its client disconnects or cancels it; each client (a token,
// or an address without tokens) has a bound on the windows it holds at once
// and opens a minute (429 with Retry-After beyond).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"
#include "heapprof/http/http_server.h"

namespace heapprof {

// One profiling target as the index shows it.
struct TargetStatus {
  std::string name;
  uint64_t heap_used_bytes = 0;
  uint64_t heap_limit_bytes = 0;
  uint64_t requests = 0;  // answered by the worker
  uint64_t failures = 0;  // script errors, time-outs, heap-limit crashes
  uint64_t restarts = 0;  // isolates recreated after a time-out or a heap-limit crash
  // Other names target= may give for it (compared in either case), e.g. a
  // named Durable Object's "NS:<64-hex id>"; never listed.
  std::vector<std::string> aliases = {};
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
  // shuts down, or `cancel` is raised: then it ends at once), returns what it saw.
  virtual Result<Profile> Window(const std::string& target, std::chrono::nanoseconds duration,
                                 CancelSignal& cancel) = 0;
  // What the target's continuous window has seen since it opened; a new one
  // opens at once. kFailedPrecondition when there is no continuous window.
  virtual Result<Profile> SinceContinuousStart(const std::string& target) = 0;
  virtual std::vector<CaptureFile> Captures() = 0;
  // The target's leak session report as JSON (LeakSession::ReportJson), a
  // look of its session; kNotFound when the source runs no leak sessions,
  // kUnavailable while a session has too few snapshots.
  virtual Result<std::string> LeakReportJson(const std::string& target) {
    return Error(ErrorCode::kNotFound,
                 "no leak session runs on " + target + " (heapprof serve --leaks runs one per replica)");
  }
  virtual bool HasLeakSessions() { return false; }
};

// Who may use the debug endpoints, and on which targets.
struct AccessToken {
  std::string name;                  // who holds it: shown as the holder of its windows
  std::string secret;                // sent as "Authorization: Bearer SECRET"
  std::vector<std::string> targets;  // patterns over target names (* and ?); "*" is every target
};

// Reads a token file: one token a line, "NAME SECRET PATTERN [PATTERN...]";
// blank lines and lines starting with # are skipped. A secret is at least
// kMinTokenSecretBytes long and unique. Errors name the line, never a secret.
inline constexpr size_t kMinTokenSecretBytes = 16;
Result<std::vector<AccessToken>> ParseTokenFile(std::string_view text, std::string_view origin);
Result<std::vector<AccessToken>> ReadTokenFile(const std::string& path);
// Whether `name` matches `pattern` (* any run of characters, ? any one).
bool TargetPatternMatches(std::string_view pattern, std::string_view name);

// A section of the index after the targets' table (e.g. the push's
// counters): a heading and rows of (name, value), shown as text.
struct IndexSection {
  std::string title;
  std::vector<std::pair<std::string, std::string>> rows;
};

struct PprofEndpointOptions {
  std::chrono::seconds max_window = std::chrono::hours(1);  // longer `seconds` get 400
  std::chrono::milliseconds min_window{100};                // shorter `seconds` get 400
  bool continuous = false;  // whether SinceContinuousStart is available (else `seconds` is required)
  // Empty: anyone who reaches the listener may profile every target (keep it
  // on loopback). Else every request needs one of these tokens: none or an
  // unknown one is 401, a target outside its patterns 403.
  std::vector<AccessToken> tokens;
  // Per client (a token's name, else the peer's address without its port):
  size_t max_windows_per_client = 2;  // open at once; one more is 429
  size_t windows_per_minute = 60;     // opened in any 60 s; one more is 429 with Retry-After
  // More sections for the index, asked for at each request (any thread).
  std::function<std::vector<IndexSection>()> index_sections;
};

// An open window as the index lists it.
struct OpenWindow {
  uint64_t id = 0;
  std::string target;
  std::string client;   // the token's name, or the peer's address
  std::string request;  // "GET /debug/pprof/heap?seconds=30&target=0 from 127.0.0.1:53412"
  std::chrono::system_clock::time_point started, ends;
};

class PprofEndpoints {
 public:
  PprofEndpoints(ProfileSource& source, const PprofEndpointOptions& options = {});

  // Whether `target` is one of the paths above (else the caller answers 404).
  static bool Handles(std::string_view target);
  // Answers one request; blocks for the window's length (run it off the
  // server's threads). A window ends early when request.client_gone is raised.
  HttpResponse Handle(const HttpRequest& request);
  // The windows open now, oldest first.
  std::vector<OpenWindow> OpenWindows() const;

 private:
  struct Caller {
    const AccessToken* token = nullptr;  // null without tokens
    std::string client;
    bool May(std::string_view target) const;
  };
  struct Held {
    OpenWindow info;
    std::shared_ptr<CancelSignal> cancel;
  };
  Result<Caller> Authenticate(const HttpRequest& request) const;
  HttpResponse ProfileResponse(const HttpRequest& request, const Caller& caller, std::string_view kind);
  HttpResponse Index(const Caller& caller);
  HttpResponse CaptureFileResponse(const Caller& caller, std::string_view name);
  // The leak report of a target, as JSON or as the page (leak_endpoints.cpp).
  HttpResponse LeaksResponse(const HttpRequest& request, const Caller& caller, bool page);
  // target= (a name, a replica number, or empty for the only target) as the
  // caller may see it; nullopt with `refusal` set (400, 403, 404).
  std::optional<std::string> ResolveTarget(const Caller& caller, const std::string& requested, HttpResponse* refusal);
  HttpResponse CancelWindow(const Caller& caller, std::string_view id);
  // Registers a window and returns its id, or 0 with `refusal` set (409, 429).
  uint64_t Admit(const HttpRequest& request, const Caller& caller, const std::string& target,
                 std::chrono::nanoseconds duration, std::shared_ptr<CancelSignal> cancel, HttpResponse* refusal);

  ProfileSource& source_;
  PprofEndpointOptions options_;
  mutable std::mutex mu_;
  uint64_t next_window_ = 1;
  std::map<uint64_t, Held> windows_;                                                 // open, by id
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> opened_;  // client -> last minute's
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
