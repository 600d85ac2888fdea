// What a profiling window costs a real framework app (a program, not a test):
// one bundled worker (tests/conformance/apps/<app>, bundled as the conformance
// suite bundles it) answers its requests file in the embedded runtime, the
// runtime `heapprof run` serves with, timed three ways on fresh runtimes:
// unprofiled, under V8's sampler alone (the floor) and in heapprof's window,
// in rounds until the ratios' intervals decide (tools/bench/paired.h). The
// heapprof arm also reports its windows' GCs and the ledger's time per GC.
// Without REQUESTS, heapprof's synthetic request stream.
//   apps_bench BUNDLE [REQUESTS] [--name NAME] [--flag FLAG]... [--fetch-handler FILE] [--requests N]
//              [--warmup N] [--interval BYTES]... [--pairs N] [--max-seconds S] [--allow-inlining] [--json FILE]
#include <v8-profiler.h>
#include <v8.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "heapprof/core/file_io.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"
#include "heapprof/workload/traffic.h"
#include "tools/bench/paired.h"

using namespace heapprof;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  std::string bundle, requests_file, name, fetch_handler, json;
  std::vector<std::string> flags;
  std::vector<uint64_t> intervals;
  int requests = 1500, warmup = 200, pairs = 400;
  double max_seconds = 60;
  bool allow_inlining = false;
};

[[noreturn]] void Fail(const std::string& what) {
  fmt::print(stderr, "apps_bench: {}\n", what);
  std::exit(1);
}

class AppRunner {
 public:
  AppRunner(const Args& args, std::vector<WorkerRequest> requests) : args_(args), requests_(std::move(requests)) {
    options_.name = args.name;
    options_.console = [](std::string_view, std::string_view) {};
    options_.compatibility_flags = args.flags;
    options_.fetch_handler = args.fetch_handler;
  }

  // A fresh runtime: load, warm up, then time `requests` requests in the arm.
  bench::ArmRun Run(bench::Arm arm, uint64_t interval) {
    Result<WorkerRuntime> runtime = WorkerRuntime::Create(options_);
    if (!runtime.ok()) Fail(runtime.status().message());
    if (Status s = runtime->LoadFile(args_.bundle); !s.ok()) Fail(s.message());
    size_t next = 0;
    auto serve = [&](int n) {
      for (int i = 0; i < n; ++i) {
        Result<WorkerResponse> r = runtime->Dispatch(requests_[next++ % requests_.size()]);
        if (!r.ok()) ++failed_;
        ++served_;
      }
    };
    serve(args_.warmup);
    v8::Isolate* isolate = runtime->isolate().get();
    std::optional<Session> session;
    if (arm == bench::Arm::kHeapprof) {
      SessionOptions o;
      o.interval_bytes = interval;
      Result<Session> s = runtime->StartSession(o);
      if (!s.ok()) Fail(s.status().message());
      session.emplace(std::move(*s));
    } else if (arm == bench::Arm::kFloor) {
      v8::Isolate::Scope scope(isolate);
      // The flags heapprof's ledger starts the sampler with, and nothing else.
      if (!isolate->GetHeapProfiler()->StartSamplingHeapProfiler(interval, 64, v8::HeapProfiler::kSamplingNoFlags)) {
        Fail("V8's sampler did not start");
      }
    }
    double cpu = bench::CpuMs();
    auto begin = Clock::now();
    serve(args_.requests);
    bench::ArmRun t{std::chrono::duration<double, std::milli>(Clock::now() - begin).count(), bench::CpuMs() - cpu};
    v8::Isolate::Scope scope(isolate);
    v8::HandleScope handles(isolate);
    if (session) {
      Result<RawSnapshot> raw = std::move(*session).Stop();
      if (!raw.ok()) Fail(raw.status().message());
      t.gcs = raw->info.prologue_snapshots;
      t.prologue_ns = raw->info.prologue_nanos;
      t.stacks = raw->stacks.size() - 1;
    } else if (arm == bench::Arm::kFloor) {
      // Twice, timing the second: the first also pays one-time work (a
      // script's line ends), which the ledger pays once per window.
      std::unique_ptr<v8::AllocationProfile> first(isolate->GetHeapProfiler()->GetAllocationProfile());
      auto copy_begin = Clock::now();
      std::unique_ptr<v8::AllocationProfile> copy(isolate->GetHeapProfiler()->GetAllocationProfile());
      t.v8_copy_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - copy_begin).count();
      isolate->GetHeapProfiler()->StopSamplingHeapProfiler();
    }
    return t;
  }

  uint64_t served() const { return served_; }
  uint64_t failed() const { return failed_; }

 private:
  const Args& args_;
  std::vector<WorkerRequest> requests_;
  WorkerOptions options_;
  uint64_t served_ = 0, failed_ = 0;
};

