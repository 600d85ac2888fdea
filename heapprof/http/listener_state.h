// What one listener's connections share: its limits and handler, the budget
// of buffered body bytes, the connection count, and the answers still owed
// (which Shutdown waits for). Thread-safe; outlives every connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "heapprof/http/http_server.h"

namespace heapprof::internal {

class ListenerState {
 public:
  ListenerState(const HttpServerOptions& options, HttpHandler handler)
      : options_(options), handler_(std::move(handler)) {}

  const HttpServerOptions& options() const { return options_; }
  void Handle(HttpRequest request, HttpResponder respond) const { handler_(std::move(request), std::move(respond)); }

  // Takes `bytes` from the buffered-bytes budget; false when it would go over.
  bool Reserve(size_t bytes);
  // Gives bytes back; large bodies also go back to the system (malloc_trim).
  void Release(size_t bytes);
  size_t buffered() const { return buffered_.load(); }

  // A request handed to the handler (or a refusal being written) and its
  // answer written.
  void Began();
  void Ended();
  size_t InFlight() const;
  // Blocks until every answer owed is written.
  void WaitAnswered();

  void Stop() { stopping_ = true; }
  bool stopping() const { return stopping_.load(); }

  std::atomic<size_t> open_connections{0};

 private:
  const HttpServerOptions options_;
  const HttpHandler handler_;
  std::atomic<size_t> buffered_{0};
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t in_flight_ = 0;
};

}  // namespace heapprof::internal
