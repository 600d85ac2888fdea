// `heapprof run`: flags -> a validated Plan, before V8 starts.
#include "tools/heapprof/run_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "heapprof/core/estimate.h"
#include "heapprof/core/text.h"
#include "heapprof/core/units.h"
#include "heapprof/workload/traffic.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/profile_report.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

// Without --requests, --duration or --window a run serves this many requests
// (a few seconds for the bundled examples), and stops earlier at
// kDefaultDuration so that a slow worker does not keep a newcomer waiting.
constexpr uint64_t kDefaultRequests = 20000;
constexpr int64_t kDefaultDurationNs = 5'000'000'000;
constexpr uint64_t kDefaultWarmupRequests = 200;

Status Bad(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

// --leaks, --cadence, --leaks-json: a leak session replaces the window. What
// cannot go with it is refused here, before V8 starts.
Status PlanLeaks(const RunArgs& args, Plan& plan) {
  if (!args.leaks) {
    if (args.cadence_ns || !args.leaks_json.empty()) return Bad("--cadence and --leaks-json belong to --leaks");
    return Status::Ok();
  }
  if (args.continuous_ns) {
    return Bad("--leaks tracks one session of live snapshots and --continuous writes back-to-back windows: drop one");
  }
  // A leak session sees what stays alive; alloc_* belong to windows.
  if (args.sample_index.empty()) {
    plan.table_indexes = {kInuseSpace};
  } else if (plan.table_indexes.size() != 1 ||
             (plan.table_indexes[0] != kInuseSpace && plan.table_indexes[0] != kInuseObjects)) {
    return Bad("--leaks profiles what stays alive (inuse_space, inuse_objects); --sample-index " + args.sample_index +
               " needs a window (drop --leaks)");
  }
  plan.leaks = true;
  plan.cadence_ns = args.cadence_ns.value_or(0);
  plan.leaks_json = args.leaks_json;
  return Status::Ok();
}

}  // namespace

std::string FileFor(const std::string& path, const std::string& replica, bool only_one) {
  if (only_one) return path;
  fs::path out(path);
  std::string stem = out.filename().string();
  std::string ext;
  for (const char* e : {".pb.gz", ".pb", ".gz", ".html", ".svg", ".json"}) {
    if (stem.size() > std::strlen(e) && stem.ends_with(e)) {
      ext = e;
      stem.resize(stem.size() - ext.size());
      break;
    }
  }
  // Without -o the stem is the worker's, which the replica's name starts with
  // (followed by -N: several replicas here).
  std::string worker_stem = replica.substr(0, replica.rfind('-'));
  std::string safe = internal::FileSafeName(replica);
  std::string name = stem == worker_stem ? safe : fmt::format("{}-{}", stem, safe);
  return (out.parent_path() / (name + ext)).string();
}

Result<std::vector<WorkerRequest>> TrafficFromFlags(const RunArgs& args) {
  if (!args.url.empty()) {
    if (!args.requests_file.empty()) return Bad("--url and --requests-file are alternatives; give one");
    Result<WorkerRequest> request = MakeRequestFromFlags(args.method, args.url, args.headers, args.body);
    if (!request.ok()) return Bad(request.status().message());
    return std::vector<WorkerRequest>{std::move(request).value()};
  }
  if (args.method != "GET" || !args.headers.empty() || !args.body.empty()) {
    return Bad("--method, --header and --body describe the request of --url; give --url too");
  }
  return std::vector<WorkerRequest>{};
}

