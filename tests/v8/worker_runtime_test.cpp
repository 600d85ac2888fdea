// The worker runtime on real isolates: module and script workers, async
// handlers, errors with their JS stacks, the heap limit, profiling windows.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "heapprof/core/report.h"
#include "heapprof/runtime/worker_runtime.h"

using namespace heapprof;

namespace {

struct Captured {
  std::vector<std::string> lines;
};

WorkerRuntime MakeRuntime(Captured* console = nullptr, size_t heap_limit = 128u * 1024 * 1024,
                          NearHeapLimitHook hook = nullptr) {
  WorkerOptions options;
  options.name = "test-worker";
  options.heap_limit_bytes = heap_limit;
  options.on_near_heap_limit = std::move(hook);
  if (console) {
    options.console = [console](std::string_view level, std::string_view text) {
      console->lines.push_back(std::string(level) + ":" + std::string(text));
    };
  }
  auto runtime = WorkerRuntime::Create(options);
  REQUIRE(runtime.ok());
  return std::move(runtime).value();
}

// A folder of worker files under the build tree, fresh per test.
std::filesystem::path WorkerDir(const std::string& name) {
  auto dir = std::filesystem::path(HEAPPROF_BINARY_DIR) / "test-workers" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void WriteFile(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

const FunctionTotal* Find(const std::vector<FunctionTotal>& totals, const std::string& name) {
  for (const auto& t : totals) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a module worker's default export handles requests") {
  Captured console;
  WorkerRuntime runtime = MakeRuntime(&console);
  REQUIRE(runtime
              .Load(R"(
    let served = 0;
    export default {
      fetch(request, env, ctx) {
        served++;
        const url = new URL(request.url);
        console.log('served', served, request.method, url.pathname, request.headers.get('CF-IPCountry') !== null);
        return new Response('ok', { status: served === 2 ? 404 : 200 });
      },
    };
  )",
                    "module-worker.js")
              .ok());
  CHECK(runtime.kind() == WorkerKind::kModule);
  auto first = runtime.Dispatch(SyntheticRequest(0));
  REQUIRE(first.ok());
  CHECK(first->status == 200);
  CHECK(runtime.Dispatch(SyntheticRequest(1))->status == 404);
  REQUIRE(console.lines.size() == 2);
  CHECK_THAT(console.lines[0], Catch::StartsWith("log:served 1 "));
  CHECK_THAT(console.lines[0], Catch::EndsWith(" true"));
}

TEST_CASE("an async handler is awaited through microtasks, timers and waitUntil") {
  Captured console;
  WorkerRuntime runtime = MakeRuntime(&console);
  REQUIRE(runtime
              .Load(R"(
    const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
    export default {
      async fetch(request, env, ctx) {
        ctx.waitUntil(sleep(50).then(() => console.info('after response')));
        await sleep(10);
        const body = request.method === 'POST' ? await request.json() : {};
        return Response.json({ path: new URL(request.url).pathname, user: body.user ?? null }, { status: 201 });
      },
    };
  )",
                    "async-worker.js")
              .ok());
  WorkerRequest post;
  post.method = "POST";
  post.url = "https://example.com/api/orders";
  post.body = R"({"user": 42})";
  auto response = runtime.Dispatch(post);
  REQUIRE(response.ok());
  CHECK(response->status == 201);
  REQUIRE(console.lines.size() == 1);
  CHECK(console.lines[0] == "info:after response");
}

TEST_CASE("a module imports relative files") {
  auto dir = WorkerDir("imports");
  std::filesystem::create_directories(dir / "lib");
  WriteFile(dir / "lib" / "greeting.js", "export const greeting = name => `hello ${name}`;\n");
  WriteFile(
      dir / "worker.js",
      "import { greeting } from './lib/greeting.js';\n"
      "export default { fetch() { return new Response(greeting('x'), { status: 200 + greeting('x').length }); } };\n");
  WorkerRuntime runtime = MakeRuntime();
  REQUIRE(runtime.LoadFile((dir / "worker.js").string()).ok());
  CHECK(runtime.Dispatch(SyntheticRequest(0))->status == 207);

  WriteFile(dir / "bare.js", "import x from 'lodash';\nexport default { fetch() { return x; } };\n");
  WorkerRuntime other = MakeRuntime();
  Status s = other.LoadFile((dir / "bare.js").string());
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Contains("relative paths only"));
}

