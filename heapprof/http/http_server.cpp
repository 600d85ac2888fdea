// HttpServer on Boost.Beast: one io_context, a strand per connection, and a
// responder that posts the answer back onto its connection's strand.
#include "heapprof/http_server.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including
// <utility>, which GCC 12 in C++20 mode does not pull in by itself.
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

namespace heapprof {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// How long a keep-alive connection may sit idle, or a client take to send a request.
constexpr auto kIdleTimeout = std::chrono::seconds(60);

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string_view HeaderValue(const HttpHeaders& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (EqualsNoCase(n, name)) return v;
  }
  return {};
}

HttpResponse TextResponse(int status, std::string_view text) {
  HttpResponse r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
  r.body = std::string(text) + "\n";
  return r;
}

Result<std::pair<std::string, uint16_t>> ParseListenAddress(std::string_view listen) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("bad listen address '{}': {}", listen, why));
  };
  size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) return bad("expected host:port, e.g. 127.0.0.1:8787");
  std::string_view host = listen.substr(0, colon);
  std::string_view port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return bad("the host is empty (use 0.0.0.0 to listen on every interface)");
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port_text.empty() || port > 65535) {
    return bad("the port must be a number from 0 to 65535");
  }
  boost::system::error_code addr_ec;
  net::ip::make_address(std::string(host), addr_ec);
  if (addr_ec && host != "localhost") return bad("the host must be an IP address or localhost");
  return std::pair<std::string, uint16_t>(host == "localhost" ? "127.0.0.1" : std::string(host),
                                          static_cast<uint16_t>(port));
}

class HttpServer::Impl {
 public:
  class Connection;

  Impl(const HttpServerOptions& options, HttpHandler handler)
      : options_(options), handler_(std::move(handler)), work_(net::make_work_guard(io_)), acceptor_(io_) {}

  Status Listen(const std::string& host, uint16_t port) {
    boost::system::error_code ec;
    tcp::endpoint endpoint(net::ip::make_address(host), port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) return Error(ErrorCode::kUnavailable, fmt::format("cannot listen on {}:{}: {}", host, port, ec.message()));
    bound_ = acceptor_.local_endpoint();
    return Status::Ok();
  }

  void Run() {
    Accept();
    int n = std::max(1, options_.threads);
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { io_.run(); });
  }

  void Accept();
  void Shutdown();

  void Began() {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  void Ended() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
    }
    cv_.notify_all();
  }
  size_t InFlight() const {
    std::lock_guard<std::mutex> lock(mu_);
    return in_flight_;
  }
  bool stopping() const { return stopping_.load(); }

  HttpServerOptions options_;
  HttpHandler handler_;
  net::io_context io_;
  // Keeps the threads running while answers are pending with no socket work queued.
  net::executor_work_guard<net::io_context::executor_type> work_;
  tcp::acceptor acceptor_;
  tcp::endpoint bound_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  bool shut_down_ = false;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t in_flight_ = 0;
  std::list<std::weak_ptr<Connection>> connections_;
};

// One client connection: read a request, hand it over, write the answer, repeat.
class HttpServer::Impl::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Impl& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {
    boost::system::error_code ec;
    tcp::endpoint peer = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = fmt::format("{}:{}", peer.address().to_string(), peer.port());
    stream_.socket().set_option(tcp::no_delay(true), ec);
  }

  void Read() {
    busy_ = false;
    if (server_.stopping()) return Close();
    parser_.emplace();
    parser_->body_limit(server_.options_.max_body_bytes);
    stream_.expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  beast::tcp_stream::executor_type GetExecutor() { return stream_.get_executor(); }

  // On the connection's strand, when the server shuts down.
  void CloseIfIdle() {
    if (!busy_) Close();
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      busy_ = true;
      server_.Began();
      keep_alive_ = false;
      return Write(TextResponse(413, fmt::format("request body larger than {} bytes", server_.options_.max_body_bytes)));
    }
    if (ec) return Close();
    busy_ = true;
    http::request<http::string_body> req = parser_->release();
    keep_alive_ = req.keep_alive();
    head_ = req.method() == http::verb::head;
    HttpRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    for (const auto& field : req) request.headers.emplace_back(field.name_string(), field.value());
    request.body = std::move(req.body());
    request.remote = remote_;
    server_.Began();
    stream_.expires_never();  // the handler may take long (a profiling window)
    auto answered = std::make_shared<std::atomic<bool>>(false);
    HttpResponder respond = [self = shared_from_this(), answered](HttpResponse response) {
      if (answered->exchange(true)) return;
      net::post(self->stream_.get_executor(),
                [self, response = std::move(response)]() mutable { self->Write(std::move(response)); });
    };
    server_.handler_(std::move(request), std::move(respond));
  }

  void Write(HttpResponse response) {
    auto res = std::make_shared<http::response<http::string_body>>();
    if (response.status < 100 || response.status > 999) {
      response = TextResponse(500, fmt::format("the handler answered with status {}", response.status));
    }
    res->result(static_cast<unsigned>(response.status));
    if (!response.reason.empty()) res->reason(response.reason);
    res->version(11);
    for (auto& [name, value] : response.headers) {
      if (EqualsNoCase(name, "content-length") || EqualsNoCase(name, "transfer-encoding") ||
          EqualsNoCase(name, "connection")) {
        continue;
      }
      res->insert(name, value);
    }
    res->body() = std::move(response.body);
    res->keep_alive(keep_alive_ && !server_.stopping());
    res->prepare_payload();
    if (head_) res->body().clear();  // HEAD: the length of the body GET would get, and no body
    stream_.expires_after(kIdleTimeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
      self->server_.Ended();
      if (ec || !res->keep_alive()) return self->Close();
      self->Read();
    });
  }

  void Close() {
    boost::system::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  Impl& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string remote_;
  bool keep_alive_ = true;
  bool head_ = false;
  bool busy_ = false;  // a request is being handled or answered (strand-only)
};

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(net::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (!acceptor_.is_open() || stopping()) return;
      return Accept();  // e.g. too many open files: keep serving the others
    }
    auto connection = std::make_shared<Connection>(*this, std::move(socket));
    {
      std::lock_guard<std::mutex> lock(mu_);
      connections_.remove_if([](const std::weak_ptr<Connection>& c) { return c.expired(); });
      connections_.push_back(connection);
    }
    connection->Read();
    Accept();
  });
}

void HttpServer::Impl::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  stopping_ = true;
  net::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
  });
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& weak : connections_) {
      if (auto c = weak.lock()) open.push_back(std::move(c));
    }
  }
  for (auto& c : open) net::post(c->GetExecutor(), [c] { c->CloseIfIdle(); });
  open.clear();
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return in_flight_ == 0; });
  }
  work_.reset();
  io_.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() { Shutdown(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options, HttpHandler handler) {
  HEAPPROF_ASSIGN_OR_RETURN(auto address, ParseListenAddress(options.listen));
  if (!handler) return Error(ErrorCode::kInvalidArgument, "an HTTP server needs a handler");
  auto impl = std::make_unique<Impl>(options, std::move(handler));
  HEAPPROF_RETURN_IF_ERROR(impl->Listen(address.first, address.second));
  impl->Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const { return impl_->bound_.port(); }

std::string HttpServer::address() const {
  const net::ip::address& a = impl_->bound_.address();
  return a.is_v6() ? fmt::format("[{}]:{}", a.to_string(), port()) : fmt::format("{}:{}", a.to_string(), port());
}

size_t HttpServer::in_flight() const { return impl_->InFlight(); }

void HttpServer::Shutdown() {
  if (impl_) impl_->Shutdown();
}

}  // namespace heapprof
