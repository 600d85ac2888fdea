// HttpServer on Boost.Beast: one io_context, a strand per connection
// (heapprof/http/connection.cpp), a responder that posts the answer back onto
// its connection's strand, and OpenSSL's TLS when the options name a certificate.
#include "heapprof/http/http_server.h"

#include "heapprof/core/host_port.h"
#include "heapprof/http/connection.h"
#include "heapprof/http/listener_state.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including
// <utility>, which GCC 12 in C++20 mode does not pull in by itself.
#include <utility>

#include <malloc.h>

#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <list>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

namespace heapprof {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace {

// Bodies at least this large go back to the system (malloc_trim) when freed:
// glibc keeps freed memory in its arenas otherwise, and a burst of large
// bodies would leave the process at its peak.
constexpr size_t kTrimAfterBytes = size_t{1} << 20;

// The wait after an accept() failure at most (the first is the options').
constexpr auto kMaxAcceptBackoff = std::chrono::milliseconds(1000);

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

namespace internal {

bool ListenerState::Reserve(size_t bytes) {
  size_t now = buffered_.load();
  do {
    if (bytes > options_.max_buffered_bytes || now > options_.max_buffered_bytes - bytes) return false;
  } while (!buffered_.compare_exchange_weak(now, now + bytes));
  return true;
}

void ListenerState::Release(size_t bytes) {
  if (bytes == 0) return;
  buffered_ -= bytes;
  if (bytes >= kTrimAfterBytes) malloc_trim(0);
}

void ListenerState::Began() {
  std::lock_guard<std::mutex> lock(mu_);
  ++in_flight_;
}

void ListenerState::Ended() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  cv_.notify_all();
}

size_t ListenerState::InFlight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

void ListenerState::WaitAnswered() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return in_flight_ == 0; });
}

}  // namespace internal

namespace {

// A server-side TLS context from PEM files, every failure naming its file.
Result<std::unique_ptr<net::ssl::context>> TlsContext(const std::string& certificate, const std::string& key) {
  if (certificate.empty() != key.empty()) {
    return Error(ErrorCode::kInvalidArgument, "TLS needs both a certificate file and a private key file");
  }
  for (const std::string* file : {&certificate, &key}) {
    std::error_code fec;
    if (!std::filesystem::is_regular_file(*file, fec)) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("the TLS {} {} is not a file", file == &key ? "key" : "certificate", *file));
    }
  }
  auto ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 | net::ssl::context::no_sslv3 |
                   net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
  // A key with a passphrase fails to load instead of prompting on the terminal.
  ctx->set_password_callback([](size_t, net::ssl::context::password_purpose) { return std::string(); });
  auto bad = [](std::string_view what, const std::string& file, std::string_view why) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("the TLS {} {} cannot be used: {}", what, file, why));
  };
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(certificate, ec);
  if (ec) return bad("certificate", certificate, ec.message() + " (a PEM certificate, then its intermediates)");
  ctx->use_private_key_file(key, net::ssl::context::pem, ec);
  if (ec) {
    return bad("key", key, ec.message() + " (a PEM private key without a passphrase, the certificate's)");
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return bad("key", key, fmt::format("it is not the private key of the certificate {}", certificate));
  }
  return ctx;
}

}  // namespace

Status CheckTlsFiles(const std::string& certificate_file, const std::string& key_file) {
  return TlsContext(certificate_file, key_file).status();
}