Result<Plan> MakePlan(const RunArgs& args) {
  Plan plan;
  plan.worker = args.worker;
  bool bounded = false;
  if (args.requests > 0) {
    plan.max_requests = static_cast<uint64_t>(args.requests);
    bounded = true;
  }
  if (args.duration_ns) {
    plan.max_duration_ns = *args.duration_ns;
    bounded = true;
  }
  if (std::string e = PushFlagsWithoutPush(args.push); !e.empty()) return Bad(e);
  if (!args.push.url.empty() && !args.continuous_ns) {
    return Bad(args.leaks ? "--push pushes each window of --continuous D; a leak session has no windows to push"
                          : "--push pushes each window of --continuous D as it closes: give the window's length, "
                            "e.g. --continuous 60s");
  }
  if (args.continuous_ns) {
    plan.continuous_ns = *args.continuous_ns;
    if (args.window_ns) {
      return Bad(
          "--continuous sets the length of each window; drop --window (the run's length is --duration or "
          "--requests)");
    }
    if (!args.flamegraph.empty()) {
      return Bad(
          "--flamegraph writes the page of one window, and --continuous writes a file per window: drop "
          "--flamegraph and open any of them with `heapprof flamegraph FILE`");
    }
  }
  if (args.window_ns) {
    plan.window_ns = *args.window_ns;
    bounded = true;
  }
  if (!bounded) {
    plan.max_requests = kDefaultRequests;
    plan.max_duration_ns = kDefaultDurationNs;
  }

  plan.from_start = args.from_start;
  if (args.from_start) {
    if (args.warmup) {
      return Bad(
          "--from-start opens the window before the worker is loaded, so there is no warm-up; "
          "drop --warmup or --from-start");
    }
  } else if (!args.warmup) {
    plan.warmup_requests = kDefaultWarmupRequests;
  } else {
    plan.warmup_requests = args.warmup->requests;
    plan.warmup_ns = args.warmup->ns;
  }
  if (plan.max_requests != kNoLimit && plan.warmup_requests >= plan.max_requests) {
    if (args.warmup) {
      return Bad(fmt::format("the warm-up ({} requests) leaves nothing to profile within --requests {}",
                             plan.warmup_requests, plan.max_requests));
    }
    plan.warmup_requests = plan.max_requests / 10;  // a short run: keep most of it in the window
  }
  if (plan.max_duration_ns != kForever && plan.warmup_ns >= plan.max_duration_ns) {
    return Bad(fmt::format("the warm-up ({:g} s) leaves nothing to profile within --duration {:g} s",
                           static_cast<double>(plan.warmup_ns) / 1e9, static_cast<double>(plan.max_duration_ns) / 1e9));
  }

  plan.interval_auto = !args.interval_bytes;
  if (args.interval_bytes) plan.session.interval_bytes = *args.interval_bytes;
  plan.session.max_stack_depth = args.depth;
  plan.session.gc_before_snapshot = !args.no_gc;

  const uint64_t heap_limit = args.heap_limit_bytes.value_or(kDefaultHeapLimitBytes);
  plan.heap_limit_bytes = static_cast<size_t>(heap_limit);
  if (plan.interval_auto) plan.session.interval_bytes = static_cast<uint64_t>(AutoInterval(heap_limit));

  Result<std::vector<int>> indexes = TableIndexes(args.sample_index);
  if (!indexes.ok()) return Bad(indexes.status().message());
  plan.table_indexes = std::move(indexes).value();
  if (Status s = PlanLeaks(args, plan); !s.ok()) return s;
  plan.top_rows = static_cast<size_t>(std::max(args.top, 0));
  plan.user_code = args.user_code;

  // Traffic: one repeated request from flags (a requests file is read by the command).
  Result<std::vector<WorkerRequest>> traffic = TrafficFromFlags(args);
  if (!traffic.ok()) return traffic.status();
  plan.traffic = std::move(traffic).value();
  if (args.max_failures) plan.max_failures = *args.max_failures;
  if (args.request_timeout) plan.request_timeout = *args.request_timeout;
  if (args.object_idle_ns) {
    plan.object_idle_limit =
        std::max(std::chrono::milliseconds(1), std::chrono::milliseconds(*args.object_idle_ns / 1'000'000));
  }
  plan.symbolize = !args.no_source_maps;
  // Maps are read from the worker's folder tree and the folders the user names, nowhere else.
  fs::path worker_dir = fs::path(args.worker).parent_path();
  plan.source_maps.roots = {worker_dir.empty() ? std::string(".") : worker_dir.string()};
  plan.source_maps.roots.insert(plan.source_maps.roots.end(), args.source_map_paths.begin(),
                                args.source_map_paths.end());
  plan.flamegraph = args.flamegraph;
  if (!args.responses_out.empty() && args.replicas != 1) {
    return Bad("--responses-out records the responses of one isolate in order; drop --replicas");
  }
  plan.responses_out = args.responses_out;
  plan.on_heap_limit = args.on_heap_limit;
  plan.output = args.output.empty() ? fs::path(args.worker).stem().string() + ".pb.gz" : args.output;
  plan.fallback_dir = args.fallback_dir;

  plan.replicas = ReplicaNames(args.worker, args.replicas);
  std::string stem = fs::path(args.worker).stem().string();
  plan.display_name = args.replicas == 1 ? fs::path(args.worker).filename().string() : stem.empty() ? "worker" : stem;
  if (args.profile_target.empty()) {
    plan.profiled = plan.replicas;
  } else if (std::find(plan.replicas.begin(), plan.replicas.end(), args.profile_target) != plan.replicas.end()) {
    plan.profiled = {args.profile_target};
  } else {
    std::string names;
    for (const std::string& r : plan.replicas) names += (names.empty() ? "" : ", ") + r;
    return Bad(fmt::format("no replica named {} (the replicas are {})", args.profile_target, names));
  }
  return plan;
}

}  // namespace heapprof::cli
