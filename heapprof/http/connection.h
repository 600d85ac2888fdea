// One client connection of an HttpServer, plain or over TLS: reads requests
// under the listener's limits, hands them to the handler, watches for the
// client leaving while one is handled, writes the answers.
#pragma once

#include <memory>
#include <optional>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "heapprof/http/http_server.h"
#include "heapprof/http/listener_state.h"

namespace heapprof::internal {

class Connection {
 public:
  virtual ~Connection() = default;
  // On the connection's strand: the TLS handshake when there is one, then
  // `refusal` written and the connection closed, or the first request read.
  virtual void Start(std::optional<HttpResponse> refusal) = 0;
  // On the connection's strand, when the server shuts down: closes a
  // connection that is waiting for its next request.
  virtual void CloseIfIdle() = 0;
  virtual boost::asio::any_io_executor executor() = 0;
};

// `tls` null: plain HTTP. The socket should have a strand as its executor.
std::shared_ptr<Connection> MakeConnection(ListenerState& listener, boost::asio::ip::tcp::socket socket,
                                           boost::asio::ssl::context* tls);

}  // namespace heapprof::internal
