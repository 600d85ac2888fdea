// An HTTP/1.1 server (Boost.Beast underneath, kept out of this header): every
// request goes to one handler, which answers through a responder it may call
// later from any thread, so slow work (a worker isolate, a profiling window)
// never holds the server's own threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heapprof/status.h"

namespace heapprof {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: path and query, e.g. "/debug/pprof/heap?seconds=2"
  HttpHeaders headers;
  std::string body;
  std::string remote;  // peer "address:port"
};

struct HttpResponse {
  int status = 200;
  std::string reason;   // status text; empty: the standard one
  HttpHeaders headers;  // Content-Length is set by the server
  std::string body;
};

// A request's header value (names compare case-insensitively), or "" when absent.
std::string_view HeaderValue(const HttpHeaders& headers, std::string_view name);
// A plain-text response: `status` with `text` and a trailing newline.
HttpResponse TextResponse(int status, std::string_view text);

// Answers one request; call exactly once, from any thread.
using HttpResponder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest, HttpResponder)>;

struct HttpServerOptions {
  std::string listen = "127.0.0.1:0";         // "host:port"; port 0 picks a free one
  int threads = 1;                            // threads reading and writing sockets
  size_t max_body_bytes = 16u * 1024 * 1024;  // larger requests get 413
};

// Splits "host:port" ("[::1]:80" for IPv6); the port must be 0..65535.
Result<std::pair<std::string, uint16_t>> ParseListenAddress(std::string_view listen);

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
  // Requests handed to the handler and not yet answered and written.
  size_t in_flight() const;

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
