// Collector benchmarks (a program, not a test): prints ratios measured in the
// same run against a baseline, because these machines are noisy.
//   1. run-time overhead of a profiled window vs unprofiled, interleaved pairs
//   2. cost of one GC-prologue snapshot as a function of tree size
//   3. ledger bytes per recorded sample
//   4. isolate held at Stop, with and without the pre-snapshot GC (64 MB heap)
//   5. accuracy: estimated vs true bytes for known allocation sizes
//   6. calibration: how often the 95 % sampling-error interval of a value
//      contains the true value, over repeated windows at two intervals
// Usage: collector_bench [--quick] [--pairs N] [--overhead-only] [--calibration-only] [--prologue-only] [--windows N]
// [--json FILE]
// --pairs: interleaved pairs of the overhead rows (default 15, --quick 5);
// the overhead rows print the 95 % confidence interval of the median ratio.
// --windows: repeated windows per calibration row (default 100, --quick 40).
#include <v8.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
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

using namespace heapprof;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

// Process CPU time: the isolate's thread and V8's helper threads (concurrent
// marking), so a profiler's work counts wherever it runs, and time the
// scheduler gives to other processes does not.
double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

struct Timing {
  double wall_ms = 0;
  double cpu_ms = 0;
};

// One timed run of the workload on a fresh isolate, profiled or not.
Timing TimedRun(bool profiled, uint64_t interval, int requests) {
  Env env;
  v8::Isolate::Scope scope(env.iso.get());
  v8::HandleScope handles(env.iso.get());
  env.Run(kWorkload);
  env.Run("serve(200)");  // warm-up: compile and optimize before timing
  std::optional<Session> session;
  if (profiled) {
    SessionOptions o;
    o.interval_bytes = interval;
    session.emplace(std::move(Session::Start(env.iso.get(), o).value()));
  }
  double cpu = CpuMs();
  auto begin = Clock::now();
  env.Run(fmt::format("serve({})", requests));
  Timing t{Ms(Clock::now() - begin), CpuMs() - cpu};
  if (session) (void)std::move(*session).Stop();
  return t;
}

// Distribution-free 95 % confidence interval of a median from n sorted
// values: [x_(k), x_(n-k-1)] (0-based) with the largest k such that
// P(Binomial(n, 1/2) <= k) <= 2.5 % (the order-statistic interval; it
// assumes only independent pairs). Empty below 6 values, where none exists.
std::optional<std::pair<double, double>> MedianInterval(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  int n = static_cast<int>(v.size());
  double cdf = 0, pmf = std::pow(0.5, n);  // P(X = 0)
  int k = -1;
  for (int i = 0; i < n; ++i) {
    cdf += pmf;
    if (cdf > 0.025) break;
    k = i;
    pmf = pmf * (n - i) / (i + 1);
  }
  if (k < 0) return std::nullopt;
  return std::pair{v[k], v[n - k - 1]};
}

// The ratio's median, its 95 % interval and the verdict against the 1 %
// target: decided when the interval lies on one side of 1.01. Otherwise the
// interval's half-width shrinks as 1/sqrt(pairs): about
// pairs * (half-width / |median - 1.01|)^2 pairs would decide it.
nlohmann::json RatioSummary(const char* what, const std::vector<double>& ratios) {
  constexpr double kTarget = 1.01;
  auto [mn, mx] = std::minmax_element(ratios.begin(), ratios.end());
  double median = Median(ratios);
  nlohmann::json out = {{"median", median}, {"min", *mn}, {"max", *mx}};
  fmt::print("  {} ratio median {:.4f} [min {:.3f}, max {:.3f}]", what, median, *mn, *mx);
  if (auto ci = MedianInterval(ratios)) {
    std::string verdict = ci->second <= kTarget ? "met" : ci->first > kTarget ? "not met" : "undecided";
    fmt::print(", 95 % interval of the median [{:.4f}, {:.4f}]: <= {:.2f} {}", ci->first, ci->second, kTarget, verdict);
    out["ci95"] = {ci->first, ci->second};
    out["verdict"] = verdict;
    if (verdict == "undecided" && median != kTarget) {
      double half = (ci->second - ci->first) / 2;
      double needed = std::ceil(static_cast<double>(ratios.size()) * std::pow(half / std::abs(median - kTarget), 2));
      fmt::print(" (about {:.0f} pairs would decide it at this noise)", needed);
      out["pairs_to_decide"] = needed;
    }
  }
  fmt::print("\n");
  return out;
}

nlohmann::json Overhead(int pairs, int requests, uint64_t interval) {
  std::vector<double> base, prof, wall_ratios, cpu_ratios;
  for (int i = 0; i < pairs; ++i) {
    // Alternate the order inside each pair so drift hits both sides.
    Timing a, b;
    if (i % 2 == 0) {
      a = TimedRun(false, interval, requests);
      b = TimedRun(true, interval, requests);
    } else {
      b = TimedRun(true, interval, requests);
      a = TimedRun(false, interval, requests);
    }
    base.push_back(a.wall_ms);
    prof.push_back(b.wall_ms);
    wall_ratios.push_back(b.wall_ms / a.wall_ms);
    cpu_ratios.push_back(b.cpu_ms / a.cpu_ms);
  }
  fmt::print("overhead @ {:>4} KiB: unprofiled {:7.1f} ms, profiled {:7.1f} ms (wall, medians) over {} pairs\n",
             interval / 1024, Median(base), Median(prof), pairs);
  nlohmann::json wall = RatioSummary("wall", wall_ratios);
  nlohmann::json cpu = RatioSummary("CPU ", cpu_ratios);
  return {{"interval_bytes", interval},
          {"pairs", pairs},
          {"base_ms", Median(base)},
          {"profiled_ms", Median(prof)},
          {"ratio_median", wall["median"]},
          {"ratio_min", wall["min"]},
          {"ratio_max", wall["max"]},
          {"wall_ratio", wall},
          {"cpu_ratio", cpu}};
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
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json_path = argv[++i];
    else if (std::strcmp(argv[i], "--pairs") == 0 && i + 1 < argc)
      pairs = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--overhead-only") == 0)
      overhead_only = true;
    else if (std::strcmp(argv[i], "--calibration-only") == 0)
      calibration_only = true;
    else if (std::strcmp(argv[i], "--prologue-only") == 0)
      prologue_only = true;
    else if (std::strcmp(argv[i], "--windows") == 0 && i + 1 < argc)
      windows = std::atoi(argv[++i]);
    else {
      fmt::print(stderr,
                 "usage: collector_bench [--quick] [--pairs N] [--overhead-only] [--calibration-only] "
                 "[--prologue-only] [--windows N] [--json FILE]\n");
      return 2;
    }
  }
  if (pairs < 0) pairs = quick ? 5 : 15;
  if (pairs < 1) {
    fmt::print(stderr, "collector_bench: --pairs needs a positive number\n");
    return 2;
  }
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
    out["overhead"] = {Overhead(pairs, requests, 512 * 1024), Overhead(pairs, requests, 64 * 1024)};
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
