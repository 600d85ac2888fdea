// The net/http/pprof-style endpoints over a fake profile source: routing,
// target resolution, default sample types, overlapping windows, errors.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/http/http_server.h"
#include "heapprof/http/pprof_endpoints.h"
#include "unit/test_profiles.h"

using namespace heapprof;

namespace {

// Windows return the hand-made profile; a window on "slow" waits until released.
class FakeSource final : public ProfileSource {
 public:
  std::vector<TargetStatus> Targets() override {
    std::vector<TargetStatus> targets{{"worker#0", 10u << 20, 128u << 20, 5, 0, 0}, {"slow", 1, 2, 0, 0, 0}};
    targets.insert(targets.end(), extra.begin(), extra.end());
    return targets;
  }
  Result<Profile> Window(const std::string& target, std::chrono::nanoseconds duration, CancelSignal& cancel) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      windows.push_back({target, duration});
    }
    if (target == "slow" || (target == "worker#0" && hold_worker)) {
      uint64_t id = cancel.OnCancel([this] {
        std::lock_guard<std::mutex> lock(mu);
        cancelled++;
        cv.notify_all();
      });
      std::unique_lock<std::mutex> lock(mu);
      entered++;
      cv.notify_all();
      cv.wait(lock, [&] { return released || cancel.cancelled(); });
      lock.unlock();
      cancel.Remove(id);
    }
    return BuildProfile(testing::HandMadeSnapshot());
  }
  Result<Profile> SinceContinuousStart(const std::string& target) override {
    return Error(ErrorCode::kFailedPrecondition, "no continuous window on " + target);
  }
  std::vector<CaptureFile> Captures() override { return {}; }

  void WaitEntered(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered >= n; });
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      released = true;
    }
    cv.notify_all();
  }

  std::vector<std::pair<std::string, std::chrono::nanoseconds>> windows;
  std::mutex mu;
  std::condition_variable cv;
  int entered = 0, cancelled = 0;
  bool released = false;
  bool hold_worker = false;
  std::vector<TargetStatus> extra;  // after the two above
};

HttpResponse Get(PprofEndpoints& endpoints, const std::string& target, const std::string& remote = "127.0.0.1:5000",
                 std::shared_ptr<CancelSignal> gone = nullptr, const std::string& token = "",
                 const std::string& method = "GET") {
  HttpRequest r;
  r.method = method;
  r.target = target;
  r.remote = remote;
  r.client_gone = std::move(gone);
  if (!token.empty()) r.headers.emplace_back("Authorization", "Bearer " + token);
  return endpoints.Handle(r);
}

std::string Header(const HttpResponse& r, std::string_view name) { return std::string(HeaderValue(r.headers, name)); }

std::string DefaultType(const HttpResponse& response) {
  Result<Profile> p = DecodePprof(response.body);
  REQUIRE(p.ok());
  return std::string(p->str(p->default_sample_type));
}

}  // namespace

TEST_CASE("request targets: path, decoded query, bad escapes", "[http]") {
  Result<ParsedTarget> t = ParseRequestTarget("/debug/pprof/heap?seconds=2&target=w%230&x");
  REQUIRE(t.ok());
  CHECK(t->path == "/debug/pprof/heap");
  CHECK(t->query.at("seconds") == "2");
  CHECK(t->query.at("target") == "w#0");
  CHECK(t->query.at("x").empty());
  CHECK_FALSE(ParseRequestTarget("/a?b=%zz").ok());
  CHECK_FALSE(ParseRequestTarget("/a?b=%2").ok());
  CHECK(PercentDecode("a+b%20c").value() == "a b c");
}

TEST_CASE("listen addresses", "[http]") {
  CHECK(ParseListenAddress("127.0.0.1:8787").value() == std::pair<std::string, uint16_t>("127.0.0.1", 8787));
  CHECK(ParseListenAddress("[::1]:0").value().first == "::1");
  CHECK(ParseListenAddress("localhost:1").value().first == "127.0.0.1");
  CHECK_FALSE(ParseListenAddress("8787").ok());
  CHECK_FALSE(ParseListenAddress("127.0.0.1:70000").ok());
  CHECK_FALSE(ParseListenAddress(":80").ok());
  CHECK_FALSE(ParseListenAddress("example.com:80").ok());
}

