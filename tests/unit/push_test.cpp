// The push client against the project's own HTTP server on loopback: a
// store that fails, throttles, refuses or is not there; and the split that
// keeps each pushed profile within the store's limits.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/core/profile_split.h"
#include "heapprof/core/stack_table.h"
#include "heapprof/http/http_server.h"
#include "heapprof/proto/push.pb.h"
#include "heapprof/remote/pyroscope_push.h"
#include "unit/test_profiles.h"

namespace heapprof {
namespace {

using namespace std::chrono_literals;
using remote::Pusher;
using remote::PushLabel;
using remote::PushOptions;
using remote::PushProfile;

// `n` samples of distinct sizes over a few stacks: `n` pprof samples.
Profile ManySamples(int n) {
  internal::StackTable t;
  FrameId a = t.InternFrame({"handler", "file:///srv/worker.js", 1, 10, 3});
  FrameId b = t.InternFrame({"keep", "file:///srv/cache.js", 2, 20, 5});
  FrameId c = t.InternFrame({"parse", "file:///srv/worker.js", 1, 40, 7});
  StackId sa = t.InternStack(StackId{0}, a);
  StackId sb = t.InternStack(sa, b);
  StackId sc = t.InternStack(sa, c);
  RawSnapshot snap;
  snap.info.interval_bytes = 4096;
  snap.info.start_unix_nanos = 1'700'000'000'000'000'000;
  snap.info.duration_nanos = 2'000'000'000;
  snap.info.isolate_name = "w";
  StackId stacks[] = {sa, sb, sc};
  for (int i = 0; i < n; ++i) {
    snap.samples.push_back(
        {static_cast<uint64_t>(i + 1), stacks[i % 3], static_cast<uint64_t>(16 + 8 * i), i % 2 == 0});
  }
  snap.frames = t.TakeFrames();
  snap.stacks = t.TakeStacks();
  return BuildProfile(snap);
}

std::vector<PushLabel> Labels() {
  return {{"__name__", "memory"}, {"service_name", "shop"}, {"__delta__", "false"}, {"replica", "shop-0"}};
}

PushProfile Window(const std::string& what) {
  Result<PushProfile> p = remote::PreparePush(BuildProfile(testing::HandMadeSnapshot()), Labels(), {}, what);
  REQUIRE(p.ok());
  return std::move(p).value();
}

// A store on loopback answering from a script: the i-th request gets
// answers[i] (the last one from then on); it records what it received.
struct FakeStore {
  std::mutex mu;
  std::vector<int> answers{200};
  std::vector<push::v1::PushRequest> received;  // accepted ones
  std::vector<HttpHeaders> headers;
  std::atomic<int> requests{0};
  std::unique_ptr<HttpServer> server;

