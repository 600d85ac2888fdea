// A minimal HTTP/1.1 client (Boost.Beast) for loopback services: the
// DevTools target list, and the requests `heapprof run --runtime workerd`
// sends to the worker it serves; and over TLS (Beast's ssl_stream on
// OpenSSL) for the push to a profile store. One connection per request;
// every request has a deadline.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/http_message.h"
#include "heapprof/core/status.h"
#include "heapprof/remote/devtools_client.h"

namespace heapprof::remote {

// The requests and responses of heapprof's server (heapprof/core/http_message.h).
using heapprof::HttpRequest;
using heapprof::HttpResponse;

// Sends one request and reads the whole response. kUnavailable when nothing
// listens or the server closes early; kDeadlineExceeded when `timeout` passes
// first (the connection is then dropped).
Result<HttpResponse> SendHttp(const HostPort& server, const HttpRequest& request, Millis timeout);

// How an HTTPS client trusts its server.
struct TlsClientOptions {
  std::string ca_file;  // PEM CA certificates to verify with; "" = the system's
};

// The same over TLS (1.2 or later): the server's certificate must chain to a
// trusted CA and name `server.host` (a host name, or an IP address as one),
// else the handshake fails (kUnavailable, with OpenSSL's reason).
// kInvalidArgument when the CA file cannot be read.
Result<HttpResponse> SendHttps(const HostPort& server, const HttpRequest& request, Millis timeout,
                               const TlsClientOptions& tls);

}  // namespace heapprof::remote