TEST_CASE("heap and allocs: same window, inuse_space and alloc_space by default", "[http]") {
  FakeSource source;
  PprofEndpoints endpoints(source);
  HttpResponse heap = Get(endpoints, "/debug/pprof/heap?seconds=2&target=worker%230");
  REQUIRE(heap.status == 200);
  CHECK(DefaultType(heap) == "inuse_space");
  HttpResponse allocs = Get(endpoints, "/debug/pprof/allocs?seconds=500ms&target=0");  // by number
  REQUIRE(allocs.status == 200);
  CHECK(DefaultType(allocs) == "alloc_space");
  Result<Profile> p = DecodePprof(allocs.body);
  CHECK(p->sample_types.size() == 4);
  REQUIRE(source.windows.size() == 2);
  CHECK(source.windows[0] == std::pair<std::string, std::chrono::nanoseconds>("worker#0", std::chrono::seconds(2)));
  CHECK(source.windows[1].second == std::chrono::milliseconds(500));
}

TEST_CASE("bad profile requests get 4xx and open no window", "[http]") {
  FakeSource source;
  PprofEndpoints endpoints(source);
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=2").status == 400);  // two targets, none named
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=2&target=nobody").status == 404);
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=0&target=0").status == 400);
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=soon&target=0").status == 400);
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=99999&target=0").status == 400);
  CHECK(Get(endpoints, "/debug/pprof/heap?target=0").status == 400);  // no seconds, no --continuous
  CHECK(Get(endpoints, "/debug/heapprof/captures/x.pb.gz").status == 404);
  HttpRequest post{"POST", "/debug/pprof/heap?seconds=1&target=0", {}, "", "", nullptr};
  CHECK(endpoints.Handle(post).status == 405);
  CHECK(source.windows.empty());
  CHECK(PprofEndpoints::Handles("/debug/pprof/heap?seconds=1"));
  CHECK_FALSE(PprofEndpoints::Handles("/debug/pprof/goroutine"));
}

TEST_CASE("windows on one target overlap: a second request is answered too (it was 409)", "[http]") {
  FakeSource source;
  PprofEndpoints endpoints(source);
  auto first =
      std::async(std::launch::async, [&] { return Get(endpoints, "/debug/pprof/heap?seconds=30&target=slow"); });
  source.WaitEntered(1);
  auto second =
      std::async(std::launch::async, [&] { return Get(endpoints, "/debug/pprof/allocs?seconds=1&target=slow"); });
  source.WaitEntered(2);  // both windows are open on "slow" at once
  CHECK(endpoints.OpenWindows().size() == 2);
  // (Another client: one client holds at most two windows at once.)
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=1&target=0", "127.0.0.2:5000").status == 200);  // another target too
  source.Release();
  CHECK(first.get().status == 200);
  CHECK(second.get().status == 200);
  CHECK(endpoints.OpenWindows().empty());
}

TEST_CASE(
    "a target is reached by its alias in either case (a Durable Object by its hex id) and listed by its name only",
    "[http]") {
  FakeSource source;
  TargetStatus object{"STORES:leaky", 3u << 20, 128u << 20, 7, 0, 1};
  object.aliases = {"STORES:00ab"};
  source.extra.push_back(object);
  PprofEndpoints endpoints(source);
  HttpResponse by_id = Get(endpoints, "/debug/pprof/heap?seconds=1&target=STORES:00AB");
  REQUIRE(by_id.status == 200);
  CHECK(Header(by_id, "X-Heapprof-Target") == "STORES:leaky");
  REQUIRE(source.windows.size() == 1);
  CHECK(source.windows[0].first == "STORES:leaky");
  HttpResponse unknown = Get(endpoints, "/debug/pprof/heap?seconds=1&target=STORES:nobody");
  CHECK(unknown.status == 404);
  CHECK_THAT(unknown.body, Catch::Contains("STORES:leaky"));
  CHECK_THAT(unknown.body, !Catch::Contains("00ab"));
  HttpResponse index = Get(endpoints, "/debug/pprof/");
  CHECK_THAT(index.body,
             Catch::Contains("<td>STORES:leaky</td><td>3.0 MiB</td><td>128.0 MiB</td><td>7</td><td>0</td><td>1</td>"));
  CHECK_THAT(index.body, !Catch::Contains("00ab"));
}