TEST_CASE("a thrown error is reported with its JS stack") {
  WorkerRuntime runtime = MakeRuntime();
  REQUIRE(runtime
              .Load(R"(
    function parseTenant(url) { throw new TypeError('no tenant in ' + url); }
    export default { fetch(request) { return new Response(parseTenant(request.url)); } };
  )",
                    "thrower.js")
              .ok());
  auto result = runtime.Dispatch(SyntheticRequest(3));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == ErrorCode::kScriptError);
  CHECK_THAT(result.status().message(), Catch::Contains("TypeError: no tenant in https://"));
  CHECK_THAT(result.status().message(), Catch::Contains("at parseTenant (thrower.js:2"));
  // The runtime keeps serving after a JS error.
  CHECK_FALSE(runtime.Dispatch(SyntheticRequest(4)).ok());
}

TEST_CASE("a rejected promise is reported with its JS stack") {
  WorkerRuntime runtime = MakeRuntime();
  REQUIRE(runtime
              .Load(R"(
    async function loadSession(id) { await null; throw new Error('session ' + id + ' expired'); }
    export default { async fetch(request) { await loadSession(7); return new Response('never'); } };
  )",
                    "rejecter.js")
              .ok());
  auto result = runtime.Dispatch(SyntheticRequest(0));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == ErrorCode::kScriptError);
  CHECK_THAT(result.status().message(), Catch::Contains("rejected"));
  CHECK_THAT(result.status().message(), Catch::Contains("Error: session 7 expired"));
  CHECK_THAT(result.status().message(), Catch::Contains("at loadSession (rejecter.js:2"));
}

TEST_CASE("load-time failures are errors: syntax, top-level throw, no handler") {
  {
    WorkerRuntime runtime = MakeRuntime();
    Status s = runtime.Load("export default { fetch( {", "broken.js");
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == ErrorCode::kScriptError);
    CHECK_THAT(s.message(), Catch::Contains("SyntaxError"));
    CHECK_THAT(s.message(), Catch::Contains("broken.js"));
  }
  {
    WorkerRuntime runtime = MakeRuntime();
    Status s = runtime.Load("const config = JSON.parse('{');\nexport default { fetch() {} };", "bad-config.js");
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("SyntaxError"));
  }
  {
    WorkerRuntime runtime = MakeRuntime();
    Status s = runtime.Load("export const x = 1;", "no-default.js");
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("no default export"));
  }
  {
    WorkerRuntime runtime = MakeRuntime();
    Status s = runtime.Load("var x = 1;", "nothing.js");
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("no fetch handler"));
  }
  {
    WorkerRuntime runtime = MakeRuntime();
    Status s = runtime.LoadFile("/nonexistent/worker.js");
    REQUIRE_FALSE(s.ok());
    CHECK(s.code() == ErrorCode::kNotFound);
  }
}

TEST_CASE("plain scripts: service-worker listeners and a global fetch") {
  {
    WorkerRuntime runtime = MakeRuntime();
    REQUIRE(runtime
                .Load(R"(
      addEventListener('fetch', event => {
        event.respondWith(Promise.resolve(new Response('sw', { status: 202 })));
      });
    )",
                      "sw.js")
                .ok());
    CHECK(runtime.kind() == WorkerKind::kEventListener);
    CHECK(runtime.Dispatch(SyntheticRequest(0))->status == 202);
  }
  {
    // Sloppy-mode code (with) is not valid in a module; it still loads as a script.
    WorkerRuntime runtime = MakeRuntime();
    REQUIRE(runtime
                .Load(R"(
      var defaults = { status: 203 };
      function fetch(request, env, ctx) { with (defaults) { return new Response('g', { status: status }); } }
    )",
                      "global.js")
                .ok());
    CHECK(runtime.kind() == WorkerKind::kGlobalFetch);
    CHECK(runtime.Dispatch(SyntheticRequest(0))->status == 203);
  }
  {
    WorkerRuntime runtime = MakeRuntime();
    REQUIRE(runtime.Load("addEventListener('fetch', () => {});", "silent.js").ok());
    auto r = runtime.Dispatch(SyntheticRequest(0));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("respondWith"));
  }
}