class HttpServer::Impl {
 public:
  Impl(const HttpServerOptions& options, HttpHandler handler, std::unique_ptr<net::ssl::context> tls)
      : state_(options, std::move(handler)),
        tls_(std::move(tls)),
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
    int n = std::max(1, state_.options().threads);
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { io_.run(); });
  }

  void Accept();
  void OnAccept(beast::error_code ec, tcp::socket socket);
  void Shutdown();

  internal::ListenerState state_;
  std::unique_ptr<net::ssl::context> tls_;  // null: plain HTTP
  net::io_context io_;
  // Keeps the threads running while answers are pending with no socket work queued.
  net::executor_work_guard<net::io_context::executor_type> work_;
  tcp::acceptor acceptor_;
  net::steady_timer accept_timer_;
  std::chrono::milliseconds backoff_;
  tcp::endpoint bound_;
  std::vector<std::thread> threads_;
  bool shut_down_ = false;

  std::mutex mu_;
  std::list<std::weak_ptr<internal::Connection>> connections_;
};

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(net::make_strand(io_),
                         [this](beast::error_code ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

void HttpServer::Impl::OnAccept(beast::error_code ec, tcp::socket socket) {
  if (!acceptor_.is_open() || state_.stopping()) return;
  const HttpServerOptions& options = state_.options();
  if (ec) {
    if (ec == net::error::no_descriptors || ec.value() == ENFILE || ec == net::error::no_buffer_space ||
        ec == net::error::no_memory) {
      // The connection stays in the backlog; trying again at once would spin.
      accept_timer_.expires_after(backoff_);
      backoff_ = std::min<std::chrono::milliseconds>(backoff_ * 2, kMaxAcceptBackoff);
      accept_timer_.async_wait([this](beast::error_code timer_ec) {
        if (!timer_ec && !state_.stopping()) Accept();
      });
      return;
    }
    return Accept();  // e.g. the client reset before accept: serve the others
  }
  backoff_ = options.accept_backoff;
  bool over = state_.open_connections.load() >= options.max_connections;
  std::shared_ptr<internal::Connection> connection = internal::MakeConnection(state_, std::move(socket), tls_.get());
  {
    std::lock_guard<std::mutex> lock(mu_);
    connections_.remove_if([](const std::weak_ptr<internal::Connection>& c) { return c.expired(); });
    connections_.push_back(connection);
  }
  std::optional<HttpResponse> refusal;
  if (over) {
    refusal = TextResponse(
        503, fmt::format("{} connections are open, the most this server takes; try again", options.max_connections));
    refusal->headers.emplace_back("Retry-After", "1");
  }
  net::post(connection->executor(),
            [connection, refusal = std::move(refusal)]() mutable { connection->Start(std::move(refusal)); });
  Accept();
}

void HttpServer::Impl::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  state_.Stop();
  net::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    accept_timer_.cancel();
  });
  std::vector<std::shared_ptr<internal::Connection>> open;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& weak : connections_) {
      if (auto c = weak.lock()) open.push_back(std::move(c));
    }
  }
  for (auto& c : open) net::post(c->executor(), [c] { c->CloseIfIdle(); });
  open.clear();
  state_.WaitAnswered();
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
  HEAPPROF_ASSIGN_OR_RETURN(std::unique_ptr<net::ssl::context> tls,
                            options.tls_certificate_file.empty() && options.tls_key_file.empty()
                                ? Result<std::unique_ptr<net::ssl::context>>(nullptr)
                                : TlsContext(options.tls_certificate_file, options.tls_key_file));
  auto impl = std::make_unique<Impl>(options, std::move(handler), std::move(tls));
  HEAPPROF_RETURN_IF_ERROR(impl->Listen(address.first, address.second));
  impl->Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const { return impl_->bound_.port(); }

std::string HttpServer::address() const {
  const net::ip::address& a = impl_->bound_.address();
  return a.is_v6() ? fmt::format("[{}]:{}", a.to_string(), port()) : fmt::format("{}:{}", a.to_string(), port());
}

bool HttpServer::tls() const { return impl_->tls_ != nullptr; }
size_t HttpServer::in_flight() const { return impl_->state_.InFlight(); }
size_t HttpServer::connections() const { return impl_->state_.open_connections.load(); }
size_t HttpServer::buffered_bytes() const { return impl_->state_.buffered(); }

void HttpServer::Shutdown() {
  if (impl_) impl_->Shutdown();
}

}  // namespace heapprof
