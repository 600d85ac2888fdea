#include "heapprof/remote/net_util.h"

#include <fmt/format.h>
#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/websocket/error.hpp>

namespace heapprof::remote::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;

std::string Describe(const HostPort& where) {
  if (where.host.find(':') != std::string::npos) return fmt::format("[{}]:{}", where.host, where.port);
  return fmt::format("{}:{}", where.host, where.port);
}

Status NetError(const std::string& step, const HostPort& where, const boost::system::error_code& ec) {
  const std::string at = Describe(where);
  if (ec == asio::error::connection_refused) {
    return Error(ErrorCode::kUnavailable, fmt::format("nothing is listening on {} (connection refused)", at));
  }
  if (ec == beast::error::timeout || ec == asio::error::timed_out) {
    // Its own code: a caller's deadline passing is not the same as nothing listening.
    return Error(ErrorCode::kDeadlineExceeded, fmt::format("{} did not answer in time ({})", at, step));
  }
  if (ec == asio::error::eof || ec == asio::error::connection_reset || ec == beast::http::error::end_of_stream ||
      ec == beast::websocket::error::closed || ec == asio::error::broken_pipe ||
      ec == beast::http::error::partial_message) {
    return Error(ErrorCode::kUnavailable, fmt::format("{} closed the connection ({}: {})", at, step, ec.message()));
  }
  return Error(ErrorCode::kUnavailable, fmt::format("{}: {} failed: {}", at, step, ec.message()));
}

Result<asio::ip::tcp::resolver::results_type> Resolve(asio::io_context& ioc, const HostPort& where) {
  asio::ip::tcp::resolver resolver(ioc);
  boost::system::error_code ec;
  auto results = resolver.resolve(where.host, std::to_string(where.port), asio::ip::tcp::resolver::numeric_service, ec);
  if (ec) return Error(ErrorCode::kNotFound, fmt::format("cannot resolve host \"{}\": {}", where.host, ec.message()));
  return results;
}

}  // namespace heapprof::remote::internal
