// `heapprof run --runtime workerd`'s flags checked and turned into counts:
// the warm-up, the windows' shares of --requests N, the traffic (run_workerd_parts.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "heapprof/core/estimate.h"
#include "heapprof/core/file_io.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/workload/traffic.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/push_flags.h"
#include "tools/heapprof/run_workerd_parts.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kDefaultWindowNs = 2'000'000'000;
constexpr uint64_t kDefaultWarmupRequests = 200;
// At most this many of --requests N are kept for the in-use window's GC (heapprof/remote/workerd_load.h).
constexpr uint64_t kMaxKicks = 10;

// The flags only the embedded host can honour, refused with the reason.
Status RefuseEmbeddedOnly(const RunArgs& args) {
  auto refuse = [](const std::string& flag, const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("{} does not work with --runtime workerd: {}", flag, why));
  };
  if (args.replicas != 1) return refuse("--replicas", "workerd runs one isolate per worker here");
  if (!args.profile_target.empty()) return refuse("--profile", "there are no replicas to pick from");
  if (args.from_start) {
    return refuse("--from-start", "the DevTools protocol can only attach once workerd has loaded the worker");
  }
  if (std::string e = PushFlagsWithoutPush(args.push); !e.empty()) return Error(ErrorCode::kInvalidArgument, e);
  if (!args.push.url.empty()) {
    return refuse("--push",
                  "it pushes the windows of --continuous; start workerd with its inspector "
                  "(--inspector-addr) and run heapprof attach HOST:PORT --continuous D --push URL");
  }
  if (args.continuous_ns) {
    return refuse("--continuous",
                  "start workerd with its inspector (--inspector-addr) and run heapprof attach "
                  "HOST:PORT --continuous D");
  }
  if (!args.on_heap_limit.empty()) {
    return refuse("--on-heap-limit", "the near-heap-limit hook needs the embedded host's V8 API");
  }
  if (args.heap_limit_bytes && *args.heap_limit_bytes != kDefaultHeapLimitBytes) {
    return refuse("--heap-limit", "workerd sets its own limit");
  }
  if (args.depth != 64) return refuse("--depth", "V8's inspector always records 128 frames");
  return Status::Ok();
}

}  // namespace

int PlanWorkerdRun(const RunArgs& args, WorkerdRunPlan& plan) {
  if (Status s = RefuseEmbeddedOnly(args); !s.ok()) return UsageError("run", s.message());
  Result<remote::RemoteSampleTypes> types = remote::ParseSampleTypes(args.sample_types);
  if (!types.ok()) return UsageError("run", types.status().message());
  if (Result<std::vector<int>> indexes = TableIndexes(args.sample_index); !indexes.ok()) {
    return UsageError("run", indexes.status().message());
  }
  // auto: as the embedded host chooses it for the platform's 128 MB limit, which workerd's isolates share.
  const uint64_t interval = args.interval_bytes.value_or(static_cast<uint64_t>(AutoInterval(kDefaultHeapLimitBytes)));
  uint64_t warmup_requests = args.warmup ? args.warmup->requests : kDefaultWarmupRequests;
  const int64_t warmup_ns = args.warmup ? args.warmup->ns : 0;
  const int windows = types.value() == remote::RemoteSampleTypes::kBoth ? 2 : 1;
  // --requests N, warm-up included, as in the embedded runtime: the windows
  // share what the warm-up leaves, each ending once it has seen its share
  // (or its time is up, with --window or --duration too).
  uint64_t window_requests = 0;
  // Requests kept back for the in-use window's close: workerd runs the GC
  // before the snapshot only once its isolate has a request to serve.
  uint64_t kicks = 0;
  const bool gc_kick = types.value() != remote::RemoteSampleTypes::kAlloc && !args.no_gc;
  if (args.requests > 0) {
    const uint64_t n = static_cast<uint64_t>(args.requests);
    if (warmup_ns > 0) {
      return UsageError("run",
                        "with --runtime workerd, --requests counts the warm-up in requests: give --warmup "
                        "as a number of requests");
    }
    if (warmup_requests >= n) {
      if (args.warmup) {
        return UsageError("run", fmt::format("the warm-up ({} requests) leaves nothing to profile within --requests {}",
                                             warmup_requests, n));
      }
      warmup_requests = n / 10;  // a short run: keep most of it in the windows
    }
    if (gc_kick) kicks = std::clamp<uint64_t>((n - warmup_requests) / 20, 1, kMaxKicks);
    window_requests = (n - warmup_requests - std::min(kicks, n - warmup_requests)) / windows;
    if (window_requests == 0) {
      return UsageError(
          "run", fmt::format("--requests {} leaves no request for each of the {} windows after the "
                             "warm-up of {}{}",
                             n, windows, warmup_requests,
                             kicks > 0 ? fmt::format(" and the {} kept for the in-use window's GC", kicks) : ""));
    }
  }
  int64_t window_ns = kDefaultWindowNs;
  if (args.window_ns) {
    window_ns = *args.window_ns;
  } else if (args.duration_ns) {
    window_ns = (*args.duration_ns - warmup_ns) / windows;
  } else if (window_requests > 0) {
    window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(kNoTimeout).count();  // the count ends it
  }
  if (window_ns <= 0)
    return UsageError("run", "the window must be longer than 0 (check --window, --duration, --warmup)");
  Result<std::vector<WorkerRequest>> traffic = TrafficFromFlags(args);
  if (!traffic.ok()) return UsageError("run", traffic.status().message());
  const double max_failures = args.max_failures.value_or(0.5);
  const std::chrono::milliseconds request_timeout = args.request_timeout.value_or(kDefaultRequestTimeout);
  const std::string output = args.output.empty() ? fs::path(args.worker).stem().string() + ".pb.gz" : args.output;
  if (!fs::is_regular_file(args.worker)) {
    return Fail("run",
                fs::exists(args.worker) ? args.worker + " is not a file" : "no such worker file: " + args.worker);
  }
  std::vector<std::string> inputs = {args.worker};
  if (!args.requests_file.empty()) inputs.push_back(args.requests_file);
  if (Status s = CheckOutputs(inputs, {output, args.flamegraph, args.responses_out}); !s.ok()) return Fail("run", s);
  if (Status s = CheckFallbackDir(args.fallback_dir); !s.ok()) return Fail("run", s);
  if (!args.requests_file.empty()) {
    Result<std::vector<WorkerRequest>> read = ReadRequestsFile(args.requests_file);
    if (!read.ok()) return Fail("run", read.status());
    traffic = std::move(read);
  }

  plan.types = types.value();
  plan.interval = interval;
  plan.warmup_requests = warmup_requests;
  plan.warmup_ns = warmup_ns;
  plan.window_requests = window_requests;
  plan.kicks = kicks;
  plan.gc_kick = gc_kick;
  plan.window_ns = window_ns;
  plan.traffic = std::move(traffic).value();
  plan.max_failures = max_failures;
  plan.request_timeout = request_timeout;
  plan.output = output;
  return kExitOk;
}

}  // namespace heapprof::cli