  explicit FakeStore(std::vector<int> script) : answers(std::move(script)) {
    HttpServerOptions options;
    auto started = HttpServer::Start(options, [this](HttpRequest r, HttpResponder respond) {
      int i = requests++;
      std::lock_guard<std::mutex> lock(mu);
      int status = answers[std::min<size_t>(i, answers.size() - 1)];
      if (r.method != "POST" || r.target != "/prefix/push.v1.PusherService/Push") status = 404;
      headers.push_back(r.headers);
      if (status == 200) {
        push::v1::PushRequest req;
        if (!req.ParseFromString(r.body)) status = 400;
        received.push_back(std::move(req));
      }
      HttpResponse res = TextResponse(status, status == 200 ? "" : R"({"code":"unavailable","message":"busy"})");
      respond(std::move(res));
    });
    REQUIRE(started.ok());
    server = std::move(started).value();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server->port()) + "/prefix/"; }
};

PushOptions Fast(const std::string& url) {
  PushOptions o;
  o.url = url;
  o.first_backoff = 5ms;
  o.max_backoff = 20ms;
  o.timeout = 2s;
  return o;
}

remote::PushStats WaitFor(Pusher& p, uint64_t done) {
  for (int i = 0; i < 1000; ++i) {
    remote::PushStats s = p.Stats();
    if (s.pushed + s.dropped + s.rejected >= done && s.queued == 0) return s;
    std::this_thread::sleep_for(5ms);
  }
  return p.Stats();
}

TEST_CASE("push: windows reach the store with their labels, token and tenant", "[push]") {
  FakeStore store({200});
  PushOptions o = Fast(store.url());
  o.bearer_token = "s3cret-token";
  o.tenant = "team-a";
  auto pusher = Pusher::Start(o);
  REQUIRE(pusher.ok());
  for (int i = 0; i < 3; ++i) (*pusher)->Enqueue(Window("w" + std::to_string(i)));
  remote::PushStats s = WaitFor(**pusher, 3);
  CHECK(s.pushed == 3);
  CHECK(s.retries == 0);
  std::lock_guard<std::mutex> lock(store.mu);
  REQUIRE(store.received.size() == 3);
  const push::v1::RawProfileSeries& series = store.received[0].series(0);
  CHECK(series.labels_size() == 4);
  CHECK(series.labels(1).name() == "service_name");
  CHECK(series.labels(1).value() == "shop");
  REQUIRE(series.samples_size() == 1);
  CHECK(series.samples(0).id().size() == 36);
  CHECK(series.samples(0).id() != store.received[1].series(0).samples(0).id());
  // The pushed bytes are the gzipped pprof, whole.
  CHECK(IsGzip(series.samples(0).raw_profile()));
  Result<Profile> back = DecodePprof(series.samples(0).raw_profile());
  REQUIRE(back.ok());
  CHECK(back->samples.size() == BuildProfile(testing::HandMadeSnapshot()).samples.size());
  CHECK(HeaderValue(store.headers[0], "authorization") == "Bearer s3cret-token");
  CHECK(HeaderValue(store.headers[0], "x-scope-orgid") == "team-a");
  CHECK(HeaderValue(store.headers[0], "content-type") == "application/proto");
}

TEST_CASE("push: a store answering 503 and 429 then recovering loses nothing within the queue bound", "[push]") {
  FakeStore store({503, 503, 429, 500, 200});
  PushOptions o = Fast(store.url());
  o.max_queued = 4;
  auto pusher = Pusher::Start(o);
  REQUIRE(pusher.ok());
  for (int i = 0; i < 4; ++i) (*pusher)->Enqueue(Window("w" + std::to_string(i)));
  remote::PushStats s = WaitFor(**pusher, 4);
  CHECK(s.pushed == 4);
  CHECK(s.dropped == 0);
  CHECK(s.retries == 4);
  CHECK(s.requests == 8);
  CHECK(s.last_error.find("HTTP 500") != std::string::npos);
}

TEST_CASE("push: with the store gone the oldest windows are dropped and counted, the rest unsent at stop", "[push]") {
  std::string url;
  {
    FakeStore gone({200});
    url = gone.url();
  }  // closed: nothing listens on its port now
  PushOptions o = Fast(url);
  o.max_queued = 3;
  std::vector<std::string> log;
  std::mutex log_mu;
  o.log = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mu);
    log.push_back(line);
  };
  auto pusher = Pusher::Start(o);
  REQUIRE(pusher.ok());
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) (*pusher)->Enqueue(Window("w" + std::to_string(i)));
  // Enqueue never waits for the network.
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  std::this_thread::sleep_for(50ms);
  (*pusher)->Stop(0ms);
  remote::PushStats s = (*pusher)->Stats();
  CHECK(s.pushed == 0);
  CHECK(s.enqueued == 10);
  CHECK(s.dropped >= 7);
  CHECK(s.dropped + s.unsent == 10);
  CHECK(s.retries >= 1);
  std::lock_guard<std::mutex> lock(log_mu);
  bool said_failing = false, said_dropping = false;
  for (const std::string& line : log) {
    said_failing = said_failing || line.find("failed") != std::string::npos;
    said_dropping = said_dropping || line.find("dropping the oldest") != std::string::npos;
  }
  CHECK(said_failing);
  CHECK(said_dropping);
}

TEST_CASE("push: a refused window (400) is counted and not retried", "[push]") {
  FakeStore store({400, 200});
  auto pusher = Pusher::Start(Fast(store.url()));
  REQUIRE(pusher.ok());
  (*pusher)->Enqueue(Window("bad"));
  (*pusher)->Enqueue(Window("good"));
  remote::PushStats s = WaitFor(**pusher, 2);
  CHECK(s.rejected == 1);
  CHECK(s.pushed == 1);
  CHECK(s.requests == 2);
}

TEST_CASE("push: Stop drains what is queued while the store answers", "[push]") {
  FakeStore store({503, 200});
  auto pusher = Pusher::Start(Fast(store.url()));
  REQUIRE(pusher.ok());
  (*pusher)->Enqueue(Window("last"));
  (*pusher)->Stop(5s);
  CHECK((*pusher)->Stats().pushed == 1);
  CHECK((*pusher)->Stats().unsent == 0);
}

