// /debug/heapprof/leaks and /debug/heapprof/leaks.html over a fake source:
// the JSON as the source gives it, the page drawn from it with every name
// escaped, 503 before two snapshots, 404 without leak sessions, and the
// tokens' scoping (a token sees its own targets' verdicts only).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "heapprof/core/leaks.h"
#include "heapprof/core/stack_table.h"
#include "heapprof/http/http_server.h"
#include "heapprof/http/pprof_endpoints.h"

using namespace heapprof;

namespace {

constexpr const char* kEvil = "<img src=x onerror=alert(1)>";

// A snapshot of samples `ids` (1 KiB each) under function `f` at t seconds.
RawSnapshot Snap(double t, uint64_t last_id, const std::string& f) {
  internal::StackTable table;
  StackId stack = table.InternStack(StackId{0}, table.InternFrame({f, "file:///w/app.js", 1, 3, 1}));
  RawSnapshot snap;
  for (uint64_t id = 1; id <= last_id; ++id) snap.samples.push_back({id, stack, 1024, true});
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  snap.info.interval_bytes = 1024;
  snap.info.start_unix_nanos = static_cast<int64_t>(t * 1e9);
  snap.info.heap_limit_bytes = 64u << 20;
  snap.info.heap_used_bytes = (8u << 20) + last_id * 1024;
  return snap;
}

// "a" has a report of a site that grows (named kEvil), "b" too few snapshots.
class LeakSource final : public ProfileSource {
 public:
  LeakSource() {
    for (int k = 0; k <= 8; ++k) REQUIRE(tracker.Add(Snap(10.0 * k, 40u * (k + 1), kEvil), 100u * k).ok());
  }
  std::vector<TargetStatus> Targets() override { return {{"a", 1, 2, 0, 0, 0}, {"b", 1, 2, 0, 0, 0}}; }
  Result<Profile> Window(const std::string&, std::chrono::nanoseconds, CancelSignal&) override {
    return Error(ErrorCode::kInternal, "no windows here");
  }
  Result<Profile> SinceContinuousStart(const std::string&) override { return Error(ErrorCode::kInternal, "none"); }
  std::vector<CaptureFile> Captures() override { return {}; }
  Result<std::string> LeakReportJson(const std::string& target) override {
    if (target == "b") return Error(ErrorCode::kUnavailable, "the leak session on b has 1 snapshot so far");
    Result<LeakReport> report = tracker.Report();
    REQUIRE(report.ok());
    nlohmann::json j = nlohmann::json::parse(heapprof::LeakReportJson(report.value(), &tracker));
    j["target"] = target;
    j["session"] = {{"snapshots", 9}, {"cadence_seconds", 10.0}, {"snapshot_ms_max", 3.5}};
    return j.dump();
  }
  bool HasLeakSessions() override { return true; }

  LeakTracker tracker;
};

// Without leak sessions (the interface's defaults).
class PlainSource final : public ProfileSource {
 public:
  std::vector<TargetStatus> Targets() override { return {{"a", 1, 2, 0, 0, 0}}; }
  Result<Profile> Window(const std::string&, std::chrono::nanoseconds, CancelSignal&) override {
    return Error(ErrorCode::kInternal, "no windows here");
  }
  Result<Profile> SinceContinuousStart(const std::string&) override { return Error(ErrorCode::kInternal, "none"); }
  std::vector<CaptureFile> Captures() override { return {}; }
};

HttpResponse Get(PprofEndpoints& endpoints, const std::string& target, const std::string& token = "") {
  HttpRequest r;
  r.method = "GET";
  r.target = target;
  r.remote = "127.0.0.1:5000";
  if (!token.empty()) r.headers.emplace_back("Authorization", "Bearer " + token);
  return endpoints.Handle(r);
}

std::string Header(const HttpResponse& r, std::string_view name) { return std::string(HeaderValue(r.headers, name)); }

}  // namespace

