// `heapprof serve`: a worker's replicas behind an HTTP/1.1 listener, and a
// debug listener with Go's net/http/pprof paths that profiles them on demand.
//
// Routing a request to a replica (the analogue of Durable Object routing):
// the header X-Heapprof-Replica: NAME|NUMBER, else a path prefix /@NAME/ or
// /@NUMBER/ (removed before the worker sees the URL; with one replica only
// when replica_prefix says so), else round-robin.
// Every answer names its replica in X-Heapprof-Replica.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/status.h"
#include "heapprof/http/http_server.h"
#include "heapprof/http/pprof_endpoints.h"
#include "heapprof/serve/leak_sessions.h"
#include "heapprof/serve/worker_pool.h"
#include "heapprof/v8/session.h"

namespace heapprof {

struct LiveServiceOptions {
  std::string listen = "127.0.0.1:8787";        // the worker's listener
  std::string debug_listen = "127.0.0.1:6060";  // the debug listener ("" = none)
  int http_threads = 2;                         // socket threads of the worker's listener
  // Both listeners' limits (connections, buffered bytes, header sizes,
  // timeouts); their listen and threads come from the fields above.
  HttpServerOptions limits;
  // The debug endpoints' access tokens and per-client bounds (`continuous`
  // below sets theirs).
  PprofEndpointOptions debug;
  // A debug listener off loopback with no tokens is refused unless this says
  // the operator means it.
  bool debug_insecure = false;
  // Both set: the debug listener speaks HTTPS only with this PEM certificate
  // chain and private key (HttpServerOptions::tls_*); a bad file fails Start.
  std::string debug_tls_certificate;
  std::string debug_tls_key;
  // Whether /@NAME/ and /@NUMBER/ path prefixes pick a replica; nullopt: only
  // with more than one replica (with one, /@alice/... is the worker's path).
  std::optional<bool> replica_prefix;
  WorkerPoolOptions pool;                      // worker, replicas, queue, time limit
  SessionOptions session;                      // every profiling window's options
  std::optional<SourceMapSearch> source_maps;  // where the worker's source maps may be read; nullopt: unmapped
  // A window open on every replica from the start: heap, allocs and
  // flamegraph without seconds= return what it has seen (and open the next);
  // at shutdown each replica's last one is written to continuous_dir.
  bool continuous = false;
  std::string continuous_dir = ".";
  // With `continuous`: cut every replica's window each continuous_every
  // instead (0: only when scraped) and hand each closed window, on a thread
  // of the service's own, to continuous_sink (which must be set then); heap
  // and allocs without seconds= answer the last closed window. At shutdown
  // the last, partial windows go to the sink too, not to continuous_dir.
  std::chrono::nanoseconds continuous_every{0};
  std::function<void(const std::string& replica, Result<Profile> window)> continuous_sink;
  // Where a last continuous window goes when continuous_dir cannot take it
  // (a full disk, a folder removed), and a near-heap-limit capture when
  // pool.capture_dir cannot (unless pool.capture_fallback_dir is set): this
  // folder ("" for none), then the system's temporary folder; the summary
  // says where, among its errors.
  std::string fallback_dir;
  // How long Shutdown lets the requests already received run on; those still
  // running or queued then are ended (WorkerPool::Abort) and answered 503, so
  // a request that never ends (no time limit) cannot hold the exit forever.
  std::chrono::milliseconds shutdown_timeout{10'000};
  // serve --leaks: a leak session on every replica (snapshots between its
  // requests), read at /debug/heapprof/leaks and reported at shutdown.
  // Its sampling options are `session`'s; its sites are source-mapped as
  // the profiles are (source_maps).
  std::optional<LeakSessionOptions> leaks;
};

// What the service did, for the summary at exit.
struct LiveServiceSummary {
  std::vector<TargetStatus> replicas;
  uint64_t refused = 0;                  // 503: queue full or shutting down
  std::vector<std::string> written;      // continuous windows written at shutdown
  std::vector<std::string> errors;       // ... and those that could not be (where they went instead, if anywhere)
  std::vector<AbortedRequests> aborted;  // pending past shutdown_timeout, ended at shutdown
  std::vector<FinalLeakReport> leaks;    // with `leaks`: each replica's report at shutdown
};

class LiveService {
 public:
  // Starts the replicas and both listeners.
  static Result<std::unique_ptr<LiveService>> Start(const LiveServiceOptions& options);
  ~LiveService();  // Shutdown()
  LiveService(const LiveService&) = delete;
  LiveService& operator=(const LiveService&) = delete;

  std::string address() const;        // "host:port" of the worker's listener
  std::string debug_address() const;  // "" without a debug listener
  std::string debug_url() const;      // "http://host:port" or "https://host:port"; "" without one

  // Graceful stop: no new connections, open windows end and are delivered,
  // requests already received are answered (those still pending after
  // shutdown_timeout with 503), then the isolates go. Idempotent.
  void Shutdown();
  LiveServiceSummary Summary() const;

  class Impl;

 private:
  explicit LiveService(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace heapprof
