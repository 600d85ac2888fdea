// Collector benchmarks (a program, not a test): prints ratios measured in the
// same run against a baseline, because these machines are noisy.
//   1. run-time overhead of a profiled window vs unprofiled and vs V8's sampler
//      alone (the floor), rounds of the three until the intervals decide
//   2. cost of one GC-prologue snapshot as a function of tree size
//   3. ledger bytes per recorded sample
//   4. isolate held at Stop, with and without the pre-snapshot GC (64 MB heap)
//   5. accuracy: estimated vs true bytes for known allocation sizes
//   6. calibration: how often the 95 % sampling-error interval of a value
//      contains the true value, over repeated windows at two intervals
// Usage: collector_bench [--quick] [--pairs N] [--max-seconds S] [--overhead-only] [--calibration-only]
// [--prologue-only] [--windows N] [--json FILE]
// --pairs / --max-seconds: the most rounds and seconds an overhead row may
// take before it says "undecided" (default 400 / 120 s, --quick 40 / 20 s);
// the rows stop earlier once their intervals decide (tools/bench/paired.h).
// --windows: repeated windows per calibration row (default 100, --quick 40).
#include <v8-profiler.h>
#include <v8.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "heapprof/core/estimate.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/core/report.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"
#include "tools/bench/paired.h"

using namespace heapprof;
using bench::Median;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// An alloc-heavy request handler: JSON garbage plus a small retained cache.
constexpr const char* kWorkload = R"JS(
const cache = new Map();
function buildPayload(i) {
  const items = [];
  for (let j = 0; j < 40; ++j) items.push({ id: i * 40 + j, name: 'item-' + j, tags: ['a', 'b', String(j)] });
  return { request: i, items };
}
function handle(i) {
  const body = JSON.stringify(buildPayload(i));
  const parsed = JSON.parse(body);
  if (i % 50 === 0) cache.set(i, parsed.items.slice(0, 4));
  return body.length;
}
function serve(n) { let total = 0; for (let i = 0; i < n; ++i) total += handle(i); return total; }
)JS";

struct Env {
  Isolate iso;
  explicit Env(size_t heap_mb = 256) : iso(Make(heap_mb)) {}
  static Isolate Make(size_t heap_mb) {
    IsolateOptions o;
    o.heap_limit_bytes = heap_mb * 1024 * 1024;
    return std::move(Isolate::Create(o).value());
  }
  void Run(const std::string& js) {
    auto r = iso.RunScript(js, "bench.js");
    if (!r.ok()) {
      fmt::print(stderr, "script failed: {}\n", r.status().message());
      std::exit(1);
    }
  }
};