TEST_CASE("the leak endpoints: JSON, an escaped page, 503 before two snapshots, 404 without sessions",
          "[http][leaks]") {
  LeakSource source;
  PprofEndpoints endpoints(source);
  CHECK(PprofEndpoints::Handles("/debug/heapprof/leaks?target=a"));
  CHECK(PprofEndpoints::Handles("/debug/heapprof/leaks.html"));

  HttpResponse json = Get(endpoints, "/debug/heapprof/leaks?target=a");
  REQUIRE(json.status == 200);
  CHECK(Header(json, "Content-Type") == "application/json");
  CHECK(Header(json, "Cache-Control") == "no-store");
  nlohmann::json report = nlohmann::json::parse(json.body);
  CHECK(report["target"] == "a");
  CHECK(report["sites"][0]["verdict"] == "growing");
  CHECK(report["sites"][0]["frames"][0]["function"] == kEvil);

  HttpResponse page = Get(endpoints, "/debug/heapprof/leaks.html?target=0");  // by number, too
  REQUIRE(page.status == 200);
  CHECK_THAT(Header(page, "Content-Type"), Catch::StartsWith("text/html"));
  CHECK(page.body.find(kEvil) == std::string::npos);
  CHECK_THAT(page.body,
             Catch::Contains("data-function=\"&lt;img src=x onerror=alert(1)&gt;\" data-verdict=\"growing\""));
  CHECK_THAT(page.body, Catch::Contains("<polyline class=\"series\""));
  CHECK_THAT(page.body, Catch::Contains("9 live snapshots"));

  HttpResponse early = Get(endpoints, "/debug/heapprof/leaks?target=b");
  CHECK(early.status == 503);
  CHECK(Header(early, "Retry-After") == "1");
  CHECK(Get(endpoints, "/debug/heapprof/leaks?target=nobody").status == 404);
  CHECK(Get(endpoints, "/debug/heapprof/leaks").status == 400);  // two targets: name one
  CHECK_THAT(Get(endpoints, "/debug/pprof/").body, Catch::Contains("leaks.html?target=b"));

  PlainSource plain;
  PprofEndpoints without(plain);
  HttpResponse none = Get(without, "/debug/heapprof/leaks.html");
  CHECK(none.status == 404);
  CHECK_THAT(none.body, Catch::Contains("serve --leaks"));
  CHECK_THAT(Get(without, "/debug/pprof/").body, !Catch::Contains("leaks.html"));
}

TEST_CASE("with tokens: a token sees its own targets' leak verdicts and no other's", "[http][leaks]") {
  LeakSource source;
  PprofEndpointOptions options;
  options.tokens = {{"only-a", "secret-for-a-0123456789", {"a"}}, {"all", "secret-for-all-012345", {"*"}}};
  PprofEndpoints endpoints(source, options);
  CHECK(Get(endpoints, "/debug/heapprof/leaks?target=a").status == 401);
  CHECK(Get(endpoints, "/debug/heapprof/leaks?target=a", "secret-for-a-0123456789").status == 200);
  CHECK(Get(endpoints, "/debug/heapprof/leaks", "secret-for-a-0123456789").status == 200);  // its only target
  for (const char* t : {"b", "1", "nobody"}) {
    INFO(t);
    CHECK(Get(endpoints, std::string("/debug/heapprof/leaks?target=") + t, "secret-for-a-0123456789").status == 403);
    CHECK(Get(endpoints, std::string("/debug/heapprof/leaks.html?target=") + t, "secret-for-a-0123456789").status ==
          403);
  }
  CHECK(Get(endpoints, "/debug/heapprof/leaks?target=b", "secret-for-all-012345").status == 503);
  std::string index = Get(endpoints, "/debug/pprof/", "secret-for-a-0123456789").body;
  CHECK_THAT(index, Catch::Contains("leaks.html?target=a"));
  CHECK_THAT(index, !Catch::Contains("leaks.html?target=b"));
}
