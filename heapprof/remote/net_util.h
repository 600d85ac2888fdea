// Internal: what the HTTP and WebSocket clients share. Turning a Boost
// error into a sentence, and resolving a host.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>
#include <boost/system/error_code.hpp>
#include <string>

#include "heapprof/core/status.h"
#include "heapprof/remote/devtools_client.h"
#include "heapprof/remote/http_client.h"

namespace heapprof::remote::internal {

// "127.0.0.1:9229" ("[::1]:9229" for an IPv6 address).
std::string Describe(const HostPort& where);

// A status for a failed network step ("connect", "read"...), with what the
// user should know: nothing listening, the peer went away, a timeout.
Status NetError(const std::string& step, const HostPort& where, const boost::system::error_code& ec);

// Resolves the host (numeric addresses and "localhost" without DNS).
Result<boost::asio::ip::tcp::resolver::results_type> Resolve(boost::asio::io_context& ioc, const HostPort& where);

// The request as both clients send it: the caller's headers, Host unless
// given, the body, and a Content-Length where one belongs.
boost::beast::http::request<boost::beast::http::string_body> BuildRequest(boost::beast::http::verb verb,
                                                                          const HttpRequest& request,
                                                                          const HostPort& server);

}  // namespace heapprof::remote::internal
