// Google Benchmark's console table, then the program's own lines of ratios:
// the reporter keeps each run's times by argument and benchmark name
// ("BM_Encode/10000" -> ["10000"]["BM_Encode"]) and hands them to `print`
// once the table is done. With --benchmark_repetitions the median of the
// repetitions stands for the benchmark (these machines are noisy).
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace heapprof::bench {

struct RunTiming {
  double wall_ms = 0;
  double cpu_ms = 0;
  std::map<std::string, double> counters;
};
// argument -> benchmark name -> timing
using RunsByArgument = std::map<std::string, std::map<std::string, RunTiming>>;

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  explicit RatioReporter(std::function<void(const RunsByArgument&)> print) : print_(std::move(print)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type != Run::RT_Iteration && !median) continue;
      std::string name = run.run_name.str();
      size_t slash = name.find('/');
      std::string argument = name.substr(slash + 1);
      std::string benchmark = name.substr(0, slash);
      if (!median && medians_.count(name) > 0) continue;
      if (median) medians_.insert(name);
      RunTiming& t = runs_[argument][benchmark];
      t.wall_ms = run.GetAdjustedRealTime();
      t.cpu_ms = run.GetAdjustedCPUTime();
      for (const auto& [key, counter] : run.counters) t.counters[key] = counter.value;
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    print_(runs_);
  }

 private:
  std::function<void(const RunsByArgument&)> print_;
  RunsByArgument runs_;
  std::set<std::string> medians_;  // benchmarks whose timing is a median of repetitions
};

}  // namespace heapprof::bench
