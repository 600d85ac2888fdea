// The always-on sampler on real isolates: windows as ranges of sample ids
// (overlapping ones each get their own alloc_* and inuse_*), live snapshots
// that see samples of any age, and memory that stays bounded.
#include <v8-profiler.h>
#include <v8.h>

#include <algorithm>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "heapprof/core/profile_builder.h"
#include "heapprof/v8/sampler.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"
#include "profile_checks.h"

using namespace heapprof;
using namespace heapprof::testing_v8;

namespace {

// Each phase allocates 8 KiB arrays in its own functions: ones it keeps
// (globalThis[name]) and garbage.
constexpr const char* kPhases = R"JS(
globalThis.ring = new Array(8);
function keepOld(n) { const a = []; for (let i = 0; i < n; ++i) a.push(new Array(1024).fill(0)); globalThis.old = a; }
function keep1(n) { const a = []; for (let i = 0; i < n; ++i) a.push(new Array(1024).fill(1)); globalThis.k1 = a; }
function trash1(n) { for (let i = 0; i < n; ++i) ring[i & 7] = new Array(1024).fill(1); }
function keep2(n) { const a = []; for (let i = 0; i < n; ++i) a.push(new Array(1024).fill(2)); globalThis.k2 = a; }
function trash2(n) { for (let i = 0; i < n; ++i) ring[i & 7] = new Array(1024).fill(2); }
function keep3(n) { const a = []; for (let i = 0; i < n; ++i) a.push(new Array(1024).fill(3)); globalThis.k3 = a; }
function trash3(n) { for (let i = 0; i < n; ++i) ring[i & 7] = new Array(1024).fill(3); }
)JS";

struct Fixture {
  Isolate iso = Isolate::Create(Options()).value();
  v8::Isolate::Scope isolate_scope{iso.get()};
  v8::HandleScope handle_scope{iso.get()};

  static IsolateOptions Options() {
    IsolateOptions o;
    o.heap_limit_bytes = 256u * 1024 * 1024;
    o.name = "sampler-test";
    return o;
  }
  Fixture() { REQUIRE(iso.RunScript(kPhases, "phases.js").ok()); }
  void Run(const std::string& js) {
    auto r = iso.RunScript(js, "driver.js");
    INFO(r.status().message());
    REQUIRE(r.ok());
  }
};

// Sampled objects per function (leaf frame), all and still alive.
struct Counts {
  int all = 0;
  int live = 0;
  int live_arrays = 0;  // live samples the size of a phase's 8 KiB arrays
};
std::map<std::string, Counts> ByLeaf(const RawSnapshot& raw) {
  std::map<std::string, Counts> out;
  for (const RawSample& s : raw.samples) {
    uint32_t stack = static_cast<uint32_t>(s.stack);
    std::string leaf = stack == 0 ? "(root)" : raw.frames[static_cast<uint32_t>(raw.stacks[stack].frame)].function_name;
    Counts& c = out[leaf];
    if (s.allocated) ++c.all;
    if (s.live) ++c.live;
    if (s.live && s.size >= 8 * 1024) ++c.live_arrays;
  }
  return out;
}

SamplerOptions Opts(uint64_t interval = 16 * 1024) {
  SamplerOptions o;
  o.interval_bytes = interval;
  return o;
}

}  // namespace