Args Parse(int argc, char** argv) {
  Args a;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Fail(arg + " needs a value");
      return argv[++i];
    };
    auto number = [&](double low) {
      std::string v = value();
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(x >= low)) Fail(fmt::format("{} {}: not a number >= {}", arg, v, low));
      return x;
    };
    if (arg == "--name")
      a.name = value();
    else if (arg == "--flag")
      a.flags.push_back(value());
    else if (arg == "--fetch-handler")
      a.fetch_handler = value();
    else if (arg == "--requests")
      a.requests = static_cast<int>(number(1));
    else if (arg == "--warmup")
      a.warmup = static_cast<int>(number(0));
    else if (arg == "--interval")
      a.intervals.push_back(static_cast<uint64_t>(number(1024)));
    else if (arg == "--pairs")
      a.pairs = static_cast<int>(number(1));
    else if (arg == "--max-seconds")
      a.max_seconds = number(1);
    else if (arg == "--allow-inlining")
      a.allow_inlining = true;
    else if (arg == "--json")
      a.json = value();
    else if (!arg.empty() && arg[0] == '-')
      Fail("unknown option " + arg);
    else
      positional.push_back(arg);
  }
  if (positional.empty() || positional.size() > 2) {
    fmt::print(stderr,
               "usage: apps_bench BUNDLE [REQUESTS] [--name NAME] [--flag FLAG]... [--fetch-handler FILE] "
               "[--requests N] [--warmup N] [--interval BYTES]... [--pairs N] [--max-seconds S] [--allow-inlining] "
               "[--json FILE]\n");
    std::exit(2);
  }
  a.bundle = positional[0];
  if (positional.size() == 2) a.requests_file = positional[1];
  if (a.name.empty()) a.name = "worker";
  if (a.intervals.empty()) a.intervals = {512 * 1024, 64 * 1024};
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each row as it is decided, also into a file
  Args args = Parse(argc, argv);
  std::vector<WorkerRequest> requests;
  if (args.requests_file.empty()) {
    for (uint64_t i = 0; i < 1000; ++i) requests.push_back(SyntheticRequest(i));
  } else {
    Result<std::vector<WorkerRequest>> parsed = ReadRequestsFile(args.requests_file);
    if (!parsed.ok()) Fail(parsed.status().message());
    requests = std::move(*parsed);
  }
  // As `heapprof run` starts V8: inlining off unless asked, so the windows
  // see what a default run sees.
  V8InitOptions init;
  init.flags = WorkerRuntimeV8Flags(args.allow_inlining);
  if (Status s = InitializeV8(init); !s.ok()) Fail(s.message());
  Result<std::string> bundle = ReadFileBytes(args.bundle);
  if (!bundle.ok()) Fail(bundle.status().message());
  fmt::print("{}: {} B bundle, {} requests in the file, {} timed per run after {} of warm-up (V8 {})\n", args.name,
             bundle->size(), requests.size(), args.requests, args.warmup, V8RuntimeVersion());
  AppRunner runner(args, std::move(requests));
  nlohmann::json out = {{"app", args.name},
                        {"bundle_bytes", bundle->size()},
                        {"requests_per_run", args.requests},
                        {"rows", nlohmann::json::array()}};
  bench::SequentialPlan plan;
  plan.max_pairs = args.pairs;
  plan.min_pairs = std::min(plan.min_pairs, args.pairs);
  plan.max_seconds = args.max_seconds;
  for (uint64_t interval : args.intervals) {
    nlohmann::json row = bench::FloorOverhead(fmt::format("{} @ {} KiB", args.name, interval / 1024), plan,
                                              [&](bench::Arm arm) { return runner.Run(arm, interval); });
    row["interval_bytes"] = interval;
    out["rows"].push_back(row);
  }
  if (runner.failed() == runner.served()) Fail("every request failed: the app did not run");
  out["failed_share"] = static_cast<double>(runner.failed()) / static_cast<double>(runner.served());
  fmt::print("  {} of {} requests threw or rejected (the requests file's own mix)\n", runner.failed(), runner.served());
  if (!args.json.empty()) std::ofstream(args.json) << out.dump(2) << "\n";
  return 0;
}
