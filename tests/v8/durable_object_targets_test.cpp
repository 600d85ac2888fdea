// Durable Objects as the controller's targets (heapprof/runtime/
// durable_object_targets.h) on real isolates: each object's isolate is the
// target NS:NAME from its first call until its eviction or the worker's end,
// and a window on one holds that object's allocations only, while the worker
// keeps calling both objects on this thread.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "heapprof/runtime/durable_object_targets.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/controller.h"
#include "v8/profile_checks.h"

using namespace heapprof;
using heapprof::testing_v8::HasFunction;

namespace {

const char* kWorker = R"(
import { DurableObject } from 'cloudflare:workers';
function leakRecord(n) { const r = []; for (let i = 0; i < 32; i++) r.push({ n, i, text: 'record ' + n + ' ' + i }); return r; }
function scratchRecord(n) { const r = []; for (let i = 0; i < 32; i++) r.push({ n, i, text: 'record ' + n + ' ' + i }); return r.length; }
export class Store extends DurableObject {
  kept = [];
  remember(n) {
    if (this.ctx.id.name === 'leaky') { this.kept.push(leakRecord(n)); return this.kept.length; }
    return scratchRecord(n);
  }
}
let served = 0;
export default {
  async fetch(request, env) {
    const name = new URL(request.url).pathname.slice(1);
    return new Response(String(await env.STORES.getByName(name).remember(served++)));
  },
};
)";

WorkerOptions Options() {
  WorkerOptions options;
  options.console = [](std::string_view, std::string_view) {};
  options.durable_objects = {{"STORES", "Store", "targets-Store", false}};
  return options;
}

void Call(WorkerRuntime& runtime, const std::string& object) {
  WorkerRequest request;
  request.url = "https://example.com/" + object;
  Result<WorkerResponse> response = runtime.Dispatch(request);
  INFO(object << ": " << response.status().message());
  REQUIRE(response.ok());
}

// Before the runtime (and its objects' isolates) goes, even when a check failed.
struct UnregisterAtEnd {
  DurableObjectTargets& targets;
  ~UnregisterAtEnd() { targets.UnregisterAll(); }
};

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A window of the controller on `target`, while this thread calls both
// objects and pumps their isolates between calls, as serve's replica does.
Profile WindowOn(Controller& controller, DurableObjectTargets& targets, WorkerRuntime& runtime,
                 const std::string& target) {
  WindowRequest request{target, std::chrono::hours(1), {}};
  request.options.interval_bytes = 1024;
  request.options.isolate_name = target;
  uint64_t id = 0;
  std::future<Result<WindowProfile>> window = controller.Profile(request, &id);
  for (int i = 0; i < 100; ++i) {
    Call(runtime, i % 2 == 0 ? "leaky" : "quiet");
    targets.Pump(runtime);
  }
  controller.EndWindow(id);
  while (window.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready) targets.Pump(runtime);
  Result<WindowProfile> profile = window.get();
  INFO(profile.status().message());
  REQUIRE(profile.ok());
  return std::move(profile->profile);
}

}  // namespace

