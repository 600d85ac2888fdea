// HttpServer on Boost.Beast: one io_context, a strand per connection, and a
// responder that posts the answer back onto its connection's strand.
#include "heapprof/http/http_server.h"

#include "heapprof/core/host_port.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including
// <utility>, which GCC 12 in C++20 mode does not pull in by itself.
#include <utility>

#include <malloc.h>
#include <sys/socket.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
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

// Bodies at least this large go back to the system (malloc_trim) when freed:
// glibc keeps freed memory in its arenas otherwise, and a burst of large
// bodies would leave the process at its peak.
constexpr size_t kTrimAfterBytes = size_t{1} << 20;

// The wait after an accept() failure at most (the first is the options').
constexpr auto kMaxAcceptBackoff = std::chrono::milliseconds(1000);

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

void CancelSignal::Cancel() {
  std::vector<std::pair<uint64_t, std::function<void()>>> run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    run.swap(callbacks_);
  }
  for (auto& [id, callback] : run) callback();
}

bool CancelSignal::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

uint64_t CancelSignal::OnCancel(std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!cancelled_) {
      uint64_t id = next_id_++;
      callbacks_.emplace_back(id, std::move(callback));
      return id;
    }
  }
  callback();
  return 0;
}

void CancelSignal::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  callbacks_.erase(std::remove_if(callbacks_.begin(), callbacks_.end(), [&](const auto& c) { return c.first == id; }),
                   callbacks_.end());
}

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
  auto bad = [&](std::string_view why) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("bad listen address '{}': {}", listen, why));
  };
  Result<HostPort> parsed = ParseHostPort(listen, PortZero::kPicksFreePort);
  if (!parsed.ok()) return bad(parsed.status().message());
  const std::string& host = parsed->host;
  boost::system::error_code addr_ec;
  net::ip::make_address(host, addr_ec);
  if (addr_ec && host != "localhost") return bad("the host must be an IP address or localhost");
  return std::pair<std::string, uint16_t>(host == "localhost" ? "127.0.0.1" : host, parsed->port);
}

bool IsLoopbackListen(std::string_view listen) {
  Result<std::pair<std::string, uint16_t>> a = ParseListenAddress(listen);
  if (!a.ok()) return false;
  boost::system::error_code ec;
  net::ip::address address = net::ip::make_address(a->first, ec);
  return !ec && address.is_loopback();
}

class HttpServer::Impl {
 public:
  class Connection;

  Impl(const HttpServerOptions& options, HttpHandler handler)
      : options_(options),
        handler_(std::move(handler)),
        work_(net::make_work_guard(io_)),
        acceptor_(net::make_strand(io_)),
        accept_timer_(acceptor_.get_executor()),
        backoff_(options.accept_backoff) {}

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
  void OnAccept(beast::error_code ec, tcp::socket socket);
  void Shutdown();

  // Takes `bytes` from the buffered-bytes budget; false when it would go over.
  bool Reserve(size_t bytes) {
    size_t now = buffered_.load();
    do {
      if (bytes > options_.max_buffered_bytes || now > options_.max_buffered_bytes - bytes) return false;
    } while (!buffered_.compare_exchange_weak(now, now + bytes));
    return true;
  }
  void Release(size_t bytes) {
    if (bytes == 0) return;
    buffered_ -= bytes;
    if (bytes >= kTrimAfterBytes) malloc_trim(0);
  }

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
  net::steady_timer accept_timer_;
  std::chrono::milliseconds backoff_;
  tcp::endpoint bound_;
  std::atomic<size_t> open_connections_{0};
  std::atomic<size_t> buffered_{0};
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  bool shut_down_ = false;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t in_flight_ = 0;
  std::list<std::weak_ptr<Connection>> connections_;
};

