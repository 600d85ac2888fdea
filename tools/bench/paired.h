// Paired overhead measurement for the benchmark programs: a workload timed
// unprofiled, under V8's sampler alone (the floor: StartSamplingHeapProfiler,
// no GC callback, no snapshots) and under heapprof's window, the three arms in
// rotating order on fresh isolates, round after round, until the ratios'
// intervals decide their targets or the budget runs out. A sequential rule:
// the program stops as soon as the data decide, and says "undecided after N
// pairs" otherwise, instead of a fixed count that is too many on a quiet
// machine and too few on a loaded one.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace heapprof::bench {

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Process CPU time: the isolate's thread and V8's helper threads (concurrent
// marking), so a profiler's work counts wherever it runs, and time the
// scheduler gives to other processes does not.
inline double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Distribution-free confidence interval of a median from n values:
// [x_(k), x_(n-k-1)] (0-based, sorted) with the largest k such that
// P(Binomial(n, 1/2) <= k) <= (1 - level) / 2 (the order-statistic interval;
// it assumes only independent pairs). Empty when n is too small for one.
inline std::optional<std::pair<double, double>> MedianInterval(std::vector<double> v, double level = 0.95) {
  std::sort(v.begin(), v.end());
  int n = static_cast<int>(v.size());
  const double tail = (1 - level) / 2;
  double cdf = 0, pmf = std::pow(0.5, n);  // P(X = 0)
  int k = -1;
  for (int i = 0; i < n; ++i) {
    cdf += pmf;
    if (cdf > tail) break;
    k = i;
    pmf = pmf * (n - i) / (i + 1);
  }
  if (k < 0) return std::nullopt;
  return std::pair{v[k], v[n - k - 1]};
}

// The level of the intervals the sequential rule looks at. Looking after many
// rounds makes a 95 % interval decide wrongly more often than 5 % of the time;
// with looks spaced geometrically (every 25 % more pairs, about 20 looks up to
// 1000 pairs) a 99 % interval at each look keeps the overall error near 5 %
// (Pocock's constant for 20 looks is a 0.75 % level per look).
inline constexpr double kSequentialLevel = 0.99;

// "met" when the interval's upper end is <= target, "not met" when its lower
// end is above it, else "undecided"; "" when there are too few values.
inline std::string Verdict(const std::vector<double>& ratios, double target, double level = kSequentialLevel) {
  auto ci = MedianInterval(ratios, level);
  if (!ci) return "";
  return ci->second <= target ? "met" : ci->first > target ? "not met" : "undecided";
}

// The ratio's median, min, max, interval, verdict against `target` and, when
// undecided, the pairs that would decide it at this noise (the interval's
// half-width shrinks as 1/sqrt(pairs)); printed on one line and returned.
inline nlohmann::json RatioSummary(const std::string& what, const std::vector<double>& ratios, double target,
                                   double level = kSequentialLevel) {
  if (ratios.empty()) return nlohmann::json::object();
  auto [mn, mx] = std::minmax_element(ratios.begin(), ratios.end());
  double median = Median(ratios);
  nlohmann::json out = {{"median", median}, {"min", *mn}, {"max", *mx}, {"target", target}, {"level", level}};
  fmt::print("  {:<22} median {:.4f} [min {:.3f}, max {:.3f}]", what, median, *mn, *mx);
  if (auto ci = MedianInterval(ratios, level)) {
    std::string verdict = Verdict(ratios, target, level);
    fmt::print(", {:.0f} % interval [{:.4f}, {:.4f}]: <= {:.3f} {}", 100 * level, ci->first, ci->second, target,
               verdict);
    out["ci"] = {ci->first, ci->second};
    out["verdict"] = verdict;
    if (verdict == "undecided" && median != target) {
      double half = (ci->second - ci->first) / 2;
      double needed = std::ceil(static_cast<double>(ratios.size()) * std::pow(half / std::abs(median - target), 2));
      fmt::print(" after {} pairs (~{:.0f} would decide it)", ratios.size(), needed);
      out["pairs_to_decide"] = needed;
    }
  }
  fmt::print("\n");
  return out;
}

// The arms of one round.
enum class Arm { kUnprofiled, kFloor, kHeapprof };

struct ArmRun {
  double wall_ms = 0;
  double cpu_ms = 0;
  // Filled by the heapprof arm: the window's GC-prologue snapshots (one per GC
  // the ledger saw), their total time and the stacks the window recorded.
  uint64_t gcs = 0;
  int64_t prologue_ns = 0;
  uint64_t stacks = 0;
  // Filled by the floor arm: a GetAllocationProfile at the window's end (the
  // second of two), untimed: V8's own copy of the tree, the part of a ledger snapshot that
  // heapprof cannot cut (-1: not measured).
  int64_t v8_copy_ns = -1;
};

struct SequentialPlan {
  int min_pairs = 10;               // rounds before the first look
  int max_pairs = 400;              // the last round
  double max_seconds = 120;         // wall-clock budget of the whole row
  double target_unprofiled = 1.01;  // heapprof / unprofiled
  double target_floor = 1.005;      // heapprof / floor: within half a point of V8's sampler alone
};

// Runs rounds of the three arms (order rotating through all six permutations,
// so drift and warm-up effects hit each arm alike) until both CPU ratios,
// heapprof / unprofiled and heapprof / floor, are decided at a look, or the
// plan's pairs or seconds run out. Prints the row and returns it as JSON.
inline nlohmann::json FloorOverhead(const std::string& label, const SequentialPlan& plan,
                                    const std::function<ArmRun(Arm)>& run) {
  using Clock = std::chrono::steady_clock;
  static constexpr Arm kOrders[6][3] = {
      {Arm::kUnprofiled, Arm::kFloor, Arm::kHeapprof}, {Arm::kHeapprof, Arm::kUnprofiled, Arm::kFloor},
      {Arm::kFloor, Arm::kHeapprof, Arm::kUnprofiled}, {Arm::kHeapprof, Arm::kFloor, Arm::kUnprofiled},
      {Arm::kUnprofiled, Arm::kHeapprof, Arm::kFloor}, {Arm::kFloor, Arm::kUnprofiled, Arm::kHeapprof}};
  std::vector<double> base, floor_ms, prof, hu_wall, hu_cpu, hf_wall, hf_cpu, fu_wall, fu_cpu;
  uint64_t gcs = 0, stacks = 0;
  int64_t prologue_ns = 0;
  double prof_wall_total = 0;
  std::vector<double> v8_copy_us;
  auto begin = Clock::now();
  int next_look = plan.min_pairs;
  std::string stopped = "budget";
  for (int i = 0; i < plan.max_pairs; ++i) {
    ArmRun r[3];
    for (Arm arm : kOrders[i % 6]) r[static_cast<int>(arm)] = run(arm);
    const ArmRun &u = r[0], &f = r[1], &h = r[2];
    base.push_back(u.wall_ms);
    floor_ms.push_back(f.wall_ms);
    prof.push_back(h.wall_ms);
    hu_wall.push_back(h.wall_ms / u.wall_ms);
    hu_cpu.push_back(h.cpu_ms / u.cpu_ms);
    hf_wall.push_back(h.wall_ms / f.wall_ms);
    hf_cpu.push_back(h.cpu_ms / f.cpu_ms);
    fu_wall.push_back(f.wall_ms / u.wall_ms);
    fu_cpu.push_back(f.cpu_ms / u.cpu_ms);
    gcs += h.gcs;
    prof_wall_total += h.wall_ms;
    if (f.v8_copy_ns >= 0) v8_copy_us.push_back(f.v8_copy_ns / 1000.0);
    prologue_ns += h.prologue_ns;
    stacks = std::max(stacks, h.stacks);
    const int n = i + 1;
    if (n >= next_look) {
      next_look = std::max(n + 1, static_cast<int>(std::ceil(n * 1.25)));
      std::string a = Verdict(hu_cpu, plan.target_unprofiled), b = Verdict(hf_cpu, plan.target_floor);
      if (!a.empty() && a != "undecided" && !b.empty() && b != "undecided") {
        stopped = "decided";
        break;
      }
    }
    // The budget ends a row only once it has had its first look.
    if (n >= plan.min_pairs && std::chrono::duration<double>(Clock::now() - begin).count() > plan.max_seconds) break;
  }
  const int pairs = static_cast<int>(base.size());
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  fmt::print(
      "{}: unprofiled {:.1f} ms, floor {:.1f} ms, heapprof {:.1f} ms (wall, medians), {} rounds in {:.0f} s ({})\n",
      label, Median(base), Median(floor_ms), Median(prof), pairs, seconds,
      stopped == "decided" ? "stopped: decided" : "stopped: budget spent");
  nlohmann::json out = {{"label", label},
                        {"pairs", pairs},
                        {"seconds", seconds},
                        {"stopped", stopped},
                        {"base_ms", Median(base)},
                        {"floor_ms", Median(floor_ms)},
                        {"profiled_ms", Median(prof)}};
  out["cpu_vs_unprofiled"] = RatioSummary("CPU heapprof/unprofiled", hu_cpu, plan.target_unprofiled);
  out["cpu_vs_floor"] = RatioSummary("CPU heapprof/floor", hf_cpu, plan.target_floor);
  out["cpu_floor_vs_unprofiled"] = RatioSummary("CPU floor/unprofiled", fu_cpu, plan.target_unprofiled);
  out["wall_vs_unprofiled"] = RatioSummary("wall heapprof/unprofiled", hu_wall, plan.target_unprofiled);
  out["wall_vs_floor"] = RatioSummary("wall heapprof/floor", hf_wall, plan.target_floor);
  out["wall_floor_vs_unprofiled"] = RatioSummary("wall floor/unprofiled", fu_wall, plan.target_unprofiled);
  if (gcs > 0) {
    double per_gc_us = prologue_ns / 1000.0 / static_cast<double>(gcs);
    double share = prologue_ns / 1e6 / prof_wall_total;
    fmt::print(
        "  heapprof's windows: {:.1f} GCs each, {:.1f} us of ledger snapshot per GC ({:.2f} % of the window's "
        "wall time), up to {} stacks\n",
        static_cast<double>(gcs) / pairs, per_gc_us, 100 * share, stacks);
    out["gcs_per_window"] = static_cast<double>(gcs) / pairs;
    out["ledger_us_per_gc"] = per_gc_us;
    out["ledger_share"] = share;
    out["stacks"] = stacks;
  }
  if (!v8_copy_us.empty()) {
    // The tree grows through a window, so the ledger's mean per GC is over
    // smaller trees than this end-of-window copy.
    fmt::print("  V8's GetAllocationProfile alone at the end of a floor window: {:.1f} us (median)\n",
               Median(v8_copy_us));
    out["v8_copy_us_at_end"] = Median(v8_copy_us);
  }
  std::fflush(stdout);
  return out;
}

}  // namespace heapprof::bench
