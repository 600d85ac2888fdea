// The net/http/pprof-style endpoints over a fake profile source: routing,
// target resolution, default sample types, one window per target, errors.
#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "heapprof/http_server.h"
#include "heapprof/pprof.h"
#include "heapprof/pprof_endpoints.h"
#include "heapprof/profile_builder.h"
#include "unit/test_profiles.h"

using namespace heapprof;

namespace {

// Windows return the hand-made profile; a window on "slow" waits until released.
class FakeSource final : public ProfileSource {
 public:
  std::vector<TargetStatus> Targets() override {
    return {{"worker#0", 10u << 20, 128u << 20, 5, 0, 0}, {"slow", 1, 2, 0, 0, 0}};
  }
  Result<Profile> Window(const std::string& target, std::chrono::nanoseconds duration) override {
    windows.push_back({target, duration});
    if (target == "slow") {
      std::unique_lock<std::mutex> lock(mu);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [&] { return released; });
    }
    return BuildProfile(testing::HandMadeSnapshot());
  }
  Result<Profile> SinceContinuousStart(const std::string& target) override {
    return Error(ErrorCode::kFailedPrecondition, "no continuous window on " + target);
  }
  std::vector<CaptureFile> Captures() override { return {}; }

  std::vector<std::pair<std::string, std::chrono::nanoseconds>> windows;
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, released = false;
};

HttpResponse Get(PprofEndpoints& endpoints, const std::string& target) {
  HttpRequest r;
  r.method = "GET";
  r.target = target;
  r.remote = "127.0.0.1:5000";
  return endpoints.Handle(r);
}

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
  HttpRequest post{"POST", "/debug/pprof/heap?seconds=1&target=0", {}, "", ""};
  CHECK(endpoints.Handle(post).status == 405);
  CHECK(source.windows.empty());
  CHECK(PprofEndpoints::Handles("/debug/pprof/heap?seconds=1"));
  CHECK_FALSE(PprofEndpoints::Handles("/debug/pprof/goroutine"));
}

TEST_CASE("one window per target: the second request gets 409 naming the holder", "[http]") {
  FakeSource source;
  PprofEndpoints endpoints(source);
  auto first = std::async(std::launch::async, [&] { return Get(endpoints, "/debug/pprof/heap?seconds=30&target=slow"); });
  {
    std::unique_lock<std::mutex> lock(source.mu);
    source.cv.wait(lock, [&] { return source.entered; });
  }
  HttpResponse second = Get(endpoints, "/debug/pprof/allocs?seconds=1&target=slow");
  CHECK(second.status == 409);
  CHECK_THAT(second.body, Catch::Contains("GET /debug/pprof/heap?seconds=30&target=slow from 127.0.0.1:5000"));
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=1&target=0").status == 200);  // another target is free
  {
    std::lock_guard<std::mutex> lock(source.mu);
    source.released = true;
  }
  source.cv.notify_all();
  CHECK(first.get().status == 200);
  CHECK(Get(endpoints, "/debug/pprof/heap?seconds=1&target=slow").status == 200);  // free again
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
