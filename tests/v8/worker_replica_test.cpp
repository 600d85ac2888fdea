// WorkerReplica, the replica life run and serve share: registered with the
// controller while it lives, hooks around the load and between requests, a
// fresh isolate after the time limit or the heap limit, Terminate for good.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "heapprof/runtime/worker_replica.h"

using namespace heapprof;

namespace {

std::string WorkerFile(const std::string& name, const std::string& source) {
  auto dir = std::filesystem::path(HEAPPROF_BINARY_DIR) / "test-workers" / "replica";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path) << source;
  return path.string();
}

WorkerRequest Get(const std::string& path) {
  WorkerRequest r;
  r.url = "https://example.com" + path;
  return r;
}

}  // namespace

TEST_CASE("a replica recreates its isolate after the time limit and the heap limit") {
  Controller controller;
  WorkerReplicaOptions options;
  options.name = "replica-1";
  options.worker = WorkerFile("kinds.js", R"(
    let count = 0;
    const kept = [];
    export default { fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === '/loop') for (;;) {}
      if (path === '/hog') for (;;) kept.push(new Array(4096).fill(1));
      if (path === '/throw') throw new Error('no');
      return new Response(String(++count));
    } };
  )");
  options.worker_options.name = "replica-1";
  options.worker_options.heap_limit_bytes = 32u * 1024 * 1024;
  options.worker_options.request_timeout = std::chrono::milliseconds(1000);
  options.controller = &controller;
  options.recreate_after_failure = true;
  std::vector<std::string> events;
  options.before_load = [&](WorkerReplica& r) {
    events.push_back("load " + std::to_string(r.generation()));
    return Status::Ok();
  };
  options.between_requests = [&](WorkerReplica& r) { events.push_back("idle " + std::to_string(r.served())); };
  WorkerReplica replica(options);
  std::vector<std::string> answers;
  std::vector<WorkerFailure> failures;
  std::vector<std::string> targets;
  replica.Start([&](Status loaded) {
    REQUIRE(loaded.ok());
    targets = controller.Targets();
    for (const char* path : {"/", "/", "/throw", "/loop", "/", "/hog", "/"}) {
      DispatchResult r = replica.Dispatch(Get(path));
      if (r.ok()) {
        answers.push_back(r->body);
      } else {
        failures.push_back(r.failure());
        answers.push_back(r.status().message());
      }
      replica.Idle();
    }
  });
  replica.Join();
  CHECK(targets == std::vector<std::string>{"replica-1"});
  CHECK(controller.Targets().empty());  // unregistered when the body returned
  REQUIRE(answers.size() == 7);
  CHECK(answers[0] == "1");
  CHECK(answers[1] == "2");
  // A throw keeps the isolate; the time limit and the heap limit make a fresh one.
  CHECK_THAT(answers[3], Catch::Contains("time limit") && Catch::EndsWith("replica-1 was recreated"));
  CHECK(answers[4] == "1");
  CHECK(answers[5] == "the worker exceeded its heap limit; replica-1 was recreated");
  CHECK(answers[6] == "1");
  CHECK(failures ==
        std::vector<WorkerFailure>{WorkerFailure::kThrew, WorkerFailure::kTimedOut, WorkerFailure::kHeapLimit});
  CHECK(replica.served() == 4);
  CHECK(replica.failures() == 3);
  CHECK(replica.restarts() == 2);
  CHECK(events.front() == "load 1");
  CHECK(std::count(events.begin(), events.end(), "load 3") == 1);
  CHECK(events.back() == "idle 4");
  controller.Shutdown();
}

TEST_CASE("a terminated replica ends the running request and runs no more") {
  WorkerReplicaOptions options;
  options.name = "stopping";
  options.worker = WorkerFile("loop.js", R"(
    export default { fetch(request) {
      if (new URL(request.url).pathname === '/loop') for (;;) {}
      return new Response('ok');
    } };
  )");
  options.worker_options.request_timeout = std::chrono::milliseconds(0);  // no limit: only Terminate ends it
  WorkerReplica replica(options);
  std::atomic<bool> running{false};
  std::vector<WorkerFailure> failures;  // the replica's thread's until Join
  replica.Start([&](Status loaded) {
    REQUIRE(loaded.ok());
    REQUIRE(replica.Dispatch(Get("/")).ok());
    running = true;
    failures.push_back(replica.Dispatch(Get("/loop")).failure());
    failures.push_back(replica.Dispatch(Get("/")).failure());
  });
  while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // It ends the loop, or, when the loop has not started yet, keeps it from starting.
  (void)replica.Terminate();
  replica.Join();
  REQUIRE(failures.size() == 2);
  CHECK((failures[0] == WorkerFailure::kTerminated || failures[0] == WorkerFailure::kNotRun));
  CHECK(failures[1] == WorkerFailure::kNotRun);
}