TEST_CASE("overlapping windows each get the alloc and in-use of their own id range", "[sampler]") {
  Fixture f;
  auto sampler = Sampler::Start(f.iso.get(), Opts());
  REQUIRE(sampler.ok());
  Sampler& s = *sampler.value();
  // 200 arrays of ~8 KiB at a 16 KiB interval: ~80 samples per phase, so a
  // phase that shows no sample at all is 80 standard deviations away.
  f.Run("keepOld(200)");
  WindowMark w1 = s.OpenWindow({"one", -1});
  f.Run("keep1(200); trash1(200)");
  WindowMark w2 = s.OpenWindow({"two", -1});
  CHECK(w2.first_sample_id > w1.first_sample_id);
  f.Run("keep2(200); trash2(200)");
  Result<RawSnapshot> one = s.CloseWindow(w1, /*full_gc=*/true);
  REQUIRE(one.ok());
  f.Run("keep3(200); trash3(200); globalThis.k1 = null;");
  Result<RawSnapshot> two = s.CloseWindow(w2, /*full_gc=*/true);
  REQUIRE(two.ok());

  auto c1 = ByLeaf(one.value());
  auto c2 = ByLeaf(two.value());
  // Window one: phases 1 and 2 allocated; their kept arrays alive at its end.
  CHECK(c1["keep1"].all > 20);
  CHECK(c1["trash1"].all > 20);
  CHECK(c1["keep2"].all > 20);
  CHECK(c1["trash2"].all > 20);
  CHECK(c1["keep1"].live == c1["keep1"].all);
  CHECK(c1["keep2"].live == c1["keep2"].all);
  CHECK(c1["trash1"].live_arrays <= 8);  // the ring holds 8 arrays at most
  CHECK(c1.count("keepOld") == 0);       // allocated before the window
  CHECK(c1.count("keep3") == 0);         // after it
  // Window two: phases 2 and 3; phase 1's kept arrays were dropped before its end.
  CHECK(c2.count("keepOld") == 0);
  CHECK(c2.count("keep1") == 0);
  CHECK(c2.count("trash1") == 0);
  CHECK(c2["keep2"].all == c1["keep2"].all);  // the shared part is the same samples
  CHECK(c2["trash2"].all == c1["trash2"].all);
  CHECK(c2["keep3"].all > 20);
  CHECK(c2["keep3"].live == c2["keep3"].all);
  CHECK(c2["keep2"].live == c2["keep2"].all);
  // The shared ids are the same samples, with the same sizes.
  std::map<uint64_t, uint64_t> ids1;
  for (const RawSample& r : one->samples) ids1[r.sample_id] = r.size;
  uint64_t last1 = ids1.empty() ? 0 : ids1.rbegin()->first;
  int shared = 0;
  for (const RawSample& r : two->samples) {
    if (r.sample_id > last1) continue;
    REQUIRE(ids1.count(r.sample_id) == 1);
    CHECK(ids1[r.sample_id] == r.size);
    ++shared;
  }
  CHECK(shared >= c1["keep2"].all + c1["trash2"].all);  // (plus the driver script's own, if sampled)
  std::set<uint64_t> ids2;
  for (const RawSample& r : two->samples) ids2.insert(r.sample_id);
  for (const RawSample& r : one->samples) {
    if (r.sample_id >= w2.first_sample_id) CHECK(ids2.count(r.sample_id) == 1);
  }
  CHECK(one->info.missing_sample_ids == 0);
  CHECK(two->info.missing_sample_ids == 0);
  CHECK(one->info.isolate_name == "one");
  // Both windows closed: no ledger is kept.
  CHECK(s.stats().open_windows == 0);
  CHECK(s.stats().ledger_entries == 0);

  Profile p = BuildProfile(two.value());
  RequireValidPprof(p);
}

TEST_CASE("a live snapshot sees every sample alive, allocated before any window too", "[sampler]") {
  Fixture f;
  auto sampler = Sampler::Start(f.iso.get(), Opts());
  REQUIRE(sampler.ok());
  Sampler& s = *sampler.value();
  f.Run("keepOld(200)");
  WindowMark w = s.OpenWindow();
  f.Run("keep1(200); trash1(200)");
  REQUIRE(s.CloseWindow(w, true).ok());
  f.Run("keep2(200); globalThis.k1 = null;");
  Result<RawSnapshot> live = s.LiveSnapshot(/*full_gc=*/true);
  REQUIRE(live.ok());
  auto c = ByLeaf(live.value());
  CHECK(c["keepOld"].live > 20);  // before the window: a window does not reset the sampler
  CHECK(c["keep2"].live > 20);
  CHECK(c["keep2"].live_arrays > 20);  // the size test below sees arrays
  // keep1's arrays were freed. What its frame allocated once and keeps (its
  // feedback vector, optimized code) can still be sampled under it: a few
  // small samples at most, never one of the 8 KiB arrays (~100 if kept).
  CHECK(c["keep1"].live_arrays == 0);
  CHECK(c["keep1"].live <= 3);
  CHECK(c["trash1"].live_arrays <= 8);  // the ring holds 8 arrays at most
  for (const RawSample& r : live->samples) {
    CHECK(r.live);
    CHECK_FALSE(r.allocated);
    CHECK(r.sample_id > 0);
  }
  CHECK(std::is_sorted(live->samples.begin(), live->samples.end(),
                       [](const RawSample& a, const RawSample& b) { return a.sample_id < b.sample_id; }));
  CHECK(live->info.heap_limit_bytes > 0);
  CHECK(live->info.start_unix_nanos > 1'600'000'000'000'000'000);
  Profile p = BuildProfile(live.value());
  RequireValidPprof(p);
  CHECK(HasFunction(p, "keepOld"));
}

