// Attribution fidelity (a program; `--check` makes it a test): runs each case
// of tools/bench/fidelity/cases.json through `heapprof run`, with exact
// attribution (inlining off, the default) and with --allow-inlining, and
// prints the culprit's cumulative share of the case's sample type.
// Then the run-time cost of exact mode: interleaved pairs on an alloc-heavy
// worker, median ratio of wall times.
// Usage: fidelity_bench HEAPPROF_BINARY CASES_DIR [--quick] [--check] [--json FILE]
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"

using namespace heapprof;
namespace fs = std::filesystem;

namespace {

struct RunResult {
  bool ok = false;
  double seconds = 0;
  std::string error;
};

// How a case is run: the reference never optimizes (so nothing is inlined and
// every frame is physical), exact turns inlining off, inlining is V8's default.
enum class Mode { kReference, kExact, kInlining };

RunResult RunHeapprof(const std::string& binary, const fs::path& worker, int requests, Mode mode, const fs::path& out) {
  const char* extra = mode == Mode::kReference  ? " --allow-inlining --v8-flag=--no-opt"
                      : mode == Mode::kInlining ? " --allow-inlining"
                                                : "";
  std::string cmd =
      fmt::format("'{}' run '{}' --requests {} --warmup 0 --interval 8KiB --top 0 -o '{}'{} >/dev/null 2>'{}.err'",
                  binary, worker.string(), requests, out.string(), extra, out.string());
  auto begin = std::chrono::steady_clock::now();
  int status = std::system(cmd.c_str());
  RunResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  r.ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!r.ok) {
    std::ifstream err(out.string() + ".err");
    r.error.assign(std::istreambuf_iterator<char>(err), {});
  }
  return r;
}

struct Shares {
  double culprit = 0;        // the culprit's cumulative share, percent of the total
  double culprit_bytes = 0;  // the same, as a value of the sample type
  double callers_bytes = 0;  // value charged to the culprit's callers' own frames
  std::set<std::string> callers_seen;
};

