// The collector on real isolates: window semantics, alloc vs in-use,
// attribution, the ledger's completeness, and errors as values.
#include <v8-profiler.h>
#include <v8.h>

#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "heapprof/core/profile_builder.h"
#include "heapprof/core/report.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"
#include "profile_checks.h"

using namespace heapprof;
using namespace heapprof::testing_v8;

namespace {

// Cumulative value of one sample type for samples whose stack passes through `fn`.
int64_t CumFor(const Profile& p, std::string_view fn, int index) {
  int64_t total = 0;
  for (const Sample& s : p.samples) {
    bool hit =
        std::any_of(s.locations.begin(), s.locations.end(), [&](LocationId id) { return p.FunctionName(id) == fn; });
    if (hit) total += s.values[index];
  }
  return total;
}

// An array of 1024 small integers: a 32-byte JSArray plus 8 KiB of elements.
constexpr double kArrayBytes = 32 + 16 + 8 * 1024;

constexpr const char* kWorkload = R"JS(
globalThis.kept = [];
globalThis.ring = new Array(8);
function retainBefore(n) { const out = []; for (let i = 0; i < n; ++i) out.push(new Array(1024).fill(0)); globalThis.early = out; }
function retainA(n) { for (let i = 0; i < n; ++i) kept.push(new Array(1024).fill(0)); }
function garbageB(n) { for (let i = 0; i < n; ++i) ring[i & 7] = new Array(1024).fill(0); }
function afterStop(n) { const out = []; for (let i = 0; i < n; ++i) out.push(new Array(1024).fill(0)); globalThis.late = out; }
)JS";

struct Fixture {
  Isolate iso = Isolate::Create(Options()).value();
  v8::Isolate::Scope isolate_scope{iso.get()};
  v8::HandleScope handle_scope{iso.get()};

  static IsolateOptions Options() {
    IsolateOptions o;
    o.heap_limit_bytes = 512u * 1024 * 1024;
    o.name = "session-test";
    return o;
  }
  Fixture() { REQUIRE(iso.RunScript(kWorkload, "workload.js").ok()); }
  void Run(const std::string& js) {
    auto r = iso.RunScript(js, "driver.js");
    INFO(r.status().message());
    REQUIRE(r.ok());
  }
};

template <typename Sample>
constexpr bool HasIsLive() {
  return requires(Sample s) { s.is_live; };
}

SessionOptions Opts(uint64_t interval = 32 * 1024) {
  SessionOptions o;
  o.interval_bytes = interval;
  o.isolate_name = "session-test";
  return o;
}

}  // namespace

TEST_CASE("the compiled strategy matches the V8 headers") {
  // Detected here independently of heapprof's own check: the strategy follows
  // whether the V8 headers this test compiles against have Sample::is_live.
  constexpr bool kHeadersHaveIsLive = HasIsLive<v8::AllocationProfile::Sample>();
  const std::string expected = kHeadersHaveIsLive ? "native-liveness" : "gc-prologue-ledger";
  CHECK(std::string(CompiledStrategy()) == expected);
  // And a window records the strategy it actually ran with.
  Fixture f;
  auto session = Session::Start(f.iso.get(), Opts());
  REQUIRE(session.ok());
  f.Run("retainA(64);");
  auto raw = std::move(session.value()).Stop();
  REQUIRE(raw.ok());
  CHECK(raw->info.strategy == expected);
}

TEST_CASE("alloc and in-use estimates match a known workload and name the right functions") {
  Fixture f;
  f.Run("retainBefore(2048)");
  auto session = Session::Start(f.iso.get(), Opts());
  REQUIRE(session.ok());
  f.Run("retainA(4096); garbageB(32768);");
  auto raw = std::move(session.value()).Stop();
  REQUIRE(raw.ok());
  f.Run("afterStop(2048)");
  Profile p = BuildProfile(raw.value());

  const double retained_truth = 4096 * kArrayBytes;  // ~33.7 MB
  const double garbage_truth = 32768 * kArrayBytes;  // ~270 MB
  double a_inuse = CumFor(p, "retainA", kInuseSpace);
  double a_alloc = CumFor(p, "retainA", kAllocSpace);
  double b_alloc = CumFor(p, "garbageB", kAllocSpace);
  double b_inuse = CumFor(p, "garbageB", kInuseSpace);
  INFO("A inuse " << a_inuse << " alloc " << a_alloc << " (truth " << retained_truth << "); B alloc " << b_alloc
                  << " inuse " << b_inuse << " (truth " << garbage_truth << ")");
  CHECK(a_inuse == Approx(retained_truth).epsilon(0.15));
  CHECK(a_alloc == Approx(retained_truth).epsilon(0.15));
  CHECK(b_alloc == Approx(garbage_truth).epsilon(0.15));
  // B keeps at most its 8-slot ring alive.
  CHECK(b_inuse < 0.02 * retained_truth);
  // Window semantics: nothing from before Start or after Stop.
  CHECK_FALSE(HasFunction(p, "retainBefore"));
  CHECK_FALSE(HasFunction(p, "afterStop"));
  // The functions carry their script.
  for (const Function& fn : p.functions) {
    if (p.str(fn.name) == "retainA") {
      CHECK(p.str(fn.filename) == "workload.js");
      CHECK(fn.start_line == 5);  // the raw string starts with a newline
    }
  }
}