TEST_CASE("index lists targets with heap use and links", "[http]") {
  FakeSource source;
  PprofEndpoints endpoints(source);
  HttpResponse index = Get(endpoints, "/debug/pprof/");
  CHECK(index.status == 200);
  CHECK_THAT(index.body, Catch::Contains("worker#0"));
  CHECK_THAT(index.body, Catch::Contains("10.0 MiB"));
  CHECK_THAT(index.body, Catch::Contains("heap?seconds=10&amp;target=worker%230"));
}

TEST_CASE("a client that disconnects ends its window at once and frees the target", "[http]") {
  FakeSource source;
  PprofEndpoints endpoints(source);
  auto gone = std::make_shared<CancelSignal>();
  auto held = std::async(std::launch::async, [&] {
    return Get(endpoints, "/debug/pprof/heap?seconds=3600&target=slow", "127.0.0.1:5000", gone);
  });
  source.WaitEntered(1);
  REQUIRE(endpoints.OpenWindows().size() == 1);
  gone->Cancel();  // what HttpServer does when the socket closes
  CHECK(held.get().status == 499);
  CHECK(source.cancelled == 1);
  CHECK(endpoints.OpenWindows().empty());
  source.Release();
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=1&target=slow").status == 200);
}

TEST_CASE("the index lists each open window, its holder and its end, and DELETE by its holder ends it", "[http]") {
  FakeSource source;
  PprofEndpoints endpoints(source);
  auto held = std::async(std::launch::async,
                         [&] { return Get(endpoints, "/debug/pprof/heap?seconds=600&target=slow", "10.1.2.3:4000"); });
  source.WaitEntered(1);
  std::vector<OpenWindow> open = endpoints.OpenWindows();
  REQUIRE(open.size() == 1);
  CHECK(open[0].target == "slow");
  CHECK(open[0].client == "10.1.2.3");
  auto length = std::chrono::duration_cast<std::chrono::seconds>(open[0].ends - open[0].started).count();
  CHECK(length == 600);
  HttpResponse index = Get(endpoints, "/debug/pprof/");
  CHECK_THAT(index.body, Catch::Contains("<h2>Open windows</h2>"));
  CHECK_THAT(index.body, Catch::Contains("GET /debug/pprof/heap?seconds=600&amp;target=slow from 10.1.2.3:4000"));
  CHECK_THAT(index.body, Catch::Contains(" UTC (in "));
  const std::string del = "/debug/heapprof/windows/" + std::to_string(open[0].id);
  // Another client cannot end it, nor learn that it exists.
  HttpResponse other = Get(endpoints, del, "10.9.9.9:1", nullptr, "", "DELETE");
  CHECK(other.status == 404);
  CHECK(Get(endpoints, del, "10.1.2.3:4001", nullptr, "", "GET").status == 405);
  CHECK(Get(endpoints, "/debug/heapprof/windows/999", "10.1.2.3:4001", nullptr, "", "DELETE").status == 404);
  HttpResponse mine = Get(endpoints, del, "10.1.2.3:4001", nullptr, "", "DELETE");
  CHECK(mine.status == 200);
  HttpResponse got = held.get();
  CHECK(got.status == 200);  // the holder gets what the window saw
  CHECK(Header(got, "X-Heapprof-Window") == "cancelled");
  CHECK(DecodePprof(got.body).ok());
  CHECK(endpoints.OpenWindows().empty());
  CHECK_THAT(Get(endpoints, "/debug/pprof/").body, Catch::Contains("<h2>Open windows</h2>\n<p>none</p>"));
}

