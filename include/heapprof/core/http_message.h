// An HTTP request and response as plain data: one pair of types for the
// server (heapprof/http), the client (heapprof/remote) and what a worker
// answers (heapprof/workload's WorkerResponse), so no layer converts one into
// another field by field.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace heapprof {

// Header fields in order, names as sent (compare them with HeaderValue).
using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

class CancelSignal;  // heapprof/http/http_server.h

struct HttpRequest {
  std::string method = "GET";  // "GET", "POST", ...
  std::string target = "/";    // as sent: path and query, e.g. "/debug/pprof/heap?seconds=2"
  HttpHeaders headers;         // a client adds Host when absent
  std::string body;
  // Set by heapprof's server on the requests it receives (empty elsewhere):
  std::string remote;  // the peer, "address:port"
  // Raised when the client closes its connection before the answer is
  // written (within a second: at once for a reset or, over HTTP/1.0, a FIN),
  // so a handler that takes long (a profiling window) can stop working for
  // nobody. A client that only half-closed (shutdown(SHUT_WR) after its
  // request) is still there and keeps it unraised. May be null.
  std::shared_ptr<CancelSignal> client_gone;
};

struct HttpResponse {
  int status = 200;
  std::string reason;   // the status text; empty: the standard one
  HttpHeaders headers;  // a server sets Content-Length itself
  std::string body;     // bytes
};

// A header's value (names compare case-insensitively), or "" when absent.
std::string_view HeaderValue(const HttpHeaders& headers, std::string_view name);

}  // namespace heapprof