TEST_CASE("a handler that never settles is an error, not a hang") {
  WorkerRuntime runtime = MakeRuntime();
  REQUIRE(runtime.Load("export default { fetch() { return new Promise(() => {}); } };", "stuck.js").ok());
  auto r = runtime.Dispatch(SyntheticRequest(0));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.status().message(), Catch::Contains("never settled"));
}

TEST_CASE("the synthetic request stream varies and is deterministic") {
  std::set<std::string> urls;
  for (uint64_t i = 0; i < 200; ++i) urls.insert(SyntheticRequest(i).url);
  CHECK(urls.size() > 100);
  CHECK(SyntheticRequest(17).url == SyntheticRequest(17).url);
  CHECK(SyntheticRequest(17).headers == SyntheticRequest(17).headers);
}

TEST_CASE("exceeding the heap limit ends the request and the hook captures an in-use profile") {
  std::optional<Session> session;
  std::optional<Result<Profile>> captured;
  WorkerRuntime* runtime_ptr = nullptr;
  WorkerRuntime runtime = MakeRuntime(nullptr, 32u * 1024 * 1024, [&](v8::Isolate*, size_t) {
    if (session) {
      captured.emplace(runtime_ptr->StopSession(std::move(*session)));
      session.reset();
    }
  });
  runtime_ptr = &runtime;
  REQUIRE(runtime
              .Load(R"(
    const cache = [];
    function remember(request) { for (let i = 0; i < 2000; ++i) cache.push({ url: request.url, i, pad: new Array(16).fill(i) }); }
    export default { fetch(request) { remember(request); return new Response('ok'); } };
  )",
                    "hog.js")
              .ok());
  SessionOptions options;
  options.interval_bytes = 64 * 1024;
  auto started = runtime.StartSession(options);
  REQUIRE(started.ok());
  session.emplace(std::move(started).value());

  Status failure;
  for (uint64_t i = 0; i < 10000; ++i) {
    auto r = runtime.Dispatch(SyntheticRequest(i));
    if (!r.ok()) {
      failure = r.status();
      break;
    }
  }
  REQUIRE_FALSE(failure.ok());
  CHECK(failure.code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(failure.message(), Catch::Contains("heap limit of 32 MiB"));
  CHECK(runtime.heap_limit_reached());
  REQUIRE(captured.has_value());
  REQUIRE(captured->ok());
  const Profile& profile = captured->value();
  auto inuse = FunctionTotals(profile, kInuseSpace);
  REQUIRE_FALSE(inuse.empty());
  CHECK(inuse[0].name == "remember");
  CHECK(profile.Total(kInuseSpace) > 8 * 1024 * 1024);
  // The isolate refuses further work instead of crashing.
  CHECK(runtime.Dispatch(SyntheticRequest(0)).status().code() == ErrorCode::kResourceExhausted);
}

