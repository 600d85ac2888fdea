// heapprof::LeakSession as an embedder drives it (include/heapprof/v8/leak_session.h):
// an isolate of its own registered with a Controller, a module holding an
// LRU cache and a leak, "requests" run as scripts with a snapshot between
// them; the leak is growing, the cache is not; the report is read from
// another thread while the session goes on; cadence and failures.
#include <v8.h>

#include <atomic>
#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "heapprof/v8/controller.h"
#include "heapprof/v8/leak_session.h"
#include "heapprof/v8/v8_host.h"
#include "profile_checks.h"

using namespace heapprof;
using namespace heapprof::testing_v8;
using namespace std::chrono_literals;

namespace {

// An LRU cache of 2000 entries (full at load, four misses a request: turned
// over after 500 requests) and a leak of one entry a request, each entry ~1 KiB.
constexpr const char* kModule = R"(
const capacity = 2000;
const cache = new Map();
let leaked = null;
let n = 0;
function cacheEntry(key) { return { key, payload: new Array(128).fill(key) }; }
function remember(key) {
  cache.set(key, cacheEntry(key));
  if (cache.size > capacity) cache.delete(cache.keys().next().value);
}
function keepForever(id) { leaked = { id, payload: new Array(128).fill(id), next: leaked }; }
for (let k = 0; k < capacity; k++) remember(n++);
function handle() { for (let k = 0; k < 4; k++) remember(n++); keepForever(n); }
)";

const LeakSite* Site(const LeakReport& report, const std::string& function, bool growing_only = false) {
  for (const LeakSite& s : report.sites) {
    if (s.frames.empty() || s.frames.front().function_name != function) continue;
    if (!growing_only || s.verdict == LeakVerdict::kGrowing) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("LeakSession on an embedder's isolate: the leak is growing, the LRU cache is not", "[controller][leaks]") {
  // Inlining off, as heapprof's own hosts run (CTest runs each case in a process
  // of its own): an inlined cacheEntry's bytes would be charged to its caller.
  REQUIRE(InitializeV8({{"--no-turbo-inlining"}}).ok());
  Controller controller;
  IsolateOptions io;
  io.heap_limit_bytes = 128u * 1024 * 1024;
  auto iso = Isolate::Create(io);
  REQUIRE(iso.ok());
  v8::Isolate::Scope scope(iso->get());
  v8::HandleScope handles(iso->get());
  REQUIRE(iso->RunScript(kModule, "lru-and-leak.js").ok());
  REQUIRE(controller.Register("embed", iso.value()).ok());

  LeakSessionOptions options;
  options.sampling.interval_bytes = 16 * 1024;
  options.heap_limit_bytes = io.heap_limit_bytes;
  LeakSession session(controller, "embed", iso->get(), options);
  CHECK(session.Report().status().code() == ErrorCode::kFailedPrecondition);  // no snapshot yet
  CHECK(session.LastProfile().status().code() == ErrorCode::kFailedPrecondition);

  // A reader on another thread while the session goes on (as serve's debug
  // listener reads it); a few looks, each of which costs the verdicts power.
  std::atomic<bool> done{false};
  std::atomic<int> reports{0};
  std::thread reader([&] {
    while (!done.load() && reports.load() < 3) {
      if (session.Report().ok()) ++reports;
      std::this_thread::sleep_for(1ms);
    }
  });

  // The sampler first (a snapshot starts it if none runs): it sees nothing
  // older than itself, so a cache filled before it would look like it grows
  // until it turned over once. Then a warm-up: the code settles (its first
  // calls run slower, and the verdicts split the session by time) and the
  // cache turns over once, sampled.
  auto started = controller.LiveSnapshot("embed", /*full_gc=*/false, options.sampling);
  while (started.wait_for(0s) != std::future_status::ready) controller.Pump(iso.value());
  REQUIRE(started.get().ok());
  constexpr int kWarmup = 500;
  for (int i = 0; i < kWarmup; ++i) REQUIRE(iso->RunScript("handle()", "request.js").ok());
  // The first Tick takes the first snapshot; the default cadence (>= 1 s) makes the next Tick wait.
  Result<bool> first = session.Tick(kWarmup);
  REQUIRE(first.ok());
  CHECK(first.value());
  Result<bool> again = session.Tick(kWarmup);
  REQUIRE(again.ok());
  CHECK_FALSE(again.value());
  CHECK(session.stats().cadence >= 1s);
  constexpr int kRequests = 4000;
  for (int i = 1; i <= kRequests; ++i) {
    REQUIRE(iso->RunScript("handle()", "request.js").ok());
    // Snapshots at a cadence of requests here (the embedder's choice), between requests.
    if (i % 200 == 0) REQUIRE(session.SnapshotNow(static_cast<uint64_t>(kWarmup + i)).ok());
  }
  done = true;
  reader.join();

  const LeakSessionStats stats = session.stats();
  CHECK(stats.snapshots == 1 + kRequests / 200);
  CHECK(stats.failure.ok());
  CHECK(stats.snapshot_nanos_max > 0);
  CHECK(stats.snapshot_nanos_total >= stats.snapshot_nanos_max);
  CHECK(reports.load() > 0);
  Result<LeakReport> report = session.Report();
  REQUIRE(report.ok());
  CHECK(report->look == session.stats().looks);  // every read was a look
  CHECK(report->requests == std::optional<uint64_t>(kRequests));
  const LeakSite* leak = Site(report.value(), "keepForever");
  REQUIRE(leak != nullptr);
  INFO(FormatLeakReport(report.value()));
  CHECK(leak->verdict == LeakVerdict::kGrowing);
  CHECK(leak->whole.Per1000Requests().value() > 0);
  CHECK(Site(report.value(), "cacheEntry") != nullptr);
  CHECK(Site(report.value(), "cacheEntry", /*growing_only=*/true) == nullptr);
  // The projection aims at the old generation's share of the configured limit.
  CHECK(report->projection.heap_limit_bytes > 64u * 1024 * 1024);
  CHECK(report->projection.heap_limit_bytes < io.heap_limit_bytes);

  // The last snapshot as a profile: in-use samples with their age.
  Result<Profile> last = session.LastProfile();
  REQUIRE(last.ok());
  CHECK(HasFunction(last.value(), "keepForever"));
  CHECK(session.ReportJson(report.value()).find("\"snapshot_ms_max\"") != std::string::npos);
  REQUIRE(controller.Unregister("embed").ok());
}

TEST_CASE("LeakSession on a target the controller does not know fails once and stays ended", "[controller][leaks]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  auto iso = Isolate::Create();
  REQUIRE(iso.ok());
  v8::Isolate::Scope scope(iso->get());
  v8::HandleScope handles(iso->get());
  LeakSession session(controller, "nobody", iso->get(), {});
  Result<bool> tick = session.Tick();
  CHECK(tick.status().code() == ErrorCode::kNotFound);
  CHECK_FALSE(session.active());
  CHECK(session.stats().failure.code() == ErrorCode::kNotFound);
  Result<bool> later = session.Tick();  // nothing more happens
  REQUIRE(later.ok());
  CHECK_FALSE(later.value());
  CHECK(session.SnapshotNow().code() == ErrorCode::kNotFound);
}
