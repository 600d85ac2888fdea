// `heapprof run WORKER.js` (its flags: run_flags.cpp). The plan (run_plan), the engine
// (run_engine) and the report (run_report) do the work, the same for every
// mode: one isolate, --replicas, --continuous, --on-heap-limit, --profile.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>

#include "heapprof/core/file_io.h"
#include "heapprof/remote/workerd.h"
#include "heapprof/runtime/runtime_support.h"
#include "heapprof/v8/attribution.h"
#include "heapprof/v8/v8_host.h"
#include "heapprof/workload/traffic.h"
#include "heapprof/workload/worker_config.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/push_flags.h"
#include "tools/heapprof/run_engine.h"
#include "tools/heapprof/run_plan.h"
#include "tools/heapprof/run_report.h"
#include "tools/heapprof/run_workerd.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

// How long the windows still queued at the end of a run may take to reach the store.
constexpr std::chrono::milliseconds kPushDrain{10'000};

}  // namespace

int RunCommand(const RunArgs& given) {
  if (given.runtime != "embedded" && given.runtime != "workerd") {
    return UsageError("run", "--runtime is embedded or workerd, not " + given.runtime);
  }
  const bool workerd = given.runtime == "workerd";
  if (!workerd && (given.sample_types != "both" || !given.workerd.empty())) {
    return UsageError("run",
                      "--sample-types and --workerd are for --runtime workerd (the embedded host measures "
                      "all four sample types in one window)");
  }
  if (!workerd && !given.services.empty()) {
    return UsageError("run",
                      "--service is for --runtime workerd: the embedded runtime runs one worker (its services "
                      "bindings are refused)");
  }
  if (workerd && given.object_idle_ns) {
    return UsageError("run", "--object-idle-limit is for the embedded runtime (workerd evicts objects itself)");
  }
  if (workerd && (given.leaks || given.cadence_ns || !given.leaks_json.empty())) {
    return UsageError("run",
                      "--leaks, --cadence and --leaks-json are for the embedded runtime; for a worker in "
                      "workerd, start workerd with its inspector (--inspector-addr) and run `heapprof attach "
                      "HOST:PORT --leaks`");
  }
  // The worker's configuration, checked against the runtime: WORKER is its
  // script or its folder (wrangler config and the `main` it names).
  Result<WorkerConfig> config = LoadCheckedConfig("run", given.worker, given.config,
                                                  workerd ? remote::WorkerdRuntimeSupport() : EmbeddedRuntimeSupport());
  if (!config.ok()) return Fail("run", config.status());
  RunArgs args = given;
  args.worker = config->main;
  // A folder, or its wrangler config: the profile is named after the config's name, else the folder's.
  if (args.output.empty() && (fs::is_directory(given.worker) || IsWranglerConfigFile(given.worker))) {
    const std::string folder = fs::absolute(config->dir).lexically_normal().filename().string();
    args.output = (config->name.empty() ? folder.empty() ? std::string("worker") : folder : config->name) + ".pb.gz";
  }
  if (workerd) return RunInWorkerd(args, config.value());
  // --profile NS:NAME names one Durable Object: the window is its isolate's.
  std::string object_target;
  if (const size_t colon = args.profile_target.find(':'); colon != std::string::npos) {
    const std::string ns = args.profile_target.substr(0, colon);
    for (const DurableObjectBinding& b : config->durable_objects) {
      if (b.name != ns) continue;
      if (colon + 1 == args.profile_target.size()) {
        return UsageError("run", "--profile " + args.profile_target +
                                     ": name the object (NS:NAME, NAME its idFromName name or its 64-hex id)");
      }
      if (args.leaks || args.continuous_ns) {
        return UsageError("run", "--profile " + args.profile_target +
                                     ": a Durable Object gets one window, from its creation to the run's end; "
                                     "--leaks and --continuous are for the worker's isolate");
      }
      object_target = args.profile_target;
      args.profile_target.clear();
    }
  }
  // Each replica would have objects of its own: two replicas would hold two
  // different objects of one id.
  if (!config->durable_objects.empty() && args.replicas != 1) {
    return UsageError("run",
                      "--replicas with Durable Objects: each replica would have its own object of every id; run "
                      "one replica");
  }
  if (Status s = CheckObjectIdleLimit(args.object_idle_ns.has_value(), config.value()); !s.ok()) {
    return UsageError("run", s.message());
  }

  Result<Plan> planned = MakePlan(args);
  if (!planned.ok()) return UsageError("run", planned.status().message());
  Plan& plan = planned.value();
  plan.object_target = object_target;
  if (!fs::is_regular_file(args.worker)) {
    return Fail("run",
                fs::exists(args.worker) ? args.worker + " is not a file" : "no such worker file: " + args.worker);
  }
  // Unwritable outputs, and an output that is one of the inputs, are found before the run.
  std::vector<std::string> inputs = {args.worker};
  if (!args.requests_file.empty()) inputs.push_back(args.requests_file);
  if (Status s =
          CheckOutputs(inputs, {plan.output, plan.flamegraph, plan.on_heap_limit, plan.responses_out, plan.leaks_json});
      !s.ok()) {
    return Fail("run", s);
  }
  if (Status s = CheckFallbackDir(args.fallback_dir); !s.ok()) return Fail("run", s);
  // A full filesystem is found now, not after the run (where the size can be told).
  if (Status s = CheckFreeSpace(plan.output, EstimatedProfileBytes(plan.heap_limit_bytes, plan.session.interval_bytes) *
                                                 plan.profiled.size());
      !s.ok()) {
    return Fail("run", s);
  }
  if (!args.requests_file.empty()) {
    Result<std::vector<WorkerRequest>> traffic = ReadRequestsFile(args.requests_file);
    if (!traffic.ok()) return Fail("run", traffic.status());
    plan.traffic = std::move(traffic).value();
  }
  plan.config = std::move(config).value();
  if (Status s = CheckFetchHandler(args.fetch_handler); !s.ok()) return Fail("run", s);
  plan.fetch_handler = args.fetch_handler;

  // Exact attribution: unless --allow-inlining, the optimizing tiers do not
  // inline, so a helper's allocations are not charged to its caller.
  if (Status s = InitializeWorkerV8(args.allow_inlining, args.v8_flags); !s.ok()) return Fail("run", s);
  plan.session.inlining_allowed = InliningAllowedAfterInit();

  if (!args.push.url.empty()) {
    // Pushed as each window closes; written to files too only when -o says where.
    plan.continuous_files = !given.output.empty();
    Result<std::shared_ptr<remote::WindowPusher>> push =
        StartPush("run", args.push, IdentityOf(plan.config.name, args.worker, "embedded"));
    if (!push.ok()) return UsageError("run", push.status().message());
    plan.push = std::move(push).value();
  }

  Result<EngineOutcome> outcome = RunEngine(plan);
  if (plan.push) plan.push->Stop(kPushDrain);  // what is still queued, for at most kPushDrain
  if (!outcome.ok()) return Fail("run", outcome.status());
  int code = ReportRun(plan, outcome.value());
  if (!plan.responses_out.empty()) {
    std::string written;
    if (!DeliverReported(
            "run", "responses file", plan.responses_out, FallbackDirs(plan.fallback_dir),
            [&](const std::string& p) { return WriteFileAtomic(p, outcome->replicas.front().responses); }, &written)) {
      code = std::max(code, int{kExitFailure});
    }
  }
  return code;
}

}  // namespace heapprof::cli
