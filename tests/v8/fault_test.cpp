// Faults inside an open window: the heap limit hit while sampling very often,
// a JS exception thrown from a getter that allocates inside JSON.stringify,
// and TerminateExecution from another thread. Each ends in a clear error and
// a valid profile (or none, said so), never a crash, and the process goes on.
#include <v8-profiler.h>
#include <v8.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"
#include "profile_checks.h"

using namespace heapprof;
using namespace heapprof::testing_v8;

namespace {

SessionOptions Opts(uint64_t interval) {
  SessionOptions o;
  o.interval_bytes = interval;
  o.isolate_name = "fault-test";
  return o;
}

constexpr const char* kLeak =
    "const cache = []; function leakyCache(k) { for (let i = 0; i < 500; ++i) "
    "cache.push({ k, i, pad: new Array(16).fill(i) }); }";

}  // namespace

// (a) The heap limit hit while a window samples every 512 bytes: tens of
// thousands of samples and a GC-prologue snapshot in every GC near the limit.
TEST_CASE("fault: the heap limit hit in a window sampled every 512 bytes") {
  IsolateOptions io;
  io.heap_limit_bytes = 32u * 1024 * 1024;
  io.name = "oom";
  auto iso = Isolate::Create(io);
  REQUIRE(iso.ok());
  v8::Isolate::Scope isolate_scope(iso->get());
  v8::HandleScope handles(iso->get());
  REQUIRE(iso->RunScript(kLeak, "leak.js").ok());

  SECTION("no hook: clear error, then the open window stops with a valid profile") {
    auto session = Session::Start(iso->get(), Opts(512));
    REQUIRE(session.ok());
    auto r = iso->RunScript("for (let k = 0; ; ++k) leakyCache(k);", "loop.js");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kResourceExhausted);
    CHECK_THAT(r.status().message(), Catch::Contains("heap limit of 32 MiB"));
    CHECK(iso->heap_limit_reached());
    auto p = std::move(session.value()).StopAndBuild();
    INFO(p.status().message());
    REQUIRE(p.ok());
    RequireValidPprof(p.value());
    CHECK(HasFunction(p.value(), "leakyCache"));
    CHECK(std::stoull(p->CommentValue("prologue_snapshots")) > 0);  // the ledger ran near the limit
    CHECK(p->Total(kAllocSpace) > 16.0 * 1024 * 1024);
    // The isolate refuses more JS, saying why; the sampler is released.
    auto again = iso->RunScript("1 + 1");
    CHECK(again.status().code() == ErrorCode::kResourceExhausted);
    CHECK_THAT(again.status().message(), Catch::Contains("heap limit"));
    CHECK(SamplerFree(iso->get()));
  }
  SECTION("a window left open across the limit is closed by its destructor") {
    {
      auto session = Session::Start(iso->get(), Opts(512));
      REQUIRE(session.ok());
      REQUIRE_FALSE(iso->RunScript("for (let k = 0; ; ++k) leakyCache(k);", "loop.js").ok());
    }
    CHECK(SamplerFree(iso->get()));
  }
}

TEST_CASE("fault: after one isolate hits its limit the process profiles another") {
  {
    IsolateOptions io;
    io.heap_limit_bytes = 16u * 1024 * 1024;
    auto doomed = Isolate::Create(io);
    REQUIRE(doomed.ok());
    v8::Isolate::Scope isolate_scope(doomed->get());
    v8::HandleScope handles(doomed->get());
    auto session = Session::Start(doomed->get(), Opts(4096));
    REQUIRE(session.ok());
    REQUIRE(doomed->RunScript("const keep = []; for (;;) keep.push(new Array(64).fill(1));").status().code() ==
            ErrorCode::kResourceExhausted);
    REQUIRE(std::move(session.value()).Stop().ok());
  }  // disposed after the OOM
  auto iso = Isolate::Create();
  REQUIRE(iso.ok());
  v8::Isolate::Scope isolate_scope(iso->get());
  v8::HandleScope handles(iso->get());
  auto session = Session::Start(iso->get(), Opts(4096));
  REQUIRE(session.ok());
  REQUIRE(
      iso->RunScript("globalThis.k = []; function fine() { for (let i = 0; i < 2000; ++i) k.push([i, i]); } fine();",
                     "fine.js")
          .ok());
  auto p = std::move(session.value()).StopAndBuild();
  REQUIRE(p.ok());
  RequireValidPprof(p.value());
  CHECK(HasFunction(p.value(), "fine"));
}

