// The load of `heapprof run --runtime workerd`: requests sent one after
// another over HTTP, on a thread of its own, as the embedded engine sends
// them (the user's traffic replayed in order and cycled, else heapprof's
// synthetic stream; request i is traffic[i % n]), counted as the embedded
// engine counts them, with --responses-out records and the first failures.
//
// With --requests N the driver never sends more than it is allowed: the
// windows' shares, then a few "kicks" while a window closes (workerd's
// inspector answers HeapProfiler.collectGarbage only once its isolate has a
// request to run: measured, an idle isolate left it unanswered for seconds
// and answered it the moment one request came), then what is left of N.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "heapprof/remote/http_client.h"
#include "heapprof/remote/workerd_log.h"
#include "heapprof/workload/outcomes.h"
#include "heapprof/workload/traffic.h"

namespace heapprof::remote {

class WorkerdLoad {
 public:
  struct Options {
    HostPort server;
    std::vector<WorkerRequest> traffic;  // empty: the synthetic stream
    Millis timeout{0};                   // the client gives up and counts the request as timed out
    bool record = false;                 // keep ResponseRecord lines
    // The worker's uncaught exceptions workerd logged since the last call
    // (asked after workerd's own 500): the request threw or rejected.
    std::function<std::vector<WorkerdException>()> exceptions;
    // True once the run is being cut short (Ctrl-C): Serve stops sending, and
    // a request that then fails without an answer is not counted.
    std::function<bool()> interrupted;
  };
  // A request that failed (5xx, threw, no answer, timed out): the first few are kept.
  struct Failure {
    uint64_t index = 0;
    std::string text;  // "GET https://x/y -> 500: threw: TypeError: ..." or "...: no response: ..."
    int status = 0;    // 0 = no answer
  };

  explicit WorkerdLoad(Options options) : o_(std::move(options)) {}
  ~WorkerdLoad() { Stop(); }
  WorkerdLoad(const WorkerdLoad&) = delete;
  WorkerdLoad& operator=(const WorkerdLoad&) = delete;

  // Starts the thread; it sends while fewer than the allowed were sent.
  void Start();
  // Sends nothing more until Allow (the count's mode).
  void Hold() { limit_.store(sent_.load()); }
  // Allows `more` requests beyond those sent; returns how many will then have
  // been sent, for Answered(n).
  uint64_t Allow(uint64_t more);
  // Single requests while the caller waits for the inspector, until Unkick:
  // `kicks` of them (one 20 ms after this call, then one every 100 ms), then
  // one every 500 ms beyond the limit (extra_kicks).
  void Kick(uint64_t kicks);
  void Unkick() { kicking_.store(false); }
  uint64_t extra_kicks() const { return extra_kicks_.load(); }
  // Sends without limit (no --requests).
  void Unlimited() { limit_.store(UINT64_MAX); }
  void Stop();
  // Serves `n` requests on the calling thread (the warm-up, the rest of N).
  void Serve(uint64_t n);

  uint64_t sent() const { return sent_.load(); }
  uint64_t no_response();  // failures without an answer (timeouts apart), among outcomes().thrown()
  uint64_t answered();
  RequestOutcomes outcomes();
  uint64_t empty_bodies();
  std::vector<Failure> first_failures();
  std::string responses();

 private:
  void Send(uint64_t index);
  bool Interrupted() const { return o_.interrupted && o_.interrupted(); }

  const Options o_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> limit_{UINT64_MAX};
  std::atomic<bool> kicking_{false};
  std::atomic<uint64_t> kicks_{0};
  std::atomic<uint64_t> extra_kicks_{0};
  std::atomic<int64_t> next_kick_ns_{0};  // steady clock
  std::thread thread_;
  std::mutex mu_;
  RequestOutcomes outcomes_;
  uint64_t empty_ = 0;
  uint64_t no_response_ = 0;
  std::vector<Failure> failures_;
  std::string responses_;
};

}  // namespace heapprof::remote
