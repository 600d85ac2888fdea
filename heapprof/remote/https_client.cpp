// One HTTPS exchange per call: Beast's ssl_stream over a tcp_stream whose
// deadline covers connect, handshake, write and read together. The peer's
// certificate chain is verified against the system's CAs (or one CA file),
// and its name against the host asked for, by OpenSSL itself
// (X509_VERIFY_PARAM host or IP check), so a wrong name fails the handshake.
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "heapprof/remote/http_client.h"
#include "heapprof/remote/net_util.h"

namespace heapprof::remote {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using internal::NetError;

namespace {

constexpr uint64_t kMaxBody = 256ull << 20;

// The TLS step's failure, with OpenSSL's reason (e.g. "certificate verify failed").
Status TlsError(const std::string& step, const HostPort& server, const beast::error_code& ec,
                const TlsClientOptions& tls) {
  if (ec.category() != asio::error::get_ssl_category()) return NetError(step, server, ec);
  std::string why = ec.message();
  if (why.find("certificate verify failed") != std::string::npos) {
    why += tls.ca_file.empty() ? " (not signed by a CA this machine trusts, or not for this host name: a private CA "
                                 "is given with --push-ca-file)"
                               : fmt::format(" (not signed by the CA in {}, or not for this host name)", tls.ca_file);
  }
  return Error(ErrorCode::kUnavailable, fmt::format("{} with {}: {}", step, internal::Describe(server), why));
}

}  // namespace

Result<HttpResponse> SendHttps(const HostPort& server, const HttpRequest& request, Millis timeout,
                               const TlsClientOptions& tls) {
  http::verb verb = http::string_to_verb(request.method);
  if (verb == http::verb::unknown) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("unknown HTTP method \"{}\"", request.method));
  }
  ssl::context ctx(ssl::context::tls_client);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  beast::error_code ec;
  if (tls.ca_file.empty()) {
    ctx.set_default_verify_paths(ec);
  } else {
    ctx.load_verify_file(tls.ca_file, ec);
  }
  if (ec) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("the CAs to verify {} with ({}): {}", internal::Describe(server),
                             tls.ca_file.empty() ? "the system's" : tls.ca_file, ec.message()));
  }
  ctx.set_verify_mode(ssl::verify_peer);

  asio::io_context ioc;
  auto endpoints = internal::Resolve(ioc, server);
  if (!endpoints.ok()) return endpoints.status();
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  // The name the certificate must carry: an IP address is checked as one
  // (and sent without SNI, which takes host names only).
  SSL* handle = stream.native_handle();
  X509_VERIFY_PARAM* param = SSL_get0_param(handle);
  boost::system::error_code not_ip;
  asio::ip::make_address(server.host, not_ip);
  if (!not_ip) {
    if (X509_VERIFY_PARAM_set1_ip_asc(param, server.host.c_str()) != 1) {
      return Error(ErrorCode::kInvalidArgument, "cannot check a certificate for " + server.host);
    }
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (X509_VERIFY_PARAM_set1_host(param, server.host.c_str(), 0) != 1 ||
        SSL_set_tlsext_host_name(handle, server.host.c_str()) != 1) {
      return Error(ErrorCode::kInvalidArgument, "cannot check a certificate for " + server.host);
    }
  }

  http::request<http::string_body> req = internal::BuildRequest(verb, request, server);

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxBody);
  if (verb == http::verb::head) parser.skip(true);
  Status status;
  beast::get_lowest_layer(stream).expires_after(timeout);  // one deadline for the whole exchange
  beast::get_lowest_layer(stream).async_connect(endpoints.value(), [&](beast::error_code cec, const auto&) {
    if (cec) {
      status = NetError("connect", server, cec);
      return;
    }
    stream.async_handshake(ssl::stream_base::client, [&](beast::error_code hec) {
      if (hec) {
        status = TlsError("the TLS handshake", server, hec, tls);
        return;
      }
      http::async_write(stream, req, [&](beast::error_code wec, size_t) {
        if (wec) {
          status = TlsError("sending the request", server, wec, tls);
          return;
        }
        http::async_read(stream, buffer, parser, [&](beast::error_code rec, size_t) {
          if (rec) status = TlsError("reading the response", server, rec, tls);
        });
      });
    });
  });
  ioc.run();
  if (!status.ok()) return status;

  // One request per connection: close it without waiting for the peer's close_notify.
  beast::get_lowest_layer(stream).close();
  http::response<http::string_body> res = parser.release();
  HttpResponse out;
  out.status = static_cast<int>(res.result_int());
  for (const auto& field : res) out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  out.body = std::move(res.body());
  return out;
}

}  // namespace heapprof::remote