// (b) Exceptions out of callbacks that V8 runs inside JSON.stringify, with a
// tiny interval so that samples and GCs (and the ledger's prologue snapshots)
// happen inside them.
TEST_CASE("fault: a getter that allocates and throws inside JSON.stringify while sampling") {
  IsolateOptions io;
  io.heap_limit_bytes = 64u * 1024 * 1024;  // a small young generation: frequent scavenges
  auto iso = Isolate::Create(io);
  REQUIRE(iso.ok());
  v8::Isolate::Scope isolate_scope(iso->get());
  v8::HandleScope handles(iso->get());
  REQUIRE(iso->RunScript(R"JS(
function bloat(n) { const a = []; for (let i = 0; i < n; ++i) a.push({ i, s: 'v' + i }); return a; }
globalThis.kept = [];
function payload(where) {
  const items = [];
  for (let i = 0; i < 200; ++i) items.push({ i, toJSON() { return bloat(100); } });
  const p = { items };
  Object.defineProperty(p, where === 'getter' ? 'poison' : 'items2', { enumerable: true, get() {
    const junk = bloat(60000);
    kept.push(junk.slice(0, 500));
    if (where === 'getter') throw new RangeError('getter failed after ' + junk.length + ' objects');
    return [];
  } });
  if (where === 'toJSON') items.push({ toJSON() { bloat(60000); throw new TypeError('toJSON refused'); } });
  return p;
}
)JS",
                         "payload.js")
              .ok());

  struct Case {
    const char* name;
    const char* script;
    const char* message;
  };
  const Case cases[] = {
      {"getter", "JSON.stringify(payload('getter'))", "RangeError: getter failed after 60000 objects"},
      {"toJSON", "JSON.stringify(payload('toJSON'))", "TypeError: toJSON refused"},
      {"replacer",
       "JSON.stringify(payload('none'), (k, v) => { if (k === 'items2') { bloat(60000); "
       "throw new Error('replacer threw'); } return v; })",
       "Error: replacer threw"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      auto session = Session::Start(iso->get(), Opts(256));
      REQUIRE(session.ok());
      auto r = iso->RunScript(c.script, "stringify.js");
      // The exception reaches the caller, with its message and JS stack.
      REQUIRE_FALSE(r.ok());
      CHECK(r.status().code() == ErrorCode::kScriptError);
      CHECK_THAT(r.status().message(), Catch::Contains(c.message));
      CHECK_THAT(r.status().message(), Catch::Contains("at JSON.stringify"));
      // GCs, each with a ledger snapshot, ran while the callbacks allocated.
      CHECK(session->prologue_snapshots() > 0);
      auto p = std::move(session.value()).StopAndBuild();
      INFO(p.status().message());
      REQUIRE(p.ok());
      RequireValidPprof(p.value());
      CHECK(p->CommentValue("missing_sample_ids").empty());
      CHECK(HasFunction(p.value(), "bloat"));
      // bloat's arrays and objects: at least the 60000-object call's ~2 MB.
      int64_t bloat_alloc = 0;
      for (const FunctionTotal& t : FunctionTotals(p.value(), kAllocSpace)) {
        if (t.name == "bloat") bloat_alloc = t.cum;
      }
      CHECK(bloat_alloc > 1024 * 1024);
      // The isolate keeps working.
      CHECK(iso->RunScript("JSON.stringify({ ok: true })").value() == "{\"ok\":true}");
    }
  }
}

