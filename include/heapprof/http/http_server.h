// An HTTP/1.1 server (Boost.Beast underneath, kept out of this header): every
// request goes to one handler, which answers through a responder it may call
// later from any thread, so slow work (a worker isolate, a profiling window)
// never holds the server's own threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heapprof/core/http_message.h"
#include "heapprof/core/status.h"

namespace heapprof {

// A flag that one side raises once (the client went away, the holder
// cancelled) and the other waits on or reacts to. Thread-safe.
class CancelSignal {
 public:
  // Raises the signal and runs the callbacks registered so far (once each).
  void Cancel();
  bool cancelled() const;
  // Runs `callback` when the signal is raised (at once if it already is);
  // returns an id for Remove. The callback runs on the cancelling thread.
  uint64_t OnCancel(std::function<void()> callback);
  // Drops a callback that has not run; after it returns the callback never runs.
  void Remove(uint64_t id);

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  uint64_t next_id_ = 1;
  std::vector<std::pair<uint64_t, std::function<void()>>> callbacks_;
};

// A plain-text response: `status` with `text` and a trailing newline.
HttpResponse TextResponse(int status, std::string_view text);

// Answers one request; call exactly once, from any thread. The server waits
// for every answer when it shuts down; a responder may outlive the server
// (a call after that does nothing).
using HttpResponder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest, HttpResponder)>;

// Limits of one listener. Every default is here, once; docs/serve.md lists them.
struct HttpServerOptions {
  std::string listen = "127.0.0.1:0";         // "host:port"; port 0 picks a free one
  int threads = 1;                            // threads reading and writing sockets
  size_t max_body_bytes = 16u * 1024 * 1024;  // larger requests get 413
  // Bodies buffered over all connections at once (a body counts from its
  // Content-Length, or as it arrives when chunked); a request that would
  // take the total beyond this gets 503 with Retry-After and its connection
  // closes, so many unfinished bodies cannot take the process's memory.
  size_t max_buffered_bytes = 64u * 1024 * 1024;
  // Open connections; one more is answered 503 with Retry-After and closed.
  size_t max_connections = 256;
  size_t max_request_line_bytes = 8 * 1024;  // a longer method + target + version gets 414
  size_t max_header_bytes = 16 * 1024;       // request line and header fields together; beyond: 431
  // How long a connection may wait for its next request (keep-alive), and the
  // longest pause while a body arrives; then it is closed.
  std::chrono::milliseconds idle_timeout{60'000};
  // From a request's first byte to the end of its header (a client that
  // drips its header slower is closed).
  std::chrono::milliseconds header_timeout{10'000};
  // After accept() fails (EMFILE, ENFILE, ENOBUFS), the first wait before
  // trying again; doubled on each failure in a row up to 1 s.
  std::chrono::milliseconds accept_backoff{10};
  // TLS: both set, the listener speaks HTTPS only (TLS 1.2 or later) with the
  // certificate chain and private key in these PEM files; Start fails with a
  // message naming the file when one is missing, unreadable, not PEM, has a
  // passphrase, or the key is not the certificate's. A client speaking plain
  // HTTP to it gets a clear-text 400 saying so.
  std::string tls_certificate_file;
  std::string tls_key_file;
};

// Splits "host:port" ("[::1]:80" for IPv6); the port must be 0..65535.
Result<std::pair<std::string, uint16_t>> ParseListenAddress(std::string_view listen);
// Whether a listen address is reachable from this host only (127.0.0.0/8, ::1).
bool IsLoopbackListen(std::string_view listen);

// Whether a certificate chain and key (PEM files) make a TLS server context:
// the error Start would give for them, without listening.
Status CheckTlsFiles(const std::string& certificate_file, const std::string& key_file);

class HttpServer {
 public:
  // Binds and starts serving on its own threads.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options, HttpHandler handler);
  ~HttpServer();  // Shutdown()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the real one when the options asked for 0).
  uint16_t port() const;
  // "host:port" as bound.
  std::string address() const;
  // Whether it speaks HTTPS (the options named a certificate and key).
  bool tls() const;
  // Requests handed to the handler and not yet answered and written.
  size_t in_flight() const;
  // Open connections, and body bytes buffered now over all of them.
  size_t connections() const;
  size_t buffered_bytes() const;

  // Stops accepting, answers every request already handed to the handler
  // (keep-alive connections close after their answer, idle ones at once),
  // then stops the threads. Idempotent.
  void Shutdown();

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace heapprof