// One client connection: read a request (its header, then its body, each
// under the listener's limits), hand it over, watch for the client leaving
// while it is handled, write the answer, repeat.
class HttpServer::Impl::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Impl& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {
    ++server_.open_connections_;
    boost::system::error_code ec;
    tcp::endpoint peer = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = fmt::format("{}:{}", peer.address().to_string(), peer.port());
    stream_.socket().set_option(tcp::no_delay(true), ec);
  }
  ~Connection() {
    parser_.reset();  // the body's memory goes before the budget (and malloc_trim) sees it back
    server_.Release(reserved_);
    --server_.open_connections_;
  }

  // Waits for the first byte of the next request (keep-alive idle time).
  void Read() {
    busy_ = false;
    if (server_.stopping()) return Close();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(std::min<size_t>(server_.options_.max_header_bytes, UINT32_MAX)));
    parser_->body_limit(server_.options_.max_body_bytes);
    if (buffer_.size() > 0) return ReadHeader();  // pipelined
    stream_.expires_after(server_.options_.idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->buffer_.commit(n);
      if (ec || n == 0) return self->Close();
      self->ReadHeader();
    });
  }

  beast::tcp_stream::executor_type GetExecutor() { return stream_.get_executor(); }

  // On the connection's strand, when the server shuts down.
  void CloseIfIdle() {
    if (!busy_) Close();
  }

  // Answers a request (or connection) over a limit and closes the connection,
  // reading what the client still sends for a moment first, so that closing
  // with unread bytes does not reset the connection before it reads the answer.
  void Refuse(HttpResponse response) {
    busy_ = true;
    refused_ = true;
    server_.Began();
    keep_alive_ = false;
    Write(std::move(response));
  }

 private:
  void ReadHeader() {
    stream_.expires_after(server_.options_.header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  // Whether the request line is over its limit. Beast consumes the request
  // line as soon as it is complete, so one that was parsed has its target
  // set; one that was not is still at the front of the buffer, without a line end.
  bool RequestLineTooLong() const {
    const auto& header = parser_->get();
    if (!header.target().empty()) {
      return header.method_string().size() + header.target().size() + 10 > server_.options_.max_request_line_bytes;
    }
    std::string_view seen(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    size_t eol = seen.find('\n');
    return (eol == std::string_view::npos ? seen.size() : eol) > server_.options_.max_request_line_bytes;
  }

  void OnHeader(beast::error_code ec) {
    if (ec == http::error::header_limit) {
      if (RequestLineTooLong()) {
        return Refuse(TextResponse(414, fmt::format("request line longer than {} bytes",
                                                    server_.options_.max_request_line_bytes)));
      }
      return Refuse(TextResponse(431, fmt::format("request header larger than {} bytes",
                                                  server_.options_.max_header_bytes)));
    }
    if (ec == beast::error::timeout) {
      // tcp_stream closed the socket: nothing can be answered.
      return Close();
    }
    if (ec) {
      if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset) {
        return Close();
      }
      return Refuse(TextResponse(400, fmt::format("bad request: {}", ec.message())));
    }
    if (RequestLineTooLong()) {
      return Refuse(TextResponse(414, fmt::format("request line longer than {} bytes",
                                                  server_.options_.max_request_line_bytes)));
    }
    if (boost::optional<uint64_t> length = parser_->content_length()) {
      if (*length > server_.options_.max_body_bytes) return TooLarge();
      if (!Grow(static_cast<size_t>(*length))) return Busy();
    }
    ReadBody();
  }

  // Takes the budget up to `total` body bytes for this request.
  bool Grow(size_t total) {
    if (total <= reserved_) return true;
    if (!server_.Reserve(total - reserved_)) return false;
    reserved_ = total;
    return true;
  }

  void TooLarge() {
    Refuse(TextResponse(413, fmt::format("request body larger than {} bytes", server_.options_.max_body_bytes)));
  }

  void Busy() {
    parser_.reset();
    HttpResponse r = TextResponse(503, fmt::format("the server holds {} bytes of request bodies already (the limit "
                                                   "of all connections together); try again",
                                                   server_.options_.max_buffered_bytes));
    r.headers.emplace_back("Retry-After", "1");
    Refuse(std::move(r));
  }

  void ReadBody() {
    if (parser_->is_done()) return OnRequest();
    stream_.expires_after(server_.options_.idle_timeout);
    http::async_read_some(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
  }

  void OnBody(beast::error_code ec) {
    if (ec == http::error::body_limit) return TooLarge();
    if (ec) return Close();
    if (!parser_->content_length() && !Grow(parser_->get().body().capacity())) return Busy();  // chunked
    ReadBody();
  }

  void OnRequest() {
    busy_ = true;
    http::request<http::string_body> req = parser_->release();
    parser_.reset();
    keep_alive_ = req.keep_alive();
    head_ = req.method() == http::verb::head;
    HttpRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    for (const auto& field : req) request.headers.emplace_back(field.name_string(), field.value());
    request.body = std::move(req.body());
    request.remote = remote_;
    client_gone_ = std::make_shared<CancelSignal>();
    request.client_gone = client_gone_;
    server_.Began();
    stream_.expires_never();  // the handler may take long (a profiling window)
    watching_ = true;
    WatchForClose();
    auto answered = std::make_shared<std::atomic<bool>>(false);
    HttpResponder respond = [self = shared_from_this(), answered](HttpResponse response) {
      if (answered->exchange(true)) return;
      net::post(self->stream_.get_executor(),
                [self, response = std::move(response)]() mutable { self->Write(std::move(response)); });
    };
    server_.handler_(std::move(request), std::move(respond));
  }

  // While the handler runs: a readable socket with nothing to read is the
  // client's FIN (or reset); bytes are a pipelined request, left for later.
  void WatchForClose() {
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
      if (ec || !self->watching_) return;
      char c;
      ssize_t n = ::recv(self->stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n > 0) return;  // pipelined bytes: the close, if any, is seen when writing
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return self->WatchForClose();
      self->watching_ = false;
      if (self->client_gone_) self->client_gone_->Cancel();
    });
  }

  void Write(HttpResponse response) {
    if (watching_) {
      watching_ = false;
      boost::system::error_code ignored;
      stream_.socket().cancel(ignored);  // ends the close watch
    }
    client_gone_.reset();
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
    stream_.expires_after(server_.options_.idle_timeout);
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
      self->server_.Ended();
      self->server_.Release(std::exchange(self->reserved_, 0));
      if (!ec && self->refused_) return self->Linger(0);
      if (ec || !res->keep_alive()) return self->Close();
      self->Read();
    });
  }

  // After a refusal: no more sending; discard what arrives (at most 1 MiB, for
  // at most 2 s), then close.
  void Linger(size_t discarded) {
    if (discarded == 0) {
      boost::system::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      parser_.reset();
      server_.Release(std::exchange(reserved_, 0));
      stream_.expires_after(std::chrono::seconds(2));
    }
    if (discarded > (size_t{1} << 20)) return Close();
    stream_.async_read_some(net::buffer(drain_), [self = shared_from_this(), discarded](beast::error_code ec, size_t n) {
      if (ec) return self->Close();
      self->Linger(discarded + n + 1);
    });
  }

  void Close() {
    boost::system::error_code ec;
    parser_.reset();
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  Impl& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string remote_;
  size_t reserved_ = 0;  // bytes of the budget this request's body holds
  bool refused_ = false;
  std::array<char, 4096> drain_{};
  std::shared_ptr<CancelSignal> client_gone_;
  bool watching_ = false;
  bool keep_alive_ = true;
  bool head_ = false;
  bool busy_ = false;  // a request is being handled or answered (strand-only)
};

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(net::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    OnAccept(ec, std::move(socket));
  });
}

