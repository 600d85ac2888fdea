// The embedding layer on real isolates: run JS, see exceptions, heap limits.
#include <v8.h>

#include <catch2/catch.hpp>

#include "heapprof/v8/v8_host.h"

using heapprof::ErrorCode;

TEST_CASE("the linked V8 matches the headers heapprof was compiled against") {
  REQUIRE(heapprof::InitializeV8().ok());
  std::string runtime = heapprof::V8RuntimeVersion();
  std::string headers = heapprof::V8HeaderVersion();
  INFO("runtime " << runtime << ", headers " << headers);
  REQUIRE(runtime.rfind(headers + ".", 0) == 0);
}

TEST_CASE("an isolate runs JS and returns the result") {
  auto isolate = heapprof::Isolate::Create();
  REQUIRE(isolate.ok());
  auto result = isolate->RunScript("[1, 2, 3].map(x => x * 2).join(',')");
  REQUIRE(result.ok());
  CHECK(result.value() == "2,4,6");
  // State persists across scripts in the same context.
  REQUIRE(isolate->RunScript("globalThis.counter = 41").ok());
  CHECK(isolate->RunScript("++counter").value() == "42");
}

TEST_CASE("a thrown JS exception comes back as an error value with its stack") {
  auto isolate = heapprof::Isolate::Create();
  REQUIRE(isolate.ok());
  auto result = isolate->RunScript("function fail() { throw new TypeError('boom'); }\nfail();", "thrower.js");
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == ErrorCode::kScriptError);
  CHECK_THAT(result.status().message(), Catch::Contains("TypeError: boom"));
  CHECK_THAT(result.status().message(), Catch::Contains("thrower.js"));
  // The isolate keeps working after an exception.
  CHECK(isolate->RunScript("1 + 1").value() == "2");
}

TEST_CASE("a syntax error is reported, not thrown") {
  auto isolate = heapprof::Isolate::Create();
  REQUIRE(isolate.ok());
  auto result = isolate->RunScript("function (", "bad.js");
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(result.status().message(), Catch::Contains("SyntaxError"));
}

TEST_CASE("the heap limit is applied and ends the script cleanly") {
  heapprof::IsolateOptions options;
  options.heap_limit_bytes = 24u * 1024 * 1024;
  bool hook_called = false;
  options.on_near_heap_limit = [&](v8::Isolate*, size_t) { hook_called = true; };
  auto isolate = heapprof::Isolate::Create(options);
  REQUIRE(isolate.ok());
  v8::HeapStatistics stats;
  isolate->get()->GetHeapStatistics(&stats);
  CHECK(stats.heap_size_limit() <= 32u * 1024 * 1024);
  auto result = isolate->RunScript("const keep = []; while (true) keep.push(new Array(1000).fill(1.5));");
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(result.status().message(), Catch::Contains("heap limit"));
  CHECK(hook_called);
  CHECK(isolate->heap_limit_reached());
}

TEST_CASE("a larger limit lets the same allocation succeed") {
  heapprof::IsolateOptions options;
  options.heap_limit_bytes = 256u * 1024 * 1024;
  auto isolate = heapprof::Isolate::Create(options);
  REQUIRE(isolate.ok());
  auto result = isolate->RunScript(
      "const keep = []; for (let i = 0; i < 3000; ++i) keep.push(new Array(1000).fill(1.5)); keep.length");
  REQUIRE(result.ok());
  CHECK(result.value() == "3000");
}

TEST_CASE("ArrayBuffer bytes count toward the heap limit, garbage ones do not") {
  // The bytes behind ArrayBuffers live outside V8's heap, which V8's own limit
  // never sees: 600 MiB of kept Uint8Arrays would pass a 32 MiB limit.
  heapprof::IsolateOptions options;
  options.heap_limit_bytes = 32u * 1024 * 1024;
  bool hook_called = false;
  options.on_near_heap_limit = [&](v8::Isolate*, size_t) { hook_called = true; };
  auto hoarder = heapprof::Isolate::Create(options);
  REQUIRE(hoarder.ok());
  auto kept = hoarder->RunScript(
      "const keep = []; for (let i = 0; i < 600; ++i) keep.push(new Uint8Array(1 << 20)); keep.length");
  REQUIRE_FALSE(kept.ok());
  CHECK(kept.status().code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(kept.status().message(), Catch::Contains("heap limit of 32 MiB"));
  CHECK_THAT(kept.status().message(), Catch::Contains("MiB of it in ArrayBuffers)"));
  CHECK(hook_called);
  CHECK(hoarder->heap_limit_reached());

  // The same 600 MiB allocated and dropped one MiB at a time: never more than a
  // few MiB held, so the script runs to its end.
  auto churner = heapprof::Isolate::Create(options);
  REQUIRE(churner.ok());
  auto churned =
      churner->RunScript("let sum = 0; for (let i = 0; i < 600; ++i) sum += new Uint8Array(1 << 20).fill(1)[i]; sum");
  INFO(churned.status().message());
  REQUIRE(churned.ok());
  CHECK(churned.value() == "600");
  CHECK_FALSE(churner->heap_limit_reached());
}

TEST_CASE("isolates are created and disposed repeatedly") {
  for (int i = 0; i < 5; ++i) {
    auto isolate = heapprof::Isolate::Create();
    REQUIRE(isolate.ok());
    CHECK(isolate->RunScript("'x'.repeat(3)").value() == "xxx");
  }
}

TEST_CASE("V8 flags are sorted into known and unknown") {
  // CTest runs every test case in its own process, so this is the first
  // InitializeV8 call there and its flags are the ones applied.
  bool first = heapprof::V8AppliedFlags().empty() && heapprof::V8UnknownFlags().empty() &&
               heapprof::V8RuntimeVersion().empty() == false;
  REQUIRE(heapprof::InitializeV8({{"--no-turbo-inlining", "--no-such-flag-at-all"}}).ok());
  if (first && !heapprof::V8AppliedFlags().empty()) {
    CHECK(heapprof::V8AppliedFlags() == std::vector<std::string>{"--no-turbo-inlining"});
    CHECK(heapprof::V8UnknownFlags() == std::vector<std::string>{"--no-such-flag-at-all"});
  }
}

TEST_CASE("heapprof's GC hook is not visible to scripts") {
  auto isolate = heapprof::Isolate::Create();
  REQUIRE(isolate.ok());
  CHECK(isolate->RunScript("typeof __heapprof_gc").value() == "undefined");
  CHECK(isolate->RunScript("typeof gc").value() == "undefined");
}