TEST_CASE("the sampler excludes a Session and the inspector, and stops V8's sampler when it ends", "[sampler]") {
  Fixture f;
  {
    auto sampler = Sampler::Start(f.iso.get(), Opts());
    REQUIRE(sampler.ok());
    auto session = Session::Start(f.iso.get());
    CHECK(session.status().code() == ErrorCode::kFailedPrecondition);
    auto second = Sampler::Start(f.iso.get(), Opts());
    CHECK(second.status().code() == ErrorCode::kFailedPrecondition);
    CHECK_FALSE(SamplerFree(f.iso.get()));
  }
  CHECK(SamplerFree(f.iso.get()));
  REQUIRE(f.iso.get()->GetHeapProfiler()->StartSamplingHeapProfiler(1024, 16));
  auto held = Sampler::Start(f.iso.get(), Opts());
  CHECK(held.status().code() == ErrorCode::kUnavailable);
  f.iso.get()->GetHeapProfiler()->StopSamplingHeapProfiler();
  CHECK(Sampler::Start(f.iso.get(), Opts(0)).status().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("an always-on sampler's memory stays bounded over a long run", "[sampler]") {
  Fixture f;
  auto sampler = Sampler::Start(f.iso.get(), Opts(8 * 1024));
  REQUIRE(sampler.ok());
  Sampler& s = *sampler.value();
  // A fixed live set (a ring of 256 arrays, ~2 MiB: ~260 samples at 8 KiB)
  // under steady churn; every fifth round has a window open across it.
  f.Run(
      "globalThis.big = new Array(256); function churn(n) { for (let i = 0; i < n; ++i) big[i & 255] = new "
      "Array(1024).fill(i); }");
  size_t live_at_10 = 0, live_max = 0;
  uint64_t ledger_max = 0;
  for (int round = 0; round < 60; ++round) {
    std::optional<WindowMark> w;
    if (round % 5 == 0) w = s.OpenWindow();
    f.Run("churn(2000)");  // ~16 MiB allocated per round, ~1 GB in all
    if (w) {
      ledger_max = std::max(ledger_max, s.stats().ledger_entries);
      REQUIRE(s.CloseWindow(*w, false).ok());
    }
    // With no window open there is no ledger at all.
    REQUIRE(s.stats().ledger_entries == 0);
    Result<RawSnapshot> live = s.LiveSnapshot(/*full_gc=*/true);  // garbage does not count
    REQUIRE(live.ok());
    if (round == 10) live_at_10 = live->samples.size();
    if (round >= 10) live_max = std::max(live_max, live->samples.size());
  }
  INFO("live samples at round 10: " << live_at_10 << ", at most " << live_max << "; ledger at most " << ledger_max
                                    << "; last sample id " << s.stats().last_sample_id);
  // ~120,000 samples were taken; V8 keeps the live ones only (~260 in the
  // ring plus garbage not yet collected), and the ledger only a window's.
  CHECK(s.stats().last_sample_id > 50'000);
  CHECK(live_at_10 > 100);
  CHECK(live_max < 4 * live_at_10);
  CHECK(ledger_max > 1000);      // a window's ~2000 samples
  CHECK(ledger_max < 3 * 2100);  // not the run's
  CHECK(s.stats().interned_stacks < 100);
}