TEST_CASE("the ledger sees every sample id of the window") {
  Fixture f;
  auto session = Session::Start(f.iso.get(), Opts(16 * 1024));
  REQUIRE(session.ok());
  f.Run("retainA(1024); garbageB(16384);");
  uint64_t snapshots = session->prologue_snapshots();
  auto raw = std::move(session.value()).Stop();
  REQUIRE(raw.ok());
  const RawSnapshot& snap = raw.value();
  std::set<uint64_t> ids;
  for (const RawSample& s : snap.samples) ids.insert(s.sample_id);
  REQUIRE(ids.size() > 1000);
  CHECK(*ids.begin() == 1);
  CHECK(*ids.rbegin() == ids.size());  // gap-free 1..N
  CHECK(snap.info.missing_sample_ids == 0);
  CHECK(snap.info.dropped_samples == 0);
  // The garbage only survives in the ledger because GC prologues caught it.
  CHECK(snapshots > 0);
  size_t dead = std::count_if(snap.samples.begin(), snap.samples.end(), [](const RawSample& s) { return !s.live; });
  CHECK(dead > snap.samples.size() / 2);
}

TEST_CASE("without the pre-snapshot GC, garbage may count as in use but alloc is unchanged") {
  Fixture f;
  SessionOptions o = Opts();
  o.gc_before_snapshot = false;
  auto session = Session::Start(f.iso.get(), o);
  REQUIRE(session.ok());
  f.Run("retainA(1024);");
  auto p = std::move(session.value()).StopAndBuild();
  REQUIRE(p.ok());
  CHECK(CumFor(p.value(), "retainA", kInuseSpace) == Approx(1024 * kArrayBytes).epsilon(0.3));
  CHECK(p->CommentValue("gc_before_inuse") == "no");
}

TEST_CASE("the sample cap limits what is recorded and says how much was dropped") {
  Fixture f;
  SessionOptions o = Opts(16 * 1024);
  o.max_samples = 50;
  auto session = Session::Start(f.iso.get(), o);
  REQUIRE(session.ok());
  f.Run("garbageB(8192);");
  auto raw = std::move(session.value()).Stop();
  REQUIRE(raw.ok());
  CHECK(raw->samples.size() == 50);
  CHECK(raw->info.dropped_samples > 0);
}

TEST_CASE("profile metadata records the window") {
  Fixture f;
  auto session = Session::Start(f.iso.get(), Opts());
  REQUIRE(session.ok());
  f.Run("retainA(64);");
  auto p = std::move(session.value()).StopAndBuild();
  REQUIRE(p.ok());
  CHECK(p->period == 32 * 1024);
  CHECK(p->time_nanos > 1'600'000'000'000'000'000);
  CHECK(p->duration_nanos > 0);
  CHECK(p->CommentValue("strategy") == "gc-prologue-ledger");
  CHECK(p->CommentValue("isolate") == "session-test");
  CHECK(p->CommentValue("v8").rfind(V8HeaderVersion(), 0) == 0);
  CHECK(std::stoull(p->CommentValue("heap_limit_bytes")) > 0);
}

TEST_CASE("errors are values and the isolate keeps working") {
  Fixture f;
  SECTION("two windows at once on one isolate") {
    auto first = Session::Start(f.iso.get(), Opts());
    REQUIRE(first.ok());
    auto second = Session::Start(f.iso.get(), Opts());
    REQUIRE_FALSE(second.ok());
    CHECK(second.status().code() == ErrorCode::kFailedPrecondition);
    CHECK_THAT(second.status().message(), Catch::Contains("already open"));
    REQUIRE(std::move(first.value()).Stop().ok());
  }
  SECTION("the sampler is held by someone else") {
    REQUIRE(f.iso.get()->GetHeapProfiler()->StartSamplingHeapProfiler(1024, 16));
    auto s = Session::Start(f.iso.get(), Opts());
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == ErrorCode::kUnavailable);
    CHECK_THAT(s.status().message(), Catch::Contains("already running"));
    f.iso.get()->GetHeapProfiler()->StopSamplingHeapProfiler();
    // Once released, heapprof can start.
    auto again = Session::Start(f.iso.get(), Opts());
    REQUIRE(again.ok());
    REQUIRE(std::move(again.value()).Stop().ok());
  }
  SECTION("stop twice") {
    auto s = Session::Start(f.iso.get(), Opts());
    REQUIRE(s.ok());
    Session session = std::move(s.value());
    REQUIRE(std::move(session).Stop().ok());
    auto twice = std::move(session).Stop();  // NOLINT(bugprone-use-after-move): the point of the test
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.status().code() == ErrorCode::kFailedPrecondition);
  }
  SECTION("bad options") {
    SessionOptions o = Opts();
    o.interval_bytes = 0;
    CHECK(Session::Start(f.iso.get(), o).status().code() == ErrorCode::kInvalidArgument);
    o = Opts();
    o.max_stack_depth = 0;
    CHECK(Session::Start(f.iso.get(), o).status().code() == ErrorCode::kInvalidArgument);
    CHECK(Session::Start(nullptr, Opts()).status().code() == ErrorCode::kInvalidArgument);
  }
  SECTION("a destroyed, unstopped session stops the sampler") {
    {
      auto s = Session::Start(f.iso.get(), Opts());
      REQUIRE(s.ok());
      f.Run("garbageB(256)");
    }
    // The sampler is free again: V8 lets another user start it.
    REQUIRE(f.iso.get()->GetHeapProfiler()->StartSamplingHeapProfiler(1024, 16));
    f.iso.get()->GetHeapProfiler()->StopSamplingHeapProfiler();
  }
  f.Run("retainA(4)");
}

