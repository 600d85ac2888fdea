// One HTTP/1.1 exchange per call on a Beast tcp_stream whose deadline covers
// connect, write and read together.
#include "heapprof/remote/http_client.h"

#include <fmt/format.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "heapprof/remote/net_util.h"

namespace heapprof::remote {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using internal::NetError;

namespace {
// Worker responses and target lists are small; a profile page is not fetched here.
constexpr uint64_t kMaxBody = 256ull << 20;
}  // namespace

Result<HttpResponse> SendHttp(const HostPort& server, const HttpRequest& request, Millis timeout) {
  http::verb verb = http::string_to_verb(request.method);
  if (verb == http::verb::unknown) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("unknown HTTP method \"{}\"", request.method));
  }
  asio::io_context ioc;
  auto endpoints = internal::Resolve(ioc, server);
  if (!endpoints.ok()) return endpoints.status();

  http::request<http::string_body> req = internal::BuildRequest(verb, request, server);

  beast::tcp_stream stream(ioc);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBody);
  // The answer to HEAD has no body whatever its Content-Length says; without
  // this the parser waits for one until the server closes the connection.
  if (verb == http::verb::head) parser.skip(true);
  Status status;
  stream.expires_after(timeout);  // one deadline for the whole exchange
  stream.async_connect(endpoints.value(), [&](beast::error_code ec, const auto&) {
    if (ec) {
      status = NetError("connect", server, ec);
      return;
    }
    http::async_write(stream, req, [&](beast::error_code wec, size_t) {
      if (wec) {
        status = NetError("sending the request", server, wec);
        return;
      }
      http::async_read(stream, buffer, parser, [&](beast::error_code rec, size_t) {
        if (rec) status = NetError("reading the response", server, rec);
      });
    });
  });
  ioc.run();
  if (!status.ok()) return status;

  beast::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  http::response<http::string_body> res = parser.release();
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  for (const auto& field : res) out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  out.body = std::move(res.body());
  return out;
}

namespace internal {

http::request<http::string_body> BuildRequest(http::verb verb, const HttpRequest& request, const HostPort& server) {
  http::request<http::string_body> req{verb, request.target, 11};
  bool has_host = false;
  for (const auto& [name, value] : request.headers) {
    has_host = has_host || beast::iequals(name, "host");
    req.insert(name, value);
  }
  if (!has_host) req.set(http::field::host, internal::Describe(server));
  req.body() = request.body;
  if (!request.body.empty() || verb == http::verb::post || verb == http::verb::put) req.prepare_payload();
  return req;
}

}  // namespace internal

}  // namespace heapprof::remote
