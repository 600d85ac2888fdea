// The load driver of `heapprof run --runtime workerd` (heapprof/remote/workerd_load.h)
// against a local HTTP server standing in for workerd: what it sends, how it
// counts answers, workerd's own 500s and timeouts, and Ctrl-C.
#include "heapprof/remote/workerd_load.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "heapprof/http/http_server.h"

namespace heapprof {
namespace {

using remote::WorkerdLoad;

// Answers /ok 200, /missing 404, /boom as workerd answers a handler that
// threw (500 "Internal Server Error"), and holds /slow
// until the test ends.
class FakeWorkerd {
 public:
  FakeWorkerd() {
    auto started = HttpServer::Start({}, [this](HttpRequest request, HttpResponder respond) {
      served_.fetch_add(1);
      if (request.target.find("/slow") != std::string::npos) {
        std::lock_guard lock(mu_);
        held_.push_back(std::move(respond));
        return;
      }
      if (request.target.find("/boom") != std::string::npos) {
        HttpResponse r;
        r.status = 500;
        r.body = "Internal Server Error";
        respond(std::move(r));
        return;
      }
      if (request.target.find("/missing") != std::string::npos) {
        respond(TextResponse(404, "no such page"));
        return;
      }
      respond(TextResponse(200, "ok"));
    });
    REQUIRE(started.ok());
    server_ = std::move(started).value();
  }
  ~FakeWorkerd() {
    std::lock_guard lock(mu_);
    for (HttpResponder& r : held_) r(TextResponse(200, "late"));
    held_.clear();
  }
  remote::HostPort address() const {
    Result<remote::HostPort> a = remote::ParseHostPort("127.0.0.1:" + std::to_string(server_->port()));
    REQUIRE(a.ok());
    return a.value();
  }
  int served() const { return served_.load(); }

 private:
  std::atomic<int> served_{0};
  std::mutex mu_;
  std::vector<HttpResponder> held_;
  std::unique_ptr<HttpServer> server_;
};

std::vector<WorkerRequest> Traffic(std::initializer_list<const char*> paths) {
  std::vector<WorkerRequest> out;
  for (const char* p : paths) {
    WorkerRequest r;
    r.method = "GET";
    r.url = std::string("https://example.com") + p;
    // workerd closes the connection after its own 500; heapprof's server
    // closes it (Connection: close) when the request asks for that.
    if (std::string_view(p) == "/boom") r.headers.emplace_back("connection", "close");
    out.push_back(r);
  }
  return out;
}

// Polls until `done` or 20 s.
template <typename F>
bool WaitFor(F done) {
  for (int i = 0; i < 2000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done();
}

TEST_CASE("workerd load: sends exactly what it is allowed and counts answers as the embedded engine does",
          "[workerd-load]") {
  FakeWorkerd workerd;
  std::atomic<int> logged{0};
  WorkerdLoad load(
      {.server = workerd.address(),
       .traffic = Traffic({"/ok", "/boom", "/missing"}),
       .timeout = remote::Millis(10'000),
       .record = true,
       .exceptions =
           [&logged] {
             logged.fetch_add(1);
             return std::vector<remote::WorkerdException>{{false, "TypeError: boom\n    at handler (worker.js:3:9)"}};
           },
       .interrupted = [] { return false; }});
  load.Hold();
  load.Start();
  const uint64_t target = load.Allow(7);
  CHECK(target == 7);
  REQUIRE(WaitFor([&] { return load.answered() == 7; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // nothing beyond the limit follows
  CHECK(workerd.served() == 7);
  CHECK(load.sent() == 7);
  load.Serve(2);  // on this thread: requests 7 (/boom) and 8 (/missing)
  load.Stop();
  CHECK(workerd.served() == 9);

  const RequestOutcomes outcomes = load.outcomes();
  CHECK(outcomes.requests() == 9);
  CHECK(outcomes.thrown() == 3);     // requests 1, 4, 7: the worker's exception, not an answer
  CHECK(outcomes.responses() == 6);  // three 200s and three 404s: a 404 is an answer
  CHECK(outcomes.statuses().at(404) == 3);
  CHECK(outcomes.statuses().at(200) == 3);
  CHECK(outcomes.failed() == 3);
  CHECK(logged.load() >= 3);
  const std::vector<WorkerdLoad::Failure> failures = load.first_failures();
  REQUIRE(failures.size() == 3);
  CHECK(failures[0].index == 1);
  CHECK(failures[0].status == 500);
  CHECK(failures[0].text == "GET https://example.com/boom -> 500: threw: TypeError: boom");
  CHECK(load.no_response() == 0);
  const std::string records = load.responses();
  CHECK(std::count(records.begin(), records.end(), '\n') == 9);
}

TEST_CASE("workerd load: a request without an answer in time is timed out and not thrown", "[workerd-load]") {
  FakeWorkerd workerd;
  WorkerdLoad load({.server = workerd.address(),
                    .traffic = Traffic({"/slow", "/ok"}),
                    .timeout = remote::Millis(300),
                    .record = false,
                    .exceptions = nullptr,
                    .interrupted = nullptr});
  load.Serve(2);
  const RequestOutcomes outcomes = load.outcomes();
  CHECK(outcomes.requests() == 2);
  CHECK(outcomes.timed_out() == 1);
  CHECK(outcomes.responses() == 1);
  CHECK(load.no_response() == 0);
  const std::vector<WorkerdLoad::Failure> failures = load.first_failures();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].status == 0);
  CHECK(failures[0].text.find("no response within --request-timeout 300 ms") != std::string::npos);
}

TEST_CASE("workerd load: once interrupted it sends nothing more", "[workerd-load]") {
  FakeWorkerd workerd;
  std::atomic<bool> interrupted{false};
  WorkerdLoad load({.server = workerd.address(),
                    .traffic = Traffic({"/ok"}),
                    .timeout = remote::Millis(10'000),
                    .record = false,
                    .exceptions = nullptr,
                    .interrupted = [&interrupted] { return interrupted.load(); }});
  load.Serve(3);
  CHECK(workerd.served() == 3);
  interrupted.store(true);
  load.Serve(5);
  CHECK(workerd.served() == 3);
  CHECK(load.outcomes().requests() == 3);
}

}  // namespace
}  // namespace heapprof