TEST_CASE("VM-state frames and anonymous functions survive into the profile") {
  Fixture f;
  auto session = Session::Start(f.iso.get(), Opts(4 * 1024));
  REQUIRE(session.ok());
  f.Run("[1,2,3].map(() => { const o = []; for (let i = 0; i < 2000; ++i) o.push({i}); return o; }).length");
  auto p = std::move(session.value()).StopAndBuild();
  REQUIRE(p.ok());
  bool anonymous = false;
  for (const Function& fn : p->functions) {
    if (p->str(fn.name).rfind("(anonymous driver.js:1:", 0) == 0) anonymous = true;
  }
  CHECK(anonymous);
}

TEST_CASE("near the heap limit a hook captures the in-use profile naming the leak") {
  // Old-generation growth under an open window drives incremental marking:
  // the ledger must not snapshot where V8 forbids allocation. At 512 bytes the
  // window holds tens of thousands of samples and snapshots in every GC near the limit.
  const uint64_t interval = GENERATE(64 * 1024, 512);
  INFO("sampling interval " << interval);
  std::optional<Session> session;
  std::optional<Result<Profile>> captured;
  int hook_calls = 0;
  IsolateOptions io;
  io.heap_limit_bytes = 32u * 1024 * 1024;
  io.on_near_heap_limit = [&](v8::Isolate*, size_t) {
    ++hook_calls;
    if (!session) return;
    captured.emplace(std::move(*session).StopAndBuild());
    session.reset();
  };
  auto iso = Isolate::Create(io);
  REQUIRE(iso.ok());
  v8::Isolate::Scope isolate_scope(iso->get());
  v8::HandleScope handles(iso->get());
  REQUIRE(iso->RunScript("const cache = []; function leakyCache(k) { for (let i = 0; i < 2000; ++i) "
                         "cache.push({ url: 'u' + k, i, pad: new Array(16).fill(i) }); }",
                         "leak.js")
              .ok());
  session.emplace(std::move(Session::Start(iso->get(), Opts(interval)).value()));
  auto r = iso->RunScript("for (let k = 0; ; ++k) leakyCache(k);", "loop.js");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kResourceExhausted);
  CHECK(hook_calls == 1);
  REQUIRE(captured.has_value());
  INFO(captured->status().message());
  REQUIRE(captured->ok());
  const Profile& p = captured->value();
  RequireValidPprof(p);
  auto inuse = FunctionTotals(p, kInuseSpace);
  REQUIRE_FALSE(inuse.empty());
  CHECK(inuse[0].name == "leakyCache");
  double leak = CumFor(p, "leakyCache", kInuseSpace);
  INFO("leakyCache in-use " << leak << " of " << p.Total(kInuseSpace));
  CHECK(leak > 0.8 * p.Total(kInuseSpace));
  CHECK(p.Total(kInuseSpace) > 16.0 * 1024 * 1024);
  // The hook consumed the window; the sampler is free.
  CHECK(SamplerFree(iso->get()));
}

TEST_CASE("an open window survives the isolate reaching its heap limit") {
  IsolateOptions io;
  io.heap_limit_bytes = 32u * 1024 * 1024;
  auto iso = Isolate::Create(io);
  REQUIRE(iso.ok());
  v8::Isolate::Scope isolate_scope(iso->get());
  v8::HandleScope handles(iso->get());
  auto session = Session::Start(iso->get(), Opts(64 * 1024));
  REQUIRE(session.ok());
  auto r = iso->RunScript("const keep = []; for (;;) keep.push({ pad: new Array(16).fill(1) });");
  REQUIRE_FALSE(r.ok());
  auto p = std::move(session.value()).StopAndBuild();
  REQUIRE(p.ok());
  CHECK(p->Total(kAllocSpace) > 16.0 * 1024 * 1024);
}