// (c) TerminateExecution from another thread while a request runs inside a
// window, as `heapprof run` does on Ctrl-C.
TEST_CASE("fault: TerminateExecution from another thread mid-window") {
  std::atomic<bool> running{false};
  WorkerOptions options;
  options.name = "terminated";
  options.console = [&](std::string_view, std::string_view text) {
    if (text == "spinning") running.store(true);
  };
  auto created = WorkerRuntime::Create(options);
  REQUIRE(created.ok());
  WorkerRuntime& runtime = created.value();
  REQUIRE(runtime
              .Load(R"JS(
    const kept = [];
    function retain(n) { for (let i = 0; i < n; ++i) kept.push({ i, pad: new Array(32).fill(i) }); }
    // Says so once it has allocated ~20 MB, so its samples are in the window whenever the termination lands.
    function spin() {
      const ring = [];
      for (let i = 0; ; ++i) {
        ring[i & 1023] = { i, pad: new Array(8).fill(i) };
        if (i === 200000) console.log('spinning');
      }
    }
    export default { fetch(request) {
      if (request.url.endsWith('/spin')) { retain(5000); spin(); }
      return new Response('ok ' + kept.length);
    } };
  )JS",
                    "spinner.js")
              .ok());
  auto session = runtime.StartSession(Opts(16 * 1024));
  REQUIRE(session.ok());
  v8::Isolate* isolate = runtime.isolate().get();
  std::thread terminator([&] {
    while (!running.load()) std::this_thread::yield();
    isolate->TerminateExecution();
  });
  WorkerRequest spin;
  spin.url = "https://example.com/spin";
  auto r = runtime.Dispatch(spin);
  terminator.join();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kScriptError);
  CHECK_THAT(r.status().message(), Catch::Contains("terminated"));

  // The window stops cleanly and holds what ran before the termination.
  auto p = runtime.StopSession(std::move(session).value());
  INFO(p.status().message());
  REQUIRE(p.ok());
  RequireValidPprof(p.value());
  auto inuse = FunctionTotals(p.value(), kInuseSpace);
  REQUIRE_FALSE(inuse.empty());
  CHECK(inuse[0].name == "retain");
  CHECK(HasFunction(p.value(), "spin"));

  // The isolate serves again (the runtime cancels the termination), and can be profiled again.
  WorkerRequest plain;
  plain.url = "https://example.com/";
  auto after = runtime.Dispatch(plain);
  INFO(after.status().message());
  CHECK(after.ok());
  auto again = runtime.StartSession(Opts(16 * 1024));
  REQUIRE(again.ok());
  REQUIRE(runtime.Dispatch(plain).ok());
  CHECK(runtime.StopSession(std::move(again).value()).ok());
}

TEST_CASE("fault: TerminateExecution of a plain script in a window and JS afterwards") {
  auto iso = Isolate::Create();
  REQUIRE(iso.ok());
  v8::Isolate::Scope isolate_scope(iso->get());
  v8::HandleScope handles(iso->get());
  auto session = Session::Start(iso->get(), Opts(16 * 1024));
  REQUIRE(session.ok());
  // Terminated whenever it arrives: before the script starts or while it loops.
  std::thread terminator([isolate = iso->get()] { isolate->TerminateExecution(); });
  auto r = iso->RunScript(
      "globalThis.before = []; for (let i = 0; i < 4000; ++i) before.push(new Array(64).fill(i));"
      "for (let i = 0; ; ++i) globalThis.last = { i };",
      "forever.js");
  terminator.join();
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("terminated"));
  auto p = std::move(session.value()).StopAndBuild();
  INFO(p.status().message());
  REQUIRE(p.ok());
  RequireValidPprof(p.value());
  auto after = iso->RunScript("6 * 7");
  INFO(after.status().message());
  REQUIRE(after.ok());
  CHECK(after.value() == "42");
}