TEST_CASE("push: URLs and labels the store would refuse are errors up front", "[push]") {
  CHECK(Pusher::Start(Fast("https://profiles.example.com")).ok());  // verified against the system's CAs
  PushOptions ca_for_http = Fast("http://127.0.0.1:4040");
  ca_for_http.ca_file = "/etc/ssl/certs/ca-certificates.crt";
  CHECK(!Pusher::Start(ca_for_http).ok());  // a CA file verifies https only
  PushOptions missing_ca = Fast("https://127.0.0.1:4040");
  missing_ca.ca_file = "/nonexistent/ca.pem";
  CHECK(!Pusher::Start(missing_ca).ok());
  CHECK(!Pusher::Start(Fast("ftp://x")).ok());
  CHECK(!Pusher::Start(Fast("http://user:pw@127.0.0.1:4040")).ok());
  CHECK(!Pusher::Start(Fast("http://127.0.0.1:4040/?q")).ok());
  CHECK(Pusher::Start(Fast("http://localhost")).ok());
  CHECK(Pusher::Start(Fast("http://[::1]:4040/pyroscope")).ok());

  CHECK(remote::CheckPushLabels(Labels()).ok());
  auto with = [](PushLabel extra) {
    std::vector<PushLabel> l = Labels();
    l.push_back(std::move(extra));
    return remote::CheckPushLabels(l);
  };
  CHECK(!with({"team-name", "x"}).ok());
  CHECK(!with({"9lives", "x"}).ok());
  CHECK(!with({"team", ""}).ok());
  CHECK(!with({"team", "\xff"}).ok());
  CHECK(!with({"service_name", "again"}).ok());
  CHECK(!remote::CheckPushLabels({{"__name__", "memory"}}).ok());  // no service_name
  std::vector<PushLabel> many = Labels();
  for (int i = 0; many.size() <= remote::kMaxPushLabels; ++i) many.push_back({"l" + std::to_string(i), "v"});
  CHECK(!remote::CheckPushLabels(many).ok());
}

TEST_CASE("push: a window of 40,000 samples is split into parts within 16,000 samples, totals kept", "[push]") {
  Profile whole = ManySamples(40'000);
  REQUIRE(whole.samples.size() == 40'000);
  Result<std::vector<ProfilePart>> parts = SplitProfile(whole, SplitLimits{});
  REQUIRE(parts.ok());
  REQUIRE(parts->size() == 3);
  std::vector<int64_t> totals(4, 0);
  for (size_t i = 0; i < parts->size(); ++i) {
    const ProfilePart& part = (*parts)[i];
    CHECK(part.profile.samples.size() <= 16'000);
    CHECK(part.pprof.size() <= (uint64_t{4} << 20));
    Result<Profile> back = DecodePprof(part.pprof);  // valid pprof: string 0 empty, ids dense, values per type
    REQUIRE(back.ok());
    CHECK(back->time_nanos == whole.time_nanos);
    CHECK(back->CommentValue("split").find(fmt::format("part {} of 3", i + 1)) == 0);
    for (int t = 0; t < 4; ++t) totals[t] += back->Total(t);
  }
  for (int t = 0; t < 4; ++t) CHECK(totals[t] == whole.Total(t));
  // Under the limits it is one part, untouched.
  Result<std::vector<ProfilePart>> one = SplitProfile(ManySamples(100), SplitLimits{});
  REQUIRE(one.ok());
  CHECK(one->size() == 1);
  CHECK(one->front().profile.CommentValue("split").empty());
}

TEST_CASE("push: a window over the byte limit is halved until each part fits", "[push]") {
  Profile whole = ManySamples(2'000);
  Result<std::string> bytes = EncodePprof(whole);
  REQUIRE(bytes.ok());
  SplitLimits limits;
  limits.max_bytes = bytes->size() / 3;
  Result<std::vector<ProfilePart>> parts = SplitProfile(whole, limits);
  REQUIRE(parts.ok());
  CHECK(parts->size() >= 4);
  size_t samples = 0;
  for (const ProfilePart& part : *parts) {
    CHECK(part.pprof.size() <= limits.max_bytes);
    samples += part.profile.samples.size();
  }
  CHECK(samples == whole.samples.size());
  limits.max_bytes = 10;  // smaller than any one sample's profile
  CHECK(SplitProfile(whole, limits).status().code() == ErrorCode::kResourceExhausted);
}

}  // namespace
}  // namespace heapprof