TEST_CASE("durable object targets: an object's isolate is the target NS:NAME and its window holds its own allocations",
          "[durable-objects]") {
  Controller controller;
  DurableObjectTargets targets(controller);
  WorkerOptions options = Options();
  int created = 0;
  options.on_durable_object_created = [&](const DurableObjectReport&, WorkerRuntime&) { ++created; };
  targets.Install(options);
  Result<WorkerRuntime> made = WorkerRuntime::Create(options);
  REQUIRE(made.ok());
  WorkerRuntime runtime = std::move(made).value();
  UnregisterAtEnd unregister{targets};
  REQUIRE(runtime.Load(kWorker, "/virtual/targets.js").ok());
  CHECK(controller.Targets().empty());

  Call(runtime, "leaky");
  Call(runtime, "quiet");
  CHECK(created == 2);  // the hook set before Install still runs
  CHECK(Has(controller.Targets(), "STORES:leaky"));
  CHECK(Has(controller.Targets(), "STORES:quiet"));

  Profile leaky = WindowOn(controller, targets, runtime, "STORES:leaky");
  CHECK(leaky.CommentValue("isolate") == "STORES:leaky");
  CHECK(HasFunction(leaky, "leakRecord"));
  CHECK_FALSE(HasFunction(leaky, "scratchRecord"));
  Profile quiet = WindowOn(controller, targets, runtime, "STORES:quiet");
  CHECK(HasFunction(quiet, "scratchRecord"));
  CHECK_FALSE(HasFunction(quiet, "leakRecord"));

  // The objects' counts, refreshed by Pump (every 500 ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  targets.Pump(runtime);
  std::vector<DurableObjectTarget> listed = targets.Targets();
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].name == "STORES:leaky");
  CHECK(listed[0].report.requests == 101);
  CHECK(listed[0].report.heap_used_bytes > 0);
  CHECK(listed[0].heap_limit_bytes == options.heap_limit_bytes);

  // Named by its hex id in upper case, or its name; not another namespace's, nor another name.
  std::string hex = listed[0].report.id;
  std::transform(hex.begin(), hex.end(), hex.begin(), [](unsigned char c) { return std::toupper(c); });
  const DurableObjectReport& object = listed[0].report;
  CHECK(DurableObjectSelector::Parse("STORES:" + hex).value().Matches(object));
  CHECK(DurableObjectSelector::Parse("STORES:leaky").value().Matches(object));
  CHECK_FALSE(DurableObjectSelector::Parse("OTHER:leaky").value().Matches(object));
  CHECK_FALSE(DurableObjectSelector::Parse("STORES:quiet").value().Matches(object));
  CHECK_FALSE(DurableObjectSelector::Parse("STORES:").ok());
  CHECK_FALSE(DurableObjectSelector::Parse(":leaky").ok());
  CHECK_FALSE(DurableObjectSelector::Parse("leaky").ok());

  // Before the worker's runtime (and its objects' isolates) goes.
  targets.UnregisterAll();
  CHECK(controller.Targets().empty());
  CHECK(targets.Targets().empty());
}

TEST_CASE("durable object targets: an evicted object is no target until its next call, and a window on it ends then",
          "[durable-objects]") {
  Controller controller;
  DurableObjectTargets targets(controller);
  WorkerOptions options = Options();
  // Well above an object's making (its idle time counts from its event's start).
  options.durable_object_idle_limit = std::chrono::milliseconds(1000);
  targets.Install(options);
  Result<WorkerRuntime> made = WorkerRuntime::Create(options);
  REQUIRE(made.ok());
  WorkerRuntime runtime = std::move(made).value();
  UnregisterAtEnd unregister{targets};
  REQUIRE(runtime.Load(kWorker, "/virtual/targets.js").ok());
  Call(runtime, "leaky");
  REQUIRE(Has(controller.Targets(), "STORES:leaky"));

  WindowRequest request{"STORES:leaky", std::chrono::hours(1), {}};
  request.partial_on_unregister = true;
  std::future<Result<WindowProfile>> window = controller.Profile(request);
  targets.Pump(runtime);  // the window opens
  Call(runtime, "leaky");
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  Call(runtime, "quiet");  // evicts leaky before the call
  CHECK_FALSE(Has(controller.Targets(), "STORES:leaky"));
  CHECK(Has(controller.Targets(), "STORES:quiet"));
  REQUIRE(window.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  Result<WindowProfile> seen = window.get();
  INFO(seen.status().message());
  REQUIRE(seen.ok());
  CHECK_FALSE(seen->profile.CommentValue("window_end").empty());

  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  Call(runtime, "leaky");  // made anew: a target again, its restart counted
  CHECK(Has(controller.Targets(), "STORES:leaky"));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  targets.Pump(runtime);
  std::vector<DurableObjectTarget> listed = targets.Targets();
  REQUIRE(listed.size() == 1);  // quiet was evicted before this call
  CHECK(listed[0].name == "STORES:leaky");
  CHECK(listed[0].report.restarts == 1);
  targets.UnregisterAll();
}