// Shares of one sample type in a profile. The callers are the functions above
// the culprit on its stacks (taken from the reference run when given): the
// frames an inlined culprit's allocations are charged to.
Result<Shares> MeasureShares(const fs::path& file, const std::string& culprit, const std::string& sample_type,
                             const std::set<std::string>* callers) {
  HEAPPROF_ASSIGN_OR_RETURN(Profile p, ReadPprofFile(file.string()));
  HEAPPROF_ASSIGN_OR_RETURN(int index, ResolveSampleIndex(p, sample_type));
  const Profile& prof = p;
  double total = static_cast<double>(prof.Total(index));
  if (total <= 0) return Error(ErrorCode::kDataLoss, "empty profile");
  Shares out;
  for (const Sample& sample : prof.samples) {
    for (size_t i = 0; i < sample.locations.size(); ++i) {
      if (prof.FunctionName(sample.locations[i]) != culprit) continue;
      out.culprit += sample.values[index];
      for (size_t j = i + 1; j < sample.locations.size(); ++j) {
        out.callers_seen.emplace(prof.FunctionName(sample.locations[j]));
      }
      break;
    }
  }
  const std::set<std::string>& names = callers ? *callers : out.callers_seen;
  for (const Sample& sample : prof.samples) {
    if (!sample.locations.empty() && names.count(std::string(prof.FunctionName(sample.locations.front())))) {
      out.callers_bytes += sample.values[index];
    }
  }
  out.culprit_bytes = out.culprit;
  out.culprit *= 100.0 / total;
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: fidelity_bench HEAPPROF_BINARY CASES_DIR [--quick] [--check] [--json FILE]\n");
    return 2;
  }
  std::string binary = argv[1];
  fs::path dir = argv[2];
  bool quick = false, check = false;
  std::string json_path;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick")
      quick = true;
    else if (a == "--check")
      check = true;
    else if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else {
      fmt::print(stderr, "unknown argument: {}\n", a);
      return 2;
    }
  }
  std::ifstream cases_file(dir / "cases.json");
  nlohmann::json cases = nlohmann::json::parse(cases_file, nullptr, false);
  if (cases.is_discarded() || !cases.is_array()) {
    fmt::print(stderr, "cannot read {}\n", (dir / "cases.json").string());
    return 1;
  }
  fs::path tmp = fs::temp_directory_path() / fmt::format("heapprof-fidelity-{}", ::getpid());
  fs::create_directories(tmp);
  const int requests = quick ? 10000 : 30000;
  nlohmann::json out;
  bool all_ok = true;

  // Fidelity: the part of the culprit's bytes (its cumulative value in a run
  // without optimization, where every frame is physical) that was not moved
  // to its callers' own frames (same requests in every run, so values compare). Optimization may also shrink what the
  // culprit allocates at all (fewer temporaries): that is not misattribution, so the culprit's raw share is printed
  // beside it, not used.
  fmt::print(
      "culprit share = its cumulative share of the sample type; fidelity = 100% - (callers' own bytes now -\n"
      "callers' own bytes without optimization) / culprit's bytes without optimization\n");
  fmt::print("{:<20} {:<16} {:<12} {:>9} {:>18} {:>18}\n", "worker", "culprit", "sample type", "no-opt",
             "exact (fidelity)", check ? "" : "inlining (fidelity)");
  int n = 0;
  for (const auto& c : cases) {
    fs::path worker = dir / c.at("worker").get<std::string>();
    std::string culprit = c.at("culprit"), type = c.at("sample_type");
    nlohmann::json row = {{"worker", worker.filename().string()}, {"culprit", culprit}, {"sample_type", type}};
    std::vector<Mode> modes = {Mode::kReference, Mode::kExact};
    if (!check) modes.push_back(Mode::kInlining);
    Shares shares[3];
    for (Mode mode : modes) {
      int m = static_cast<int>(mode);
      fs::path file = tmp / fmt::format("case{}-{}.pb.gz", n, m);
      RunResult r = RunHeapprof(binary, worker, requests, mode, file);
      if (!r.ok) {
        fmt::print(stderr, "heapprof run failed on {}:\n{}\n", worker.string(), r.error);
        return 1;
      }
      Result<Shares> measured =
          MeasureShares(file, culprit, type, mode == Mode::kReference ? nullptr : &shares[0].callers_seen);
      if (!measured.ok()) {
        fmt::print(stderr, "{}: {}\n", file.string(), measured.status().message());
        return 1;
      }
      shares[m] = measured.value();
    }
    auto fidelity = [&](int m) {
      if (shares[0].culprit_bytes <= 0) return 0.0;
      double moved = std::max(0.0, shares[m].callers_bytes - shares[0].callers_bytes);
      return std::max(0.0, 100.0 * (1.0 - moved / shares[0].culprit_bytes));
    };
    row["reference_share"] = shares[0].culprit;
    row["exact_share"] = shares[1].culprit;
    row["exact_fidelity"] = fidelity(1);
    if (!check) {
      row["inlining_share"] = shares[2].culprit;
      row["inlining_fidelity"] = fidelity(2);
    }
    if (fidelity(1) < 90.0) all_ok = false;
    fmt::print("{:<20} {:<16} {:<12} {:>8.1f}% {:>8.1f}% ({:>5.1f}%) {:>18}\n", worker.filename().string(), culprit,
               type, shares[0].culprit, shares[1].culprit, fidelity(1),
               check ? "" : fmt::format("{:.1f}% ({:.1f}%)", shares[2].culprit, fidelity(2)));
    out["cases"].push_back(row);
    ++n;
  }

  if (!check) {
    // Run-time cost of exact mode, on the alloc-heavy array-map case.
    int pairs = quick ? 5 : 15;
    std::vector<double> ratios, exact_s, inl_s;
    fs::path worker = dir / "array-map.js";
    for (int i = 0; i < pairs; ++i) {
      RunResult a, b;
      if (i % 2 == 0) {
        a = RunHeapprof(binary, worker, requests, Mode::kExact, tmp / "cost.pb.gz");
        b = RunHeapprof(binary, worker, requests, Mode::kInlining, tmp / "cost.pb.gz");
      } else {
        b = RunHeapprof(binary, worker, requests, Mode::kInlining, tmp / "cost.pb.gz");
        a = RunHeapprof(binary, worker, requests, Mode::kExact, tmp / "cost.pb.gz");
      }
      exact_s.push_back(a.seconds);
      inl_s.push_back(b.seconds);
      ratios.push_back(a.seconds / b.seconds);
    }
    auto [mn, mx] = std::minmax_element(ratios.begin(), ratios.end());
    fmt::print(
        "exact mode cost (array-map.js, {} requests, whole `heapprof run`): exact {:.2f} s, inlining {:.2f} s "
        "(medians); ratio median {:.3f} [min {:.3f}, max {:.3f}] over {} pairs\n",
        requests, Median(exact_s), Median(inl_s), Median(ratios), *mn, *mx, pairs);
    out["exact_cost"] = {{"ratio_median", Median(ratios)}, {"ratio_min", *mn}, {"ratio_max", *mx}, {"pairs", pairs}};
  }
  fs::remove_all(tmp);
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  if (check && !all_ok) {
    fmt::print("FAILED: in exact mode a culprit kept less than 90 % of the share it has without optimization\n");
    return 1;
  }
  return 0;
}
