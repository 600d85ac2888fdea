// A connection over Boost.Beast's tcp_stream, or its ssl_stream for TLS: the
// same request cycle for both, templated on the stream. Everything here runs
// on the connection's strand.
//
// Seeing the client leave while a request is handled (a profiling window may
// run for an hour): a FIN is not enough, because a client that half-closes
// (shutdown(SHUT_WR) after its request) sends one too and still reads. So a
// FIN is answered with an interim "100 Continue" (HTTP/1.1 clients must accept
// 1xx answers before the final one): a client that closed its socket resets
// the connection on those bytes, one that only half-closed takes them and
// waits. The probe repeats each second while the request runs, so a client
// that half-closes first and closes later is seen too. HTTP/1.0 has no 1xx,
// so there a FIN means the client left.
#include "heapprof/http/connection.h"

// Boost 1.74's asio/awaitable.hpp uses std::exchange without including
// <utility>, which GCC 12 in C++20 mode does not pull in by itself.
#include <utility>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <type_traits>

#include <fmt/format.h>

namespace heapprof::internal {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// How often a watched connection's TCP state is read once a FIN or pipelined
// bytes were seen, and how often a half-closed client is probed again.
constexpr auto kPollEvery = std::chrono::milliseconds(100);
constexpr auto kProbeEvery = std::chrono::milliseconds(1000);
// The longest wait for the client's close_notify after the server's.
constexpr auto kTlsShutdownWait = std::chrono::milliseconds(1000);

bool HeaderNameIs(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The kernel's TCP state of a socket (TCP_ESTABLISHED, TCP_CLOSE_WAIT after
// the peer's FIN, TCP_CLOSE after its reset), or -1.
int TcpState(int fd) {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return -1;
  return info.tcpi_state;
}

template <class Stream>
class StreamConnection final : public Connection, public std::enable_shared_from_this<StreamConnection<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

 public:
  template <class... Args>
  explicit StreamConnection(ListenerState& listener, Args&&... args)
      : listener_(listener), stream_(std::forward<Args>(args)...), timer_(stream_.get_executor()) {
    ++listener_.open_connections;
    boost::system::error_code ec;
    tcp::endpoint peer = socket().remote_endpoint(ec);
    if (!ec) remote_ = fmt::format("{}:{}", peer.address().to_string(), peer.port());
    socket().set_option(tcp::no_delay(true), ec);
  }
  ~StreamConnection() override {
    parser_.reset();  // the body's memory goes before the budget (and malloc_trim) sees it back
    listener_.Release(reserved_);
    --listener_.open_connections;
  }

  net::any_io_executor executor() override { return stream_.get_executor(); }

  void CloseIfIdle() override {
    if (!busy_) Close();
  }

  void Start(std::optional<HttpResponse> refusal) override {
    if constexpr (!kTls) {
      return refusal ? Refuse(std::move(*refusal)) : Read();
    } else {
      // A client that speaks plain HTTP to this port gets an answer it can
      // read (in clear text) instead of a handshake failure.
      lowest().expires_after(options().header_timeout);
      beast::async_detect_ssl(
          lowest(), buffer_,
          [self = this->shared_from_this(), refusal = std::move(refusal)](beast::error_code ec, bool tls) mutable {
            if (ec) return self->Close();
            if (!tls) return self->PlainOnTlsPort();
            self->stream_.async_handshake(
                net::ssl::stream_base::server, self->buffer_.data(),
                [self, refusal = std::move(refusal)](beast::error_code hec, size_t used) mutable {
                  if (hec) return self->Close();
                  self->buffer_.consume(used);
                  refusal ? self->Refuse(std::move(*refusal)) : self->Read();
                });
          });
    }
  }

 private:
  const HttpServerOptions& options() const { return listener_.options(); }
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  tcp::socket& socket() { return lowest().socket(); }

  // Waits for the first byte of the next request (keep-alive idle time).
  void Read() {
    busy_ = false;
    if (listener_.stopping()) return Close();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(std::min<size_t>(options().max_header_bytes, UINT32_MAX)));
    parser_->body_limit(options().max_body_bytes);
    if (buffer_.size() > 0) return ReadHeader();  // pipelined
    lowest().expires_after(options().idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096), [self = this->shared_from_this()](beast::error_code ec, size_t n) {
      self->buffer_.commit(n);
      if (ec || n == 0) return self->Close();
      self->ReadHeader();
    });
  }

  void ReadHeader() {
    lowest().expires_after(options().header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  // Whether the request line is over its limit. Beast consumes the request
  // line as soon as it is complete, so one that was parsed has its target
  // set; one that was not is still at the front of the buffer, without a line end.
  bool RequestLineTooLong() const {
    const auto& header = parser_->get();
    if (!header.target().empty()) {
      return header.method_string().size() + header.target().size() + 10 > options().max_request_line_bytes;
    }
    std::string_view seen(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    size_t eol = seen.find('\n');
    return (eol == std::string_view::npos ? seen.size() : eol) > options().max_request_line_bytes;
  }

  void OnHeader(beast::error_code ec) {
    if (ec == http::error::header_limit) {
      if (RequestLineTooLong()) {
        return Refuse(
            TextResponse(414, fmt::format("request line longer than {} bytes", options().max_request_line_bytes)));
      }
      return Refuse(TextResponse(431, fmt::format("request header larger than {} bytes", options().max_header_bytes)));
    }
    if (ec == beast::error::timeout) return Close();  // tcp_stream closed the socket: nothing can be answered
    if (ec) {
      if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
          ec == net::ssl::error::stream_truncated) {
        return Close();
      }
      return Refuse(TextResponse(400, fmt::format("bad request: {}", ec.message())));
    }
    if (RequestLineTooLong()) {
      return Refuse(
          TextResponse(414, fmt::format("request line longer than {} bytes", options().max_request_line_bytes)));
    }
    if (boost::optional<uint64_t> length = parser_->content_length()) {
      if (*length > options().max_body_bytes) return TooLarge();
      if (!Grow(static_cast<size_t>(*length))) return Busy();
    }
    ReadBody();
  }

  // Takes the budget up to `total` body bytes for this request.
  bool Grow(size_t total) {
    if (total <= reserved_) return true;
    if (!listener_.Reserve(total - reserved_)) return false;
    reserved_ = total;
    return true;
  }

  void TooLarge() {
    Refuse(TextResponse(413, fmt::format("request body larger than {} bytes", options().max_body_bytes)));
  }

  void Busy() {
    parser_.reset();
    HttpResponse r = TextResponse(503, fmt::format("the server holds {} bytes of request bodies already (the limit "
                                                   "of all connections together); try again",
                                                   options().max_buffered_bytes));
    r.headers.emplace_back("Retry-After", "1");
    Refuse(std::move(r));
  }

  void ReadBody() {
    if (parser_->is_done()) return OnRequest();
    lowest().expires_after(options().idle_timeout);
    http::async_read_some(stream_, buffer_, *parser_,
                          [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnBody(ec); });
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
    version_ = req.version();
    HttpRequest request;
    request.method = std::string(req.method_string());
    request.target = std::string(req.target());
    for (const auto& field : req) request.headers.emplace_back(field.name_string(), field.value());
    request.body = std::move(req.body());
    request.remote = remote_;
    client_gone_ = std::make_shared<CancelSignal>();
    request.client_gone = client_gone_;
    listener_.Began();
    lowest().expires_never();  // the handler may take long (a profiling window)
    watching_ = true;
    half_closed_ = false;
    WatchForClose();
    // The connection keeps itself alive until its answer is written; the
    // responder only points at it, so a responder kept (or dropped) after the
    // server is gone touches nothing of the server's.
    handling_ = this->shared_from_this();
    auto answered = std::make_shared<std::atomic<bool>>(false);
    HttpResponder respond = [weak = this->weak_from_this(), answered](HttpResponse response) {
      if (answered->exchange(true)) return;
      std::shared_ptr<StreamConnection> self = weak.lock();
      if (!self) return;
      net::post(self->stream_.get_executor(),
                [self, response = std::move(response)]() mutable { self->Write(std::move(response)); });
    };
    listener_.Handle(std::move(request), std::move(respond));
  }

  // While the handler runs: a readable socket with nothing to read is the
  // client's FIN; an error is its reset. Bytes (a pipelined request, or TLS
  // records) stay for later, and the TCP state tells of a FIN behind them.
  void WatchForClose() {
    socket().async_wait(tcp::socket::wait_read, [self = this->shared_from_this()](beast::error_code ec) {
      if (ec || !self->watching_) return;
      char c;
      ssize_t n = ::recv(self->socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n > 0) return self->Poll(kPollEvery);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return self->WatchForClose();
      if (n == 0) return self->PeerFinishedSending();
      self->Gone();
    });
  }

  void PeerFinishedSending() {
    if (version_ < 11) return Gone();  // no 1xx for HTTP/1.0: its FIN is its leaving
    half_closed_ = true;
    Probe();
  }

  void Probe() {
    if (!watching_) return;
    probing_ = true;
    last_probe_ = std::chrono::steady_clock::now();
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       self->probing_ = false;
                       if (self->pending_) {  // the answer came meanwhile
                         HttpResponse r = std::move(*self->pending_);
                         self->pending_.reset();
                         return self->Write(std::move(r));
                       }
                       if (!self->watching_) return;
                       if (ec) return self->Gone();
                       self->Poll(kPollEvery);
                     });
  }

  // Reads the TCP state after `delay`: a reset ends the request; a FIN
  // (behind pipelined bytes) is probed; a half-closed client is probed again
  // every kProbeEvery.
  void Poll(std::chrono::milliseconds delay) {
    timer_.expires_after(delay);
    timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec || !self->watching_) return;
      int state = TcpState(self->socket().native_handle());
      if (state < 0 || state == TCP_CLOSE) return self->Gone();
      if (self->half_closed_) {
        if (std::chrono::steady_clock::now() - self->last_probe_ >= kProbeEvery) return self->Probe();
        return self->Poll(kPollEvery);
      }
      if (state == TCP_CLOSE_WAIT) return self->PeerFinishedSending();
      self->Poll(kPollEvery);
    });
  }

  void Gone() {
    StopWatching();
    if (client_gone_) client_gone_->Cancel();
  }

  void StopWatching() {
    if (!watching_) return;
    watching_ = false;
    boost::system::error_code ignored;
    socket().cancel(ignored);  // ends the close watch
    timer_.cancel();
  }

  void Write(HttpResponse response) {
    StopWatching();
    if (probing_) {  // one write at a time: after the probe's
      pending_ = std::move(response);
      return;
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
      if (HeaderNameIs(name, "content-length") || HeaderNameIs(name, "transfer-encoding") ||
          HeaderNameIs(name, "connection")) {
        continue;
      }
      res->insert(name, value);
    }
    res->body() = std::move(response.body);
    // A client that half-closed sends no further request.
    res->keep_alive(keep_alive_ && !half_closed_ && !listener_.stopping());
    res->prepare_payload();
    if (head_) res->body().clear();  // HEAD: the length of the body GET would get, and no body
    lowest().expires_after(options().idle_timeout);
    http::async_write(stream_, *res, [self = this->shared_from_this(), res](beast::error_code ec, size_t) {
      self->listener_.Ended();
      self->listener_.Release(std::exchange(self->reserved_, 0));
      self->handling_.reset();  // `self` holds it until this handler returns
      if (!ec && self->refused_) return self->Linger(0);
      if (ec) return self->Close();
      if (!res->keep_alive()) return self->Finish();
      self->Read();
    });
  }

  // Answers a request (or connection) over a limit and closes the connection,
  // reading what the client still sends for a moment first, so that closing
  // with unread bytes does not reset the connection before it reads the answer.
  void Refuse(HttpResponse response) {
    busy_ = true;
    refused_ = true;
    listener_.Began();
    keep_alive_ = false;
    Write(std::move(response));
  }

  // Plain HTTP on a TLS listener: a clear-text 400 that says so, then closed.
  void PlainOnTlsPort() {
    refused_ = true;
    constexpr std::string_view kBody = "this listener speaks HTTPS only: use an https:// URL\n";
    auto text = std::make_shared<std::string>(
        fmt::format("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
                    "Content-Length: {}\r\n\r\n{}",
                    kBody.size(), kBody));
    lowest().expires_after(options().header_timeout);
    net::async_write(lowest(), net::buffer(*text),
                     [self = this->shared_from_this(), text](beast::error_code ec, size_t) {
                       if (ec) return self->Close();
                       self->Linger(0);
                     });
  }

  // After a refusal: no more sending; discard what arrives (at most 1 MiB, for
  // at most 2 s), then close. Read below TLS: nothing more is decrypted.
  void Linger(size_t discarded) {
    if (discarded == 0) {
      boost::system::error_code ignored;
      socket().shutdown(tcp::socket::shutdown_send, ignored);
      parser_.reset();
      listener_.Release(std::exchange(reserved_, 0));
      lowest().expires_after(std::chrono::seconds(2));
    }
    if (discarded > (size_t{1} << 20)) return Close();
    lowest().async_read_some(net::buffer(drain_),
                             [self = this->shared_from_this(), discarded](beast::error_code ec, size_t n) {
                               if (ec) return self->Close();
                               self->Linger(discarded + n + 1);
                             });
  }

  // The end of a connection after its last answer: TLS says close_notify first
  // (waiting a moment for the client's), so the client sees a clean end.
  void Finish() {
    if constexpr (kTls) {
      lowest().expires_after(kTlsShutdownWait);
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) { self->Close(); });
    } else {
      Close();
    }
  }

  void Close() {
    boost::system::error_code ec;
    parser_.reset();
    socket().shutdown(tcp::socket::shutdown_both, ec);
    socket().close(ec);
  }

  ListenerState& listener_;
  Stream stream_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string remote_;
  size_t reserved_ = 0;  // bytes of the budget this request's body holds
  bool refused_ = false;
  std::array<char, 4096> drain_{};
  std::shared_ptr<CancelSignal> client_gone_;
  std::shared_ptr<StreamConnection> handling_;  // itself, from a request's start to its answer's end
  std::optional<HttpResponse> pending_;         // an answer waiting for the probe's write
  std::chrono::steady_clock::time_point last_probe_;
  unsigned version_ = 11;
  bool watching_ = false;
  bool half_closed_ = false;  // the client sent its FIN and still reads
  bool probing_ = false;
  bool keep_alive_ = true;
  bool head_ = false;
  bool busy_ = false;  // a request is being handled or answered
};

}  // namespace

std::shared_ptr<Connection> MakeConnection(ListenerState& listener, tcp::socket socket, net::ssl::context* tls) {
  if (tls == nullptr) return std::make_shared<StreamConnection<beast::tcp_stream>>(listener, std::move(socket));
  return std::make_shared<StreamConnection<beast::ssl_stream<beast::tcp_stream>>>(listener, std::move(socket), *tls);
}

}  // namespace heapprof::internal