void HttpServer::Impl::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (!acceptor_.is_open() || stopping()) return;
  if (ec) {
    if (ec == net::error::no_descriptors || ec.value() == ENFILE || ec == net::error::no_buffer_space ||
        ec == net::error::no_memory) {
      // The connection stays in the backlog; trying again at once would spin.
      accept_timer_.expires_after(backoff_);
      backoff_ = std::min<std::chrono::milliseconds>(backoff_ * 2, kMaxAcceptBackoff);
      accept_timer_.async_wait([this](beast::error_code timer_ec) {
        if (!timer_ec && !stopping()) Accept();
      });
      return;
    }
    return Accept();  // e.g. the client reset before accept: serve the others
  }
  backoff_ = options_.accept_backoff;
  bool over = open_connections_.load() >= options_.max_connections;
  auto connection = std::make_shared<Connection>(*this, std::move(socket));
  {
    std::lock_guard<std::mutex> lock(mu_);
    connections_.remove_if([](const std::weak_ptr<Connection>& c) { return c.expired(); });
    connections_.push_back(connection);
  }
  if (over) {
    HttpResponse r = TextResponse(503, fmt::format("{} connections are open, the most this server takes; try again",
                                                   options_.max_connections));
    r.headers.emplace_back("Retry-After", "1");
    net::post(connection->GetExecutor(), [connection, r = std::move(r)]() mutable { connection->Refuse(std::move(r)); });
  } else {
    net::post(connection->GetExecutor(), [connection] { connection->Read(); });
  }
  Accept();
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
    accept_timer_.cancel();
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
size_t HttpServer::connections() const { return impl_->open_connections_.load(); }
size_t HttpServer::buffered_bytes() const { return impl_->buffered_.load(); }

void HttpServer::Shutdown() {
  if (impl_) impl_->Shutdown();
}

}  // namespace heapprof