TEST_CASE("one client holds at most max_windows_per_client targets, then 429 with Retry-After", "[http]") {
  FakeSource source;
  source.hold_worker = true;
  PprofEndpointOptions options;
  options.max_windows_per_client = 1;
  PprofEndpoints endpoints(source, options);
  auto held = std::async(std::launch::async,
                         [&] { return Get(endpoints, "/debug/pprof/heap?seconds=30&target=slow", "10.0.0.1:1"); });
  source.WaitEntered(1);
  HttpResponse second = Get(endpoints, "/debug/pprof/heap?seconds=1&target=0", "10.0.0.1:2");
  CHECK(second.status == 429);
  int retry = std::stoi(Header(second, "Retry-After"));
  CHECK(retry >= 1);
  CHECK(retry <= 31);
  // Another client may profile the other target.
  auto other = std::async(std::launch::async,
                          [&] { return Get(endpoints, "/debug/pprof/heap?seconds=1&target=0", "10.0.0.2:1"); });
  source.WaitEntered(2);
  source.Release();
  CHECK(other.get().status == 200);
  CHECK(held.get().status == 200);
}

TEST_CASE("one client opens at most windows_per_minute windows, then 429 with Retry-After", "[http]") {
  FakeSource source;
  PprofEndpointOptions options;
  options.windows_per_minute = 3;
  PprofEndpoints endpoints(source, options);
  for (int i = 0; i < 3; ++i) CHECK(Get(endpoints, "/debug/pprof/heap?seconds=100ms&target=0").status == 200);
  HttpResponse fourth = Get(endpoints, "/debug/pprof/heap?seconds=100ms&target=0");
  CHECK(fourth.status == 429);
  int retry = std::stoi(Header(fourth, "Retry-After"));
  CHECK(retry >= 1);
  CHECK(retry <= 61);
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=100ms&target=0", "127.0.0.2:1").status == 200);
  CHECK(source.windows.size() == 4);
}

TEST_CASE("seconds= takes whole seconds or a duration with its unit, within the bounds the message gives", "[http]") {
  FakeSource source;
  PprofEndpoints endpoints(source);
  for (const char* bad : {"1ns", "0.0001", "%2B1", "+1", "1.5", "%201", "1%20", "50ms", "3601", "61m", "-1", "0", "1e3",
                          "0x10", "9999999999999"}) {
    HttpResponse r = Get(endpoints, std::string("/debug/pprof/heap?target=0&seconds=") + bad);
    INFO(bad << ": " << r.body);
    CHECK(r.status == 400);
    CHECK_THAT(r.body, Catch::Contains("from 100ms to 3600s"));
  }
  CHECK(source.windows.empty());
  for (const char* good : {"1", "100ms", "1s", "2500ms", "1m"}) {
    INFO(good);
    CHECK(Get(endpoints, std::string("/debug/pprof/heap?target=0&seconds=") + good).status == 200);
  }
  // Input is shown escaped: no NUL, no control characters, bounded length.
  HttpResponse nul = Get(endpoints, "/debug/pprof/heap?target=0&seconds=1%00%1b[2J");
  CHECK(nul.status == 400);
  CHECK(nul.body.find('\0') == std::string::npos);
  CHECK(nul.body.find('\x1b') == std::string::npos);
  CHECK_THAT(nul.body, Catch::Contains("'1\\x00\\x1b[2J'"));
  HttpResponse target = Get(endpoints, "/debug/pprof/heap?seconds=1&target=a%00b");
  CHECK(target.status == 404);
  CHECK(target.body.find('\0') == std::string::npos);
  HttpResponse path = Get(endpoints, "/debug/heapprof/captures/" + std::string(500, 'x'));
  CHECK(path.body.size() < 200);
}