TEST_CASE("a window opened before loading sees module start-up allocations") {
  WorkerRuntime runtime = MakeRuntime();
  SessionOptions options;
  options.interval_bytes = 32 * 1024;
  auto session = runtime.StartSession(options);
  REQUIRE(session.ok());
  REQUIRE(runtime
              .Load(R"(
    function buildTable() { const t = new Map(); for (let i = 0; i < 50000; ++i) t.set('key-' + i, { id: i, tag: 'v' + i }); return t; }
    const table = buildTable();
    export default { fetch(request) { return new Response(String(table.size)); } };
  )",
                    "startup.js")
              .ok());
  REQUIRE(runtime.Dispatch(SyntheticRequest(0)).ok());
  auto profile = runtime.StopSession(std::move(session).value());
  REQUIRE(profile.ok());
  auto inuse = FunctionTotals(profile.value(), kInuseSpace);
  REQUIRE_FALSE(inuse.empty());
  CHECK(inuse[0].name == "buildTable");
  const FunctionTotal* build = Find(inuse, "buildTable");
  REQUIRE(build != nullptr);
  CHECK(build->flat > profile->Total(kInuseSpace) / 2);
}

TEST_CASE("a response carries its status, headers and body bytes") {
  WorkerRuntime runtime = MakeRuntime();
  REQUIRE(runtime
              .Load(R"(
    export default { async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === '/bytes') return new Response(new Uint8Array([104, 105, 0, 255]), { headers: { 'Content-Type': 'application/octet-stream' } });
      if (path === '/buffer') return new Response(new Uint16Array([0x6968]).buffer);
      if (path === '/json') return Response.json({ é: 'ü' }, { status: 201, statusText: 'Created', headers: { 'X-B': '2', 'x-a': '1' } });
      if (path === '/echo') return new Response(await request.arrayBuffer());
      if (path === '/empty') return new Response(null, { status: 204 });
      return { status: 200 };
    } };
  )",
                    "responses.js")
              .ok());
  auto get = [&](const std::string& path, const std::string& body = {}) {
    WorkerRequest request;
    request.url = "https://example.com" + path;
    request.body = body;
    if (!body.empty()) request.method = "POST";
    return runtime.Dispatch(request);
  };
  auto bytes = get("/bytes");
  REQUIRE(bytes.ok());
  CHECK(bytes->body == std::string("hi\0\xff", 4));
  CHECK(bytes->headers ==
        std::vector<std::pair<std::string, std::string>>{{"content-type", "application/octet-stream"}});
  CHECK(get("/buffer")->body == "hi");
  auto json = get("/json");
  REQUIRE(json.ok());
  CHECK(json->status == 201);
  CHECK(json->reason == "Created");
  CHECK(json->body == "{\"\xc3\xa9\":\"\xc3\xbc\"}");
  CHECK(json->headers.size() == 3);
  CHECK(get("/echo", "posted body")->body == "posted body");
  auto empty = get("/empty");
  REQUIRE(empty.ok());
  CHECK(empty->status == 204);
  CHECK(empty->body.empty());
  auto not_response = get("/other");
  REQUIRE_FALSE(not_response.ok());
  CHECK_THAT(not_response.status().message(), Catch::Contains("instead of a Response"));
}

TEST_CASE("the time limit terminates a looping request and the runtime serves on") {
  WorkerOptions options;
  // Far above what a plain request takes on a busy machine: only the loops reach it.
  options.request_timeout = std::chrono::milliseconds(1000);
  auto created = WorkerRuntime::Create(options);
  REQUIRE(created.ok());
  WorkerRuntime runtime = std::move(created).value();
  REQUIRE(runtime
              .Load(R"(
    const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
    export default { async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === '/loop') for (;;) {}
      // Some work between timers, so that the 1 s limit comes before the
      // runtime's cap of 1,000,000 timers (an idle machine ran those in 0.97 s).
      if (path === '/timers') for (;;) { await sleep(1); for (let i = 0; i < 20000; i++); }
      return new Response('fine');
    } };
  )",
                    "looper.js")
              .ok());
  WorkerRequest loop;
  loop.url = "https://example.com/loop";
  auto looped = runtime.Dispatch(loop);
  REQUIRE_FALSE(looped.ok());
  CHECK(looped.status().code() == ErrorCode::kDeadlineExceeded);
  CHECK_THAT(looped.status().message(), Catch::Contains("time limit of 1 s"));
  WorkerRequest plain;
  plain.url = "https://example.com/";
  auto after = runtime.Dispatch(plain);
  INFO(after.status().message());
  REQUIRE(after.ok());
  CHECK(after->body == "fine");
  WorkerRequest timers;
  timers.url = "https://example.com/timers";
  CHECK(runtime.Dispatch(timers).status().code() == ErrorCode::kDeadlineExceeded);
  CHECK(runtime.Dispatch(plain).ok());
}

