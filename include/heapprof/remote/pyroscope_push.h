// Pushing profiles into Grafana Pyroscope (or anything that speaks its
// ingestion API): POST {url}/push.v1.PusherService/Push, a connect-protocol
// unary call with an application/proto PushRequest whose series carry the
// labels and whose samples carry the gzipped pprof bytes.
//
// The Pusher owns one thread: Enqueue only takes a mutex, so the isolate and
// the debug listener never wait for the network. Its queue is bounded (by
// windows and by bytes): when full, the oldest window is dropped and counted.
// A failed push (no connection, a timeout, 408, 429, 5xx) is retried with
// exponential backoff (Retry-After when the server gives one); any other
// answer (400: the store refused the profile) drops the window as rejected.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/profile_split.h"
#include "heapprof/core/status.h"

namespace heapprof::remote {

struct PushLabel {
  std::string name;
  std::string value;
};

// Where and how to push. Every default is here, once.
struct PushOptions {
  std::string url;                                 // http(s)://HOST[:PORT][/PREFIX]; the RPC path is appended
  std::string ca_file;                             // https: PEM CAs to verify the store with ("" = the system's)
  std::string bearer_token;                        // "Authorization: Bearer ..." when not empty
  std::string tenant;                              // "X-Scope-OrgID: ..." when not empty (multi-tenant stores)
  size_t max_queued = 64;                          // windows waiting to be pushed
  uint64_t max_queued_bytes = uint64_t{64} << 20;  // their gzipped bytes together
  std::chrono::milliseconds timeout{10'000};       // one request, connect to answer
  std::chrono::milliseconds first_backoff{500};    // after the first failure in a row; doubles
  std::chrono::milliseconds max_backoff{30'000};
  // Problems and recoveries, one line each (the first failure of a run of
  // them, the recovery, the first window dropped of a run); from the
  // pusher's thread. Empty: silent.
  std::function<void(const std::string&)> log;
};

// The store's label rules (Pyroscope's defaults): names [a-zA-Z_][a-zA-Z0-9_]*
// of at most 1024 bytes, values non-empty valid UTF-8 of at most 2048 bytes,
// no name twice, at most 30 labels, __name__ and service_name present.
inline constexpr size_t kMaxPushLabels = 30;
Status CheckPushLabels(const std::vector<PushLabel>& labels);

// One window ready to push: its series labels and one gzipped pprof per
// part (SplitProfile keeps each within the store's sample and size limits).
struct PushProfile {
  std::vector<PushLabel> labels;
  std::vector<std::string> parts;
  std::string what;  // names the window in messages, e.g. "worker-0's window of 12:00:01"
  uint64_t bytes() const;
};

// Splits (to `limits`) and gzips a profile for pushing under `labels`;
// `what` goes into messages.
Result<PushProfile> PreparePush(const Profile& profile, std::vector<PushLabel> labels, const SplitLimits& limits,
                                std::string what);

// The serialized PushRequest for `windows`: one series per window, one
// sample (with a fresh UUID) per part.
std::string EncodePushRequest(const std::vector<const PushProfile*>& windows);

// What the pusher did so far.
struct PushStats {
  uint64_t enqueued = 0;      // windows handed to Enqueue
  uint64_t pushed = 0;        // windows the store accepted
  uint64_t parts = 0;         // profiles in them (more than `pushed` when windows were split)
  uint64_t bytes = 0;         // gzipped pprof bytes in them
  uint64_t requests = 0;      // HTTP requests sent, retries included
  uint64_t retries = 0;       // requests that failed and were tried again
  uint64_t dropped = 0;       // windows dropped because the queue was full (the oldest first)
  uint64_t rejected = 0;      // windows the store refused (not retried)
  uint64_t unsent = 0;        // windows still queued when Stop's drain time ran out
  size_t queued = 0;          // waiting now
  uint64_t queued_bytes = 0;  // their gzipped bytes
  std::string last_error;     // the most recent failure, "" if none
};

class Pusher {
 public:
  // Checks the URL (http, or https with the store's certificate verified)
  // and starts the thread.
  static Result<std::unique_ptr<Pusher>> Start(PushOptions options);
  ~Pusher();  // Stop(0)
  Pusher(const Pusher&) = delete;
  Pusher& operator=(const Pusher&) = delete;

  // Queues a window; when the queue is full, drops the oldest waiting one.
  // Never waits for the network. After Stop, the window is counted unsent.
  void Enqueue(PushProfile window);
  // Pushes what is queued for at most `drain` (retrying as usual), then
  // counts what is left as unsent and joins the thread. Idempotent.
  void Stop(std::chrono::milliseconds drain);
  PushStats Stats() const;
  // "host:port/prefix" the pusher sends to, for messages.
  std::string Describe() const;

  class Impl;

 private:
  explicit Pusher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace heapprof::remote