TEST_CASE("token files: NAME SECRET PATTERN..., errors name the line and never the secret", "[http]") {
  Result<std::vector<AccessToken>> ok =
      ParseTokenFile("# ops\n\nops  0123456789abcdef0123  *\nci fedcba9876543210fedc worker-1 do:cart/*\n", "t");
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 2);
  CHECK((*ok)[1].name == "ci");
  CHECK((*ok)[1].targets == std::vector<std::string>{"worker-1", "do:cart/*"});
  Result<std::vector<AccessToken>> short_secret = ParseTokenFile("a shortsecret *\n", "t");
  REQUIRE_FALSE(short_secret.ok());
  CHECK_THAT(short_secret.status().message(), Catch::Contains("t line 1"));
  CHECK_THAT(short_secret.status().message(), !Catch::Contains("shortsecret"));
  CHECK_FALSE(ParseTokenFile("a 0123456789abcdef0123\n", "t").ok());  // no pattern
  Result<std::vector<AccessToken>> twice = ParseTokenFile("a 0123456789abcdef0123 *\nb 0123456789abcdef0123 *\n", "t");
  REQUIRE_FALSE(twice.ok());
  CHECK_THAT(twice.status().message(), Catch::Contains("line 2"));
  CHECK_THAT(twice.status().message(), !Catch::Contains("0123456789abcdef0123"));
  CHECK_FALSE(ParseTokenFile("# nothing\n", "t").ok());
  CHECK(TargetPatternMatches("*", "anything"));
  CHECK(TargetPatternMatches("worker-*", "worker-12"));
  CHECK(TargetPatternMatches("do:cart/?", "do:cart/7"));
  CHECK_FALSE(TargetPatternMatches("worker-?", "worker-12"));
  CHECK_FALSE(TargetPatternMatches("worker-1", "worker-12"));
  CHECK(TargetPatternMatches("*-1*", "a-12"));
}

TEST_CASE("with tokens: 401 without one, 403 outside its targets, with no hint of the others", "[http]") {
  FakeSource source;
  PprofEndpointOptions options;
  options.tokens = ParseTokenFile("slowpoke 0123456789abcdef0123 slo?\nall fedcba9876543210fedc *\n", "t").value();
  PprofEndpoints endpoints(source, options);
  HttpResponse none = Get(endpoints, "/debug/pprof/");
  CHECK(none.status == 401);
  CHECK(Header(none, "WWW-Authenticate") == "Bearer");
  CHECK(Get(endpoints, "/debug/pprof/", "127.0.0.1:1", nullptr, "0123456789abcdef0124").status == 401);
  const std::string slow = "0123456789abcdef0123";
  HttpResponse index = Get(endpoints, "/debug/pprof/", "127.0.0.1:1", nullptr, slow);
  CHECK(index.status == 200);
  CHECK_THAT(index.body, Catch::Contains("slow"));
  CHECK_THAT(index.body, !Catch::Contains("worker"));
  HttpResponse other = Get(endpoints, "/debug/pprof/heap?seconds=1&target=worker%230", "127.0.0.1:1", nullptr, slow);
  HttpResponse by_number = Get(endpoints, "/debug/pprof/heap?seconds=1&target=0", "127.0.0.1:1", nullptr, slow);
  HttpResponse missing = Get(endpoints, "/debug/pprof/heap?seconds=1&target=nobody", "127.0.0.1:1", nullptr, slow);
  CHECK(other.status == 403);
  CHECK(missing.status == 403);  // as a target that exists: no telling them apart
  CHECK(by_number.status == 403);
  CHECK_THAT(by_number.body, !Catch::Contains("worker#0"));  // nothing the caller did not send itself
  // The only target the token sees needs no target=.
  source.Release();
  HttpResponse only = Get(endpoints, "/debug/pprof/heap?seconds=1", "127.0.0.1:1", nullptr, slow);
  CHECK(only.status == 200);
  CHECK(Header(only, "X-Heapprof-Target") == "slow");
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=1&target=0", "127.0.0.1:1", nullptr, "fedcba9876543210fedc").status ==
        200);
  // A window is held by the token's name, not its address.
  source.released = false;
  auto held = std::async(std::launch::async, [&] {
    return Get(endpoints, "/debug/pprof/heap?seconds=60&target=slow", "127.0.0.1:1", nullptr, slow);
  });
  source.WaitEntered(2);
  REQUIRE(endpoints.OpenWindows().size() == 1);
  CHECK(endpoints.OpenWindows()[0].client == "slowpoke");
  const std::string del = "/debug/heapprof/windows/" + std::to_string(endpoints.OpenWindows()[0].id);
  CHECK(Get(endpoints, del, "127.0.0.1:1", nullptr, "fedcba9876543210fedc", "DELETE").status == 404);
  CHECK(Get(endpoints, del, "10.0.0.5:1", nullptr, slow, "DELETE").status == 200);
  CHECK(held.get().status == 200);
}
