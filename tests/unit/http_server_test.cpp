// HttpServer's limits over real loopback sockets: header and request-line
// sizes (431/414), connections (503), bodies buffered over all connections
// (503 with Retry-After, budget returned), header timeout, and the client's
// close seen while its request is handled (a half-close is not one).
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "heapprof/http/http_server.h"

using namespace heapprof;

namespace {

int Connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// The client has sent all it will (a refused connection then closes at once).
void Done(int fd) { ::shutdown(fd, SHUT_WR); }

void Send(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close first
    sent += static_cast<size_t>(n);
  }
}

// Everything the server sends until it closes (or 10 s pass: a failure then).
std::string ReadUntilClosed(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10'000) <= 0) return out + "<timed out>";
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

// The status line's code of a response, or 0.
int StatusOf(const std::string& response) {
  if (!response.starts_with("HTTP/1.1 ")) return 0;
  return std::stoi(response.substr(9, 3));
}

HttpHandler Hello() {
  return [](HttpRequest r, HttpResponder respond) {
    respond(TextResponse(200, "hello " + std::to_string(r.body.size())));
  };
}

}  // namespace

TEST_CASE("http server: a too long request line is 414, too large a header 431", "[http]") {
  HttpServerOptions options;
  options.max_request_line_bytes = 1024;
  options.max_header_bytes = 4096;
  auto server = HttpServer::Start(options, Hello());
  REQUIRE(server.ok());
  uint16_t port = server.value()->port();

  int line = Connect(port);
  Send(line, "GET /" + std::string(2000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  Done(line);
  CHECK(StatusOf(ReadUntilClosed(line)) == 414);
  ::close(line);

  int endless_line = Connect(port);  // no line end at all, beyond the header limit
  Send(endless_line, "GET /" + std::string(8000, 'a'));
  Done(endless_line);
  CHECK(StatusOf(ReadUntilClosed(endless_line)) == 414);
  ::close(endless_line);

  int header = Connect(port);
  Send(header, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(6000, 'b') + "\r\n\r\n");
  Done(header);
  CHECK(StatusOf(ReadUntilClosed(header)) == 431);
  ::close(header);

  int fine = Connect(port);
  Send(fine, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(StatusOf(ReadUntilClosed(fine)) == 200);
  ::close(fine);
}

TEST_CASE("http server: connections beyond max_connections get 503 and close", "[http]") {
  HttpServerOptions options;
  options.max_connections = 2;
  auto server = HttpServer::Start(options, Hello());
  REQUIRE(server.ok());
  uint16_t port = server.value()->port();
  int a = Connect(port), b = Connect(port);
  // Both are served (so both are open on the server's side).
  Send(a, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  Send(b, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  char buf[256];
  CHECK(::recv(a, buf, sizeof buf, 0) > 0);
  CHECK(::recv(b, buf, sizeof buf, 0) > 0);
  int c = Connect(port);
  Done(c);
  std::string refused = ReadUntilClosed(c);
  CHECK(StatusOf(refused) == 503);
  CHECK_THAT(refused, Catch::Contains("Retry-After: 1"));
  ::close(c);
  ::close(a);
  for (int i = 0; i < 1000 && server.value()->connections() > 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  int d = Connect(port);
  Send(d, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(StatusOf(ReadUntilClosed(d)) == 200);
  ::close(d);
  ::close(b);
}

TEST_CASE("http server: bodies buffered over all connections are bounded, and the budget comes back", "[http]") {
  HttpServerOptions options;
  options.max_buffered_bytes = 1 << 20;
  auto server = HttpServer::Start(options, Hello());
  REQUIRE(server.ok());
  uint16_t port = server.value()->port();
  const std::string head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 700000\r\n\r\n";
  int a = Connect(port);
  Send(a, head + std::string(1000, 'x'));  // unfinished: holds its 700000 bytes
  for (int i = 0; i < 1000 && server.value()->buffered_bytes() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(server.value()->buffered_bytes() == 700000);
  int b = Connect(port);
  Send(b, head);
  Done(b);
  std::string refused = ReadUntilClosed(b);
  CHECK(StatusOf(refused) == 503);
  CHECK_THAT(refused, Catch::Contains("Retry-After: 1"));
  ::close(b);
  // A chunked body counts as it arrives.
  int chunked = Connect(port);
  Send(chunked, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  std::string chunk = std::string(100000, 'c');
  for (int i = 0; i < 5; ++i) Send(chunked, "186a0\r\n" + chunk + "\r\n");
  Done(chunked);
  CHECK(StatusOf(ReadUntilClosed(chunked)) == 503);
  ::close(chunked);
  ::close(a);
  for (int i = 0; i < 1000 && server.value()->buffered_bytes() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(server.value()->buffered_bytes() == 0);
  int c = Connect(port);
  Send(c,
       "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 700000\r\n\r\n" + std::string(700000, 'y'));
  std::string ok = ReadUntilClosed(c);
  CHECK(StatusOf(ok) == 200);
  CHECK_THAT(ok, Catch::Contains("hello 700000"));
  ::close(c);
  CHECK(server.value()->buffered_bytes() == 0);
}

TEST_CASE("http server: a header dripped slower than header_timeout is closed", "[http]") {
  HttpServerOptions options;
  options.header_timeout = std::chrono::milliseconds(200);
  auto server = HttpServer::Start(options, Hello());
  REQUIRE(server.ok());
  int slow = Connect(server.value()->port());
  Send(slow, "GET / HTTP/1.1\r\nHost: x\r\n");  // and never the blank line
  std::string got = ReadUntilClosed(slow);
  CHECK(got.find("<timed out>") == std::string::npos);  // closed by the server well before 10 s
  ::close(slow);
}

TEST_CASE("http server: a client that closes while its request is handled raises client_gone", "[http]") {
  std::mutex mu;
  std::condition_variable cv;
  std::shared_ptr<CancelSignal> gone;
  HttpResponder held;
  auto server = HttpServer::Start({}, [&](HttpRequest r, HttpResponder respond) {
    std::lock_guard<std::mutex> lock(mu);
    gone = r.client_gone;
    held = std::move(respond);
    cv.notify_all();
  });
  REQUIRE(server.ok());
  int fd = Connect(server.value()->port());
  Send(fd, "GET /debug/pprof/heap?seconds=3600 HTTP/1.1\r\nHost: x\r\n\r\n");
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return gone != nullptr; });
  CHECK_FALSE(gone->cancelled());
  std::atomic<bool> fired{false};
  gone->OnCancel([&] {
    fired = true;
    cv.notify_all();
  });
  ::close(fd);
  CHECK(cv.wait_for(lock, std::chrono::seconds(10), [&] { return fired.load(); }));
  lock.unlock();
  held(TextResponse(200, "too late"));  // answering a gone client is harmless
}

TEST_CASE("http server: a responder kept after the server is destroyed touches nothing of it", "[http]") {
  std::mutex mu;
  std::vector<HttpResponder> held;
  std::string answer;
  {
    auto server = HttpServer::Start({}, [&](HttpRequest, HttpResponder respond) {
      std::lock_guard<std::mutex> lock(mu);
      held.push_back(std::move(respond));
    });
    REQUIRE(server.ok());
    int fd = Connect(server.value()->port());
    Send(fd, "GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!held.empty()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard<std::mutex> lock(mu);
    REQUIRE(held.size() == 1);
    held[0](TextResponse(200, "answered"));
    answer = ReadUntilClosed(fd);
    ::close(fd);
  }
  CHECK(StatusOf(answer) == 200);
  held[0](TextResponse(200, "twice"));  // a second call, with the server gone, does nothing
  held.clear();                         // the last copy goes after the server (AddressSanitizer checks this)
}

TEST_CASE("http server: a pipelined request while one is handled does not count as a close", "[http]") {
  std::atomic<int> handled{0};
  std::atomic<int> cancelled{0};
  auto server = HttpServer::Start({}, [&](HttpRequest r, HttpResponder respond) {
    ++handled;
    std::shared_ptr<CancelSignal> gone = r.client_gone;
    std::thread([gone, respond, &cancelled] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (gone->cancelled()) ++cancelled;
      respond(TextResponse(200, "ok"));
    }).detach();
  });
  REQUIRE(server.ok());
  int fd = Connect(server.value()->port());
  Send(fd, "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string got = ReadUntilClosed(fd);
  ::close(fd);
  CHECK(handled == 2);
  CHECK(cancelled == 0);
  size_t first = got.find("HTTP/1.1 200");
  CHECK(first != std::string::npos);
  CHECK(got.find("HTTP/1.1 200", first + 1) != std::string::npos);
}

namespace {

// A handler that holds each request until the test answers it, and tells the
// test of it; `gone` is the request's client_gone.
struct HeldRequests {
  std::mutex mu;
  std::condition_variable cv;
  std::shared_ptr<CancelSignal> gone;
  HttpResponder respond;
  std::atomic<bool> cancelled{false};

  HttpHandler Handler() {
    return [this](HttpRequest r, HttpResponder responder) {
      std::lock_guard<std::mutex> lock(mu);
      gone = r.client_gone;
      respond = std::move(responder);
      gone->OnCancel([this] {
        cancelled = true;
        cv.notify_all();
      });
      cv.notify_all();
    };
  }
  void WaitHeld() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return respond != nullptr; });
  }
  // Whether client_gone was raised within `limit`.
  bool WaitCancelled(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, limit, [&] { return cancelled.load(); });
  }
};

}  // namespace

TEST_CASE("http server: a client that half-closes after its request still gets the answer, and is not gone", "[http]") {
  HeldRequests held;
  auto server = HttpServer::Start({}, held.Handler());
  REQUIRE(server.ok());
  int fd = Connect(server.value()->port());
  Send(fd, "GET /debug/pprof/heap?seconds=3600 HTTP/1.1\r\nHost: x\r\n\r\n");
  held.WaitHeld();
  Done(fd);  // shutdown(SHUT_WR): the client still reads
  // Long enough for the FIN to be seen and probed more than once (every second).
  CHECK_FALSE(held.WaitCancelled(std::chrono::milliseconds(2500)));
  held.respond(TextResponse(200, "the window's profile"));
  std::string got = ReadUntilClosed(fd);
  ::close(fd);
  // Interim 100 answers first (the probes), then the answer; the connection closes after it.
  CHECK_THAT(got, Catch::Contains("HTTP/1.1 100 Continue\r\n\r\n"));
  size_t final_answer = got.find("HTTP/1.1 200 OK");
  REQUIRE(final_answer != std::string::npos);
  CHECK(got.find("HTTP/1.1 100", final_answer) == std::string::npos);
  CHECK_THAT(got, Catch::EndsWith("the window's profile\n"));
  CHECK(got.find("<timed out>") == std::string::npos);
  held.respond = nullptr;
}

TEST_CASE("http server: a client that half-closes and then closes is gone", "[http]") {
  HeldRequests held;
  auto server = HttpServer::Start({}, held.Handler());
  REQUIRE(server.ok());
  int fd = Connect(server.value()->port());
  Send(fd, "GET /debug/pprof/heap?seconds=3600 HTTP/1.1\r\nHost: x\r\n\r\n");
  held.WaitHeld();
  Done(fd);
  // It reads the first probe, so its close leaves nothing unread (no reset at once).
  std::string probe(32, '\0');
  pollfd p{fd, POLLIN, 0};
  REQUIRE(::poll(&p, 1, 10'000) == 1);
  probe.resize(static_cast<size_t>(std::max<ssize_t>(0, ::recv(fd, probe.data(), probe.size(), 0))));
  CHECK(probe == "HTTP/1.1 100 Continue\r\n\r\n");
  CHECK_FALSE(held.cancelled.load());
  ::close(fd);  // now it has really gone: the next probe (within a second) meets a reset
  CHECK(held.WaitCancelled(std::chrono::seconds(10)));
  held.respond(TextResponse(200, "too late"));
  held.respond = nullptr;
}

TEST_CASE("http server: an HTTP/1.0 client's FIN is its leaving (no interim answers for 1.0)", "[http]") {
  HeldRequests held;
  auto server = HttpServer::Start({}, held.Handler());
  REQUIRE(server.ok());
  int fd = Connect(server.value()->port());
  Send(fd, "GET /debug/pprof/heap?seconds=3600 HTTP/1.0\r\n\r\n");
  held.WaitHeld();
  Done(fd);
  CHECK(held.WaitCancelled(std::chrono::seconds(10)));
  held.respond(TextResponse(200, "too late"));
  held.respond = nullptr;
  std::string got = ReadUntilClosed(fd);
  CHECK(got.find("100 Continue") == std::string::npos);
  ::close(fd);
}

TEST_CASE("http server: a pipelined request then a close is still seen as the client leaving", "[http]") {
  HeldRequests held;
  auto server = HttpServer::Start({}, held.Handler());
  REQUIRE(server.ok());
  int fd = Connect(server.value()->port());
  // The second request waits in the socket, unread, while the first is handled.
  Send(fd, "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
  held.WaitHeld();
  ::close(fd);
  CHECK(held.WaitCancelled(std::chrono::seconds(10)));
  held.respond(TextResponse(200, "too late"));
  held.respond = nullptr;
}

TEST_CASE("http server: TLS files that cannot be used are named in the error", "[http]") {
  HttpServerOptions options;
  options.tls_certificate_file = "/nonexistent/cert.pem";
  options.tls_key_file = "/nonexistent/key.pem";
  auto missing = HttpServer::Start(options, Hello());
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("/nonexistent/cert.pem is not a file"));
  options.tls_key_file = "";
  auto half = HttpServer::Start(options, Hello());
  REQUIRE_FALSE(half.ok());
  CHECK_THAT(half.status().message(), Catch::Contains("both a certificate file and a private key file"));
  Status garbage = CheckTlsFiles("/proc/self/status", "/proc/self/status");
  REQUIRE_FALSE(garbage.ok());
  CHECK_THAT(garbage.message(), Catch::Contains("the TLS certificate /proc/self/status cannot be used"));
}
