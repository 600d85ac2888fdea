// Calibration of the leak verdicts (docs/statistics.md, "Growth") over many
// simulated sessions (heapprof/core/leak_simulation.h): how often bounded
// workloads (an LRU cache at steady state, a ring buffer, a cache that fills
// then stops) are called growing, how often a leak of 1 % of the heap limit
// a minute is called growing within 2 minutes, how often its rate's 95 %
// interval holds the true rate, and what the tracker costs per snapshot.
//   leaks_bench [--runs N] [--quick] [--json FILE]
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "heapprof/core/leak_simulation.h"
#include "heapprof/core/leaks.h"

using namespace heapprof;

namespace {

constexpr uint64_t kLimit = 128ull * 1024 * 1024;

SimSite Leak() { return {"leak", SimLifetime::kLeak, 256, 0.01 * kLimit / 60 / 256, 0}; }
SimSite Lru() { return {"lru", SimLifetime::kLru, 1024, 200, 5 * 1024}; }
SimSite Ring() { return {"ring", SimLifetime::kRing, 512, 300, 8192}; }
SimSite Fill() { return {"fill", SimLifetime::kFill, 2048, 4096.0 / 156.0, 4096}; }

struct Rate {
  int hits = 0, runs = 0;
  double p() const { return runs ? static_cast<double>(hits) / runs : 0; }
  double sd() const { return runs ? std::sqrt(p() * (1 - p()) / runs) : 0; }
  std::string text() const { return fmt::format("{}/{} = {:.2f} % (sd {:.2f})", hits, runs, 100 * p(), 100 * sd()); }
};

}  // namespace

int main(int argc, char** argv) {
  int runs = 1000;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      runs = 200;
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json = argv[++i];
    else {
      fmt::print(stderr, "usage: leaks_bench [--runs N] [--quick] [--json FILE]\n");
      return 2;
    }
  }
  SimSessionOptions options;
  options.warmup = 120;
  options.seconds = 120;
  options.cadence = 5;
  std::mt19937_64 seeds(std::random_device{}());
  struct Workload {
    std::string name;
    std::vector<SimSite> sites;
    Rate growing;
  };
  std::vector<Workload> bounded = {{"lru", {Lru()}, {}},
                                   {"ring", {Ring()}, {}},
                                   {"fill", {Fill()}, {}},
                                   {"lru+ring+fill", {Lru(), Ring(), Fill()}, {}}};
  Rate power, coverage;
  double track_seconds = 0;
  size_t snapshots = 0;
  const double true_rate = Leak().objects_per_second * 256 * 60;
  for (int r = 0; r < runs; ++r) {
    for (Workload& w : bounded) {
      SimSession s = SimulateLeakSession(w.sites, options, seeds());
      LeakTracker tracker;
      for (size_t k = 0; k < s.snapshots.size(); ++k) (void)tracker.Add(s.snapshots[k], s.requests[k]);
      Result<LeakReport> report = tracker.Report();
      if (!report.ok()) return 1;
      bool any = false;
      for (const LeakSite& site : report->sites) any = any || site.verdict == LeakVerdict::kGrowing;
      w.growing.hits += any;
      w.growing.runs++;
    }
    SimSession s = SimulateLeakSession({Leak(), Lru(), Ring(), Fill()}, options, seeds());
    LeakTracker tracker;
    const auto begun = std::chrono::steady_clock::now();
    for (size_t k = 0; k < s.snapshots.size(); ++k) (void)tracker.Add(s.snapshots[k], s.requests[k]);
    Result<LeakReport> report = tracker.Report();
    track_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
    snapshots += s.snapshots.size();
    if (!report.ok()) return 1;
    for (const LeakSite& site : report->sites) {
      if (site.frames.empty() || site.frames.front().function_name != "leak") continue;
      power.hits += site.verdict == LeakVerdict::kGrowing;
      const Interval i = site.whole.PerMinuteInterval();
      coverage.hits += i.low <= true_rate && true_rate <= i.high;
    }
    power.runs++;
    coverage.runs++;
  }
  fmt::print(
      "leak verdicts over {} simulated 2-minute sessions each (128 MiB limit, 64 KiB interval, a snapshot "
      "every 5 s, alpha 1 % family-wise):\n",
      runs);
  for (const Workload& w : bounded)
    fmt::print("  false growing, {:<14} {}  (target <= 1 %)\n", w.name, w.growing.text());
  fmt::print("  leak of 1 %/min called growing within 2 min: {}  (target >= 95 %)\n", power.text());
  fmt::print("  its rate's 95 % interval holds the true rate: {}  (target 93-97 %)\n", coverage.text());
  fmt::print("  tracker cost: {:.1f} us per snapshot of ~{} live samples (ingest + one report)\n",
             1e6 * track_seconds / static_cast<double>(snapshots), 600);
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"runs\": " << runs;
    for (const Workload& w : bounded) out << ", \"false_growing_" << w.name << "\": " << w.growing.p();
    out << ", \"power\": " << power.p() << ", \"coverage\": " << coverage.p()
        << ", \"tracker_us_per_snapshot\": " << 1e6 * track_seconds / static_cast<double>(snapshots) << "}\n";
  }
  return 0;
}
