// The V8 tests' way to run a fetch handler's body once: a fresh embedded
// runtime loads `export default { async fetch(request) { BODY } }`, serves
// one request, and the response's body is returned (a failed load or
// request fails the test with its message). FetchBody sends one GET of a
// path to a runtime a test made.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "heapprof/runtime/worker_runtime.h"

namespace heapprof::testing {

inline std::string RunFetchBody(const std::string& body, const WorkerRequest& request, const std::string& name) {
  WorkerOptions options;
  options.request_timeout = std::chrono::minutes(5);  // behaviour, not speed
  options.console = [](std::string_view, std::string_view) {};
  auto runtime = WorkerRuntime::Create(options);
  REQUIRE(runtime.ok());
  Status loaded = runtime->Load("export default { async fetch(request) {\n" + body + "\n} };\n", name);
  INFO(loaded.message());
  REQUIRE(loaded.ok());
  auto response = runtime->Dispatch(request);
  INFO(response.status().message());
  REQUIRE(response.ok());
  return response->body;
}

// The body of `runtime`'s answer to GET https://example.com<path>.
inline std::string FetchBody(WorkerRuntime& runtime, const std::string& path) {
  WorkerRequest request;
  request.url = "https://example.com" + path;
  auto response = runtime.Dispatch(request);
  INFO(path << ": " << response.status().message());
  REQUIRE(response.ok());
  return response->body;
}

}  // namespace heapprof::testing