// One timed run of the workload on a fresh isolate: unprofiled, under V8's
// sampler alone (the floor), or in heapprof's window.
bench::ArmRun TimedRun(bench::Arm arm, uint64_t interval, int requests) {
  Env env;
  v8::Isolate* isolate = env.iso.get();
  v8::Isolate::Scope scope(isolate);
  v8::HandleScope handles(isolate);
  env.Run(kWorkload);
  env.Run("serve(200)");  // warm-up: compile and optimize before timing
  std::optional<Session> session;
  if (arm == bench::Arm::kHeapprof) {
    SessionOptions o;
    o.interval_bytes = interval;
    session.emplace(std::move(Session::Start(isolate, o).value()));
  } else if (arm == bench::Arm::kFloor) {
    // The flags heapprof's ledger starts the sampler with, and nothing else.
    if (!isolate->GetHeapProfiler()->StartSamplingHeapProfiler(interval, 64, v8::HeapProfiler::kSamplingNoFlags)) {
      fmt::print(stderr, "V8's sampler did not start\n");
      std::exit(1);
    }
  }
  double cpu = bench::CpuMs();
  auto begin = Clock::now();
  env.Run(fmt::format("serve({})", requests));
  bench::ArmRun t{Ms(Clock::now() - begin), bench::CpuMs() - cpu};
  if (session) {
    auto raw = std::move(*session).Stop();
    if (raw.ok()) {
      t.gcs = raw->info.prologue_snapshots;
      t.prologue_ns = raw->info.prologue_nanos;
      t.stacks = raw->stacks.size() - 1;
    }
  }
  if (arm == bench::Arm::kFloor) {
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

nlohmann::json Overhead(const bench::SequentialPlan& plan, int requests, uint64_t interval) {
  nlohmann::json out = bench::FloorOverhead(fmt::format("overhead @ {:>4} KiB", interval / 1024), plan,
                                            [&](bench::Arm arm) { return TimedRun(arm, interval, requests); });
  out["interval_bytes"] = interval;
  return out;
}

// A tree of about `functions` nodes: one distinct allocating function each.
nlohmann::json PrologueCost(int functions) {
  Env env;
  v8::Isolate::Scope scope(env.iso.get());
  v8::HandleScope handles(env.iso.get());
  std::string js = "const fns = [];\n";
  for (int i = 0; i < functions; ++i)
    js += fmt::format("fns.push(function f{}() {{ return new Array(1024).fill({}); }});\n", i, i);
  js +=
      "globalThis.keepAlive = [];\n"
      "function touchAll(rounds) { for (let r = 0; r < rounds; ++r) for (const f of fns) keepAlive.push(f()); }\n"
      "function churn(n) { let s = 0; for (let i = 0; i < n; ++i) s += new Array(64).fill(i).length; return s; }\n";
  env.Run(js);
  SessionOptions o;
  o.interval_bytes = 2048;  // each 8 KiB allocation is sampled: the tree reaches its size
  auto session = Session::Start(env.iso.get(), o);
  env.Run("touchAll(1)");
  uint64_t before = session->prologue_snapshots();
  env.Run("churn(200000)");
  auto raw = std::move(session.value()).Stop().value();
  uint64_t snaps = raw.info.prologue_snapshots;
  double per_us = snaps ? raw.info.prologue_nanos / 1000.0 / snaps : 0;
  fmt::print(
      "prologue snapshot: tree of {:>6} stacks, {:>6} samples: {:8.1f} us per snapshot ({} snapshots, {} during "
      "churn)\n",
      raw.stacks.size() - 1, raw.samples.size(), per_us, snaps, snaps - before);
  return {{"functions", functions},
          {"stacks", raw.stacks.size() - 1},
          {"samples", raw.samples.size()},
          {"us_per_snapshot", per_us},
          {"snapshots", snaps}};
}

nlohmann::json LedgerMemory() {
  Env env;
  v8::Isolate::Scope scope(env.iso.get());
  v8::HandleScope handles(env.iso.get());
  env.Run(kWorkload);
  SessionOptions o;
  o.interval_bytes = 8 * 1024;
  auto session = Session::Start(env.iso.get(), o);
  env.Run("serve(20000)");
  auto raw = std::move(session.value()).Stop().value();
  uint64_t ledger_total = 0;
  for (const std::string& n : raw.info.notes) {
    if (n.rfind("ledger_bytes: ", 0) == 0) ledger_total = std::stoull(n.substr(14));
  }
  // The ledger proper is 8 bytes per sample id; the rest is interned stacks.
  double per_sample_entry = 8.0;
  double per_sample_all = raw.samples.empty() ? 0 : double(ledger_total) / raw.samples.size();
  fmt::print(
      "ledger memory: {} samples, {} stacks; {:.0f} bytes/sample for the ledger entry, {:.1f} bytes/sample "
      "including interned stacks and frames\n",
      raw.samples.size(), raw.stacks.size(), per_sample_entry, per_sample_all);
  return {{"samples", raw.samples.size()},
          {"entry_bytes_per_sample", per_sample_entry},
          {"total_bytes_per_sample", per_sample_all}};
}

nlohmann::json StopHold(bool gc, int reps) {
  std::vector<double> stops;
  for (int r = 0; r < reps; ++r) {
    Env env(256);
    v8::Isolate::Scope scope(env.iso.get());
    v8::HandleScope handles(env.iso.get());
    env.Run(kWorkload);
    // About 64 MB of live objects.
    env.Run("globalThis.big = []; for (let i = 0; i < 400 * 1024; ++i) big.push({ a: i, b: 'x' + i, c: [i, i] });");
    SessionOptions o;
    o.gc_before_snapshot = gc;
    auto session = Session::Start(env.iso.get(), o);
    env.Run("serve(2000)");
    v8::HeapStatistics hs;
    env.iso.get()->GetHeapStatistics(&hs);
    auto begin = Clock::now();
    auto raw = std::move(session.value()).Stop();
    stops.push_back(Ms(Clock::now() - begin));
    if (r == 0) fmt::print("  (heap used at stop: {:.1f} MB)\n", hs.used_heap_size() / 1048576.0);
  }
  fmt::print("isolate held at Stop, {} pre-snapshot GC: median {:.2f} ms over {} runs\n", gc ? "with" : "without",
             Median(stops), reps);
  return {{"gc", gc}, {"median_ms", Median(stops)}, {"runs", reps}};
}

nlohmann::json Accuracy(uint64_t interval) {
  Env env(512);
  v8::Isolate::Scope scope(env.iso.get());
  v8::HandleScope handles(env.iso.get());
  env.Run(
      "globalThis.kept = []; globalThis.ring = new Array(8);"
      "function retain(n) { for (let i = 0; i < n; ++i) kept.push(new Array(1024).fill(0)); }"
      "function garbage(n) { for (let i = 0; i < n; ++i) ring[i & 7] = new Array(1024).fill(0); }");
  SessionOptions o;
  o.interval_bytes = interval;
  auto session = Session::Start(env.iso.get(), o);
  env.Run("retain(4096); garbage(32768);");
  Profile p = BuildProfile(std::move(session.value()).Stop().value());
  auto cum = [&](std::string_view fn, int idx) {
    int64_t t = 0;
    for (const Sample& s : p.samples)
      for (LocationId l : s.locations)
        if (p.FunctionName(l) == fn) {
          t += s.values[idx];
          break;
        }
    return double(t);
  };
  const double array_bytes = 32 + 16 + 8 * 1024;
  double r_true = 4096 * array_bytes, g_true = 32768 * array_bytes;
  double r_est = cum("retain", kInuseSpace), g_est = cum("garbage", kAllocSpace);
  fmt::print(
      "accuracy @ {:>4} KiB: retained inuse {:.1f} MB est / {:.1f} MB true ({:+.1f} %), garbage alloc {:.1f} MB "
      "est / {:.1f} MB true ({:+.1f} %)\n",
      interval / 1024, r_est / 1e6, r_true / 1e6, 100 * (r_est / r_true - 1), g_est / 1e6, g_true / 1e6,
      100 * (g_est / g_true - 1));
  return {{"interval_bytes", interval}, {"retained_ratio", r_est / r_true}, {"garbage_ratio", g_est / g_true}};
}

// Three workloads whose true bytes are known (arrays of n zeros are a 32-byte
// JSArray plus a 16-byte-header FixedArray of 8-byte slots, as in Accuracy):
// retained large arrays (inuse), garbage large arrays and garbage small ones
// (alloc). Each window's 95 % interval for the function's value either
// contains the truth or not; coverage should be 90-98 %.
nlohmann::json Calibration(uint64_t interval, int windows, bool quick) {
  Env env(512);
  v8::Isolate::Scope scope(env.iso.get());
  v8::HandleScope handles(env.iso.get());
  env.Run(
      "globalThis.kept = []; globalThis.ring = new Array(8);"
      "function retain(n) { for (let i = 0; i < n; ++i) kept.push(new Array(1024).fill(0)); }"
      "function garbage(n) { for (let i = 0; i < n; ++i) ring[i & 7] = new Array(1024).fill(0); }"
      "function small(n) { for (let i = 0; i < n; ++i) ring[i & 7] = new Array(16).fill(0); }");
  const int retained = quick ? 2048 : 4096, large = quick ? 8192 : 32768, smalls = quick ? 100000 : 400000;
  struct Workload {
    const char* function;
    int sample_index;
    double truth;
    int hits = 0;
    double ratio_sum = 0, samples_sum = 0;
  } work[] = {{"retain", kInuseSpace, retained * (48.0 + 8 * 1024)},
              {"garbage", kAllocSpace, large * (48.0 + 8 * 1024)},
              {"small", kAllocSpace, smalls * (48.0 + 8 * 16)}};
  SessionOptions o;
  o.interval_bytes = interval;
  for (int w = 0; w < windows; ++w) {
    env.Run("kept = [];");
    auto session = Session::Start(env.iso.get(), o);
    if (!session.ok()) {
      fmt::print(stderr, "calibration: {}\n", session.status().message());
      std::exit(1);
    }
    env.Run(fmt::format("retain({}); garbage({}); small({});", retained, large, smalls));
    Profile p = BuildProfile(std::move(session.value()).Stop().value());
    for (Workload& k : work) {
      auto model = SamplingModel::For(p, k.sample_index);
      if (!model) continue;
      SampledValue v;
      for (const FunctionTotal& t : FunctionTotals(p, k.sample_index)) {
        if (t.name == k.function) v = t.cum_sampling;
      }
      Interval range = ValueInterval(v, model->unseen_weight());
      k.hits += range.low <= k.truth && k.truth <= range.high;
      k.ratio_sum += v.value / k.truth;
      k.samples_sum += v.samples;
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const Workload& k : work) {
    double coverage = 100.0 * k.hits / windows;
    fmt::print("  {:<8} {:<12} {:>4} KiB  {:>7}  {:>6.1f} %  {:>13.3f}  {:>12.0f}\n", k.function,
               k.sample_index == kInuseSpace ? "inuse_space" : "alloc_space", interval / 1024, windows, coverage,
               k.ratio_sum / windows, k.samples_sum / windows);
    rows.push_back({{"workload", k.function},
                    {"interval_bytes", interval},
                    {"windows", windows},
                    {"coverage_percent", coverage},
                    {"mean_ratio", k.ratio_sum / windows},
                    {"mean_samples", k.samples_sum / windows}});
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  bool overhead_only = false;
  bool calibration_only = false;
  bool prologue_only = false;
  int windows = -1;
  int pairs = -1;
  double max_seconds = -1;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json_path = argv[++i];
    else if (std::strcmp(argv[i], "--pairs") == 0 && i + 1 < argc)
      pairs = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--max-seconds") == 0 && i + 1 < argc)
      max_seconds = std::atof(argv[++i]);
    else if (std::strcmp(argv[i], "--overhead-only") == 0)
      overhead_only = true;
    else if (std::strcmp(argv[i], "--calibration-only") == 0)
      calibration_only = true;
    else if (std::strcmp(argv[i], "--prologue-only") == 0)
      prologue_only = true;
    else if (std::strcmp(argv[i], "--windows") == 0 && i + 1 < argc)
      windows = std::atoi(argv[++i]);
    else {
      fmt::print(
          stderr,
          "usage: collector_bench [--quick] [--pairs N] [--max-seconds S] [--overhead-only] [--calibration-only] "
          "[--prologue-only] [--windows N] [--json FILE]\n");
      return 2;
    }
  }
  if (pairs < 0) pairs = quick ? 40 : 400;
  if (max_seconds < 0) max_seconds = quick ? 20 : 120;
  if (pairs < 1 || !(max_seconds > 0)) {
    fmt::print(stderr, "collector_bench: --pairs and --max-seconds need positive numbers\n");
    return 2;
  }
  bench::SequentialPlan plan;
  plan.max_pairs = pairs;
  plan.min_pairs = std::min(pairs, plan.min_pairs);
  plan.max_seconds = max_seconds;
  if (!InitializeV8().ok()) return 1;
  fmt::print("heapprof collector benchmarks (V8 {}, strategy {})\n", V8RuntimeVersion(), CompiledStrategy());
  int requests = quick ? 3000 : 6000;
  nlohmann::json out;
  if (prologue_only) {
    for (int n : {100, 1000, 10000}) out["prologue"].push_back(PrologueCost(n));
    if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
    return 0;
  }
  if (!calibration_only) {
    out["overhead"] = {Overhead(plan, requests, 512 * 1024), Overhead(plan, requests, 64 * 1024)};
  }
  if (overhead_only) {
    if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
    return 0;
  }
  if (!calibration_only) {
    for (int n : {100, 1000, 10000}) out["prologue"].push_back(PrologueCost(n));
    out["ledger_memory"] = LedgerMemory();
    out["stop_hold"] = {StopHold(true, quick ? 3 : 7), StopHold(false, quick ? 3 : 7)};
    out["accuracy"] = {Accuracy(512 * 1024), Accuracy(64 * 1024)};
  }
  fmt::print("calibration: how often the 95 % interval of a value contains the true value (target 90-98 %)\n");
  fmt::print("  {:<8} {:<12} {:>8}  {:>7}  {:>8}  {:>13}  {:>12}\n", "workload", "value", "interval", "windows",
             "coverage", "mean est/true", "mean samples");
  out["calibration"] = nlohmann::json::array();
  for (uint64_t interval : {512 * 1024, 64 * 1024}) {
    for (auto& row : Calibration(interval, windows > 0 ? windows : quick ? 40 : 100, quick))
      out["calibration"].push_back(row);
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