TEST_CASE("the time limit terminates a module looping at top level") {
  WorkerOptions options;
  options.request_timeout = std::chrono::milliseconds(200);
  auto created = WorkerRuntime::Create(options);
  REQUIRE(created.ok());
  Status s = created->Load("while (true) {}\nexport default { fetch() { return new Response('x'); } };", "top.js");
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == ErrorCode::kDeadlineExceeded);
  CHECK_THAT(s.message(), Catch::Contains("loading top.js"));
}

TEST_CASE("a failed dispatch says its kind: threw rejected bad response stalled timed out heap limit") {
  WorkerOptions options;
  options.request_timeout = std::chrono::milliseconds(1000);  // only the loop reaches it
  auto created = WorkerRuntime::Create(options);
  REQUIRE(created.ok());
  WorkerRuntime runtime = std::move(created).value();
  WorkerRequest request;
  request.url = "https://example.com/";
  CHECK(runtime.Dispatch(request).failure() == WorkerFailure::kNotRun);
  REQUIRE(runtime
              .Load(R"(
    export default { async fetch(request, env, ctx) {
      const path = new URL(request.url).pathname;
      if (path === '/reject') { await null; throw new Error('later'); }
      if (path === '/wait') { ctx.waitUntil(Promise.reject(new Error('background'))); return new Response('x'); }
      if (path === '/undefined') return undefined;
      if (path === '/object') return { status: 200 };
      if (path === '/body') return new Response(new ReadableStream({ pull(c) { c.error(new Error('torn')); } }));
      if (path === '/stuck') return new Promise(() => {});
      if (path === '/loop') for (;;) {}
      return new Response('fine');
    } };
  )",
                    "kinds.js")
              .ok());
  auto kind = [&](const std::string& path) {
    request.url = "https://example.com" + path;
    DispatchResult r = runtime.Dispatch(request);
    INFO(path << ": " << r.status().message());
    CHECK_FALSE(r.ok());
    return r.failure();
  };
  CHECK(kind("/reject") == WorkerFailure::kRejected);
  CHECK(kind("/wait") == WorkerFailure::kRejected);
  CHECK(kind("/undefined") == WorkerFailure::kBadResponse);
  CHECK(kind("/object") == WorkerFailure::kBadResponse);
  CHECK(kind("/body") == WorkerFailure::kBadResponse);
  CHECK(kind("/stuck") == WorkerFailure::kStalled);
  CHECK(kind("/loop") == WorkerFailure::kTimedOut);
  runtime.Terminate();  // between calls: it ends the next one
  CHECK(kind("/") == WorkerFailure::kTerminated);
  request.url = "https://example.com/";
  CHECK(runtime.Dispatch(request).ok());

  WorkerRuntime small = MakeRuntime(nullptr, 32u * 1024 * 1024);
  REQUIRE(small
              .Load(R"(
    const kept = [];
    export default { fetch() { if (kept.length > 1e9) return new Response(''); for (;;) kept.push(new Array(4096).fill(1)); } };
  )",
                    "hog.js")
              .ok());
  CHECK(small.Dispatch(request).failure() == WorkerFailure::kHeapLimit);
  CHECK(small.Dispatch(request).failure() == WorkerFailure::kHeapLimit);
  WorkerRuntime thrower = MakeRuntime();
  REQUIRE(thrower.Load("export default { fetch() { throw new Error('now'); } };", "throw.js").ok());
  CHECK(thrower.Dispatch(request).failure() == WorkerFailure::kThrew);
}
