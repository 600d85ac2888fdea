// Cost of one GC-prologue snapshot (Google Benchmark): what the ledger
// strategy does inside a GC prologue when the sampler's tree has grown —
// V8's GetAllocationProfile, then heapprof's tree index and interned stacks
// for every sample — for trees of about 100, 1k and 10k nodes. The baseline
// measured in the same run is GetAllocationProfile alone (V8's own copy of its
// tree), so the ratio is what heapprof adds on top of V8.
// Then the ledger's own split, decided: rounds of snapshots in which V8's
// copy and heapprof's walk are timed apart (thread CPU), with no new sample
// (a steady window) and with one new node (the walk indexes the tree), the
// latter with the tree index before and after it became a vector by node id.
//   snapshot_bench [--walk-rounds N] [--walk-json FILE] [--benchmark_min_time=...]
// (collector_bench measures the same cost in place, inside real GCs.)
#include <benchmark/benchmark.h>
#include <v8-profiler.h>
#include <v8.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/stack_table.h"
#include "heapprof/v8/allocation_tree.h"
#include "heapprof/v8/v8_host.h"
#include "tools/bench/paired.h"
#include "tools/bench/ratio_reporter.h"

using namespace heapprof;

namespace {

// An isolate whose sampler holds a tree of about `functions` nodes: one
// distinct allocating function each, every allocation sampled and kept alive.
struct TreeEnv {
  Isolate iso;
  size_t samples = 0;

  explicit TreeEnv(int functions) : iso(std::move(Isolate::Create(IsolateOptions{}).value())) {
    v8::Isolate* isolate = iso.get();
    v8::Isolate::Scope scope(isolate);
    v8::HandleScope handles(isolate);
    std::string js = "const fns = [];\n";
    for (int i = 0; i < functions; ++i) {
      js += fmt::format("fns.push(function f{}() {{ return new Array(1024).fill({}); }});\n", i, i);
    }
    js += "globalThis.keepAlive = [];\n";
    Run(js);
    // Every 8 KiB array is larger than the mean interval: nearly all are sampled.
    isolate->GetHeapProfiler()->StartSamplingHeapProfiler(2048, 64);
    Run("for (const f of fns) keepAlive.push(f());");
    std::unique_ptr<v8::AllocationProfile> p(isolate->GetHeapProfiler()->GetAllocationProfile());
    samples = p ? p->GetSamples().size() : 0;
  }
  ~TreeEnv() {
    v8::Isolate::Scope scope(iso.get());
    iso.get()->GetHeapProfiler()->StopSamplingHeapProfiler();
  }
  void Run(const std::string& js) {
    auto r = iso.RunScript(js, "snapshot_bench.js");
    if (!r.ok()) {
      std::fprintf(stderr, "snapshot_bench: script failed: %s\n", r.status().message().c_str());
      std::exit(1);
    }
  }
};

TreeEnv& EnvFor(int functions) {
  static std::map<int, std::unique_ptr<TreeEnv>> envs;
  auto& env = envs[functions];
  if (!env) env = std::make_unique<TreeEnv>(functions);
  return *env;
}

void SetCounters(benchmark::State& state, const TreeEnv& env, size_t nodes) {
  state.counters["samples"] = static_cast<double>(env.samples);
  state.counters["nodes"] = static_cast<double>(nodes);
}

// Baseline: V8 copies its sampling tree into an AllocationProfile.
void BM_GetAllocationProfile(benchmark::State& state) {
  TreeEnv& env = EnvFor(static_cast<int>(state.range(0)));
  v8::Isolate* isolate = env.iso.get();
  v8::Isolate::Scope scope(isolate);
  size_t nodes = 0;
  for (auto _ : state) {
    v8::HandleScope handles(isolate);
    std::unique_ptr<v8::AllocationProfile> p(isolate->GetHeapProfiler()->GetAllocationProfile());
    nodes = p->GetSamples().size();
    benchmark::DoNotOptimize(p.get());
  }
  SetCounters(state, env, nodes);
}

// What the ledger does in a GC prologue: V8's profile, heapprof's node index,
// and each sample's stack resolved and interned. Returns the tree's node count.
size_t PrologueSnapshot(v8::Isolate* isolate, internal::StackTable& table, internal::FrameResolver& frames) {
  v8::HandleScope handles(isolate);
  std::unique_ptr<v8::AllocationProfile> p(isolate->GetHeapProfiler()->GetAllocationProfile());
  internal::AllocationTree tree(*p);
  for (const v8::AllocationProfile::Sample& s : p->GetSamples()) {
    benchmark::DoNotOptimize(tree.StackOf(isolate, s.node_id, frames, table));
  }
  return tree.node_count();
}

// The snapshot when every function is new to the window: frames copied too.
void BM_PrologueSnapshot(benchmark::State& state) {
  TreeEnv& env = EnvFor(static_cast<int>(state.range(0)));
  v8::Isolate* isolate = env.iso.get();
  v8::Isolate::Scope scope(isolate);
  size_t nodes = 0;
  for (auto _ : state) {
    internal::StackTable table;
    internal::FrameResolver frames(table);
    nodes = PrologueSnapshot(isolate, table, frames);
  }
  SetCounters(state, env, nodes);
}

// The same once the window has seen these functions: the frame cache and the
// interned stacks persist across a window's snapshots, as in the ledger.
void BM_PrologueSnapshotWarm(benchmark::State& state) {
  TreeEnv& env = EnvFor(static_cast<int>(state.range(0)));
  v8::Isolate* isolate = env.iso.get();
  v8::Isolate::Scope scope(isolate);
  internal::StackTable table;
  internal::FrameResolver frames(table);
  size_t nodes = 0;
  for (auto _ : state) nodes = PrologueSnapshot(isolate, table, frames);
  SetCounters(state, env, nodes);
}

// What the always-on sampler does (Sampler's Record): each sample's node
// looked up in the node -> stack cache kept across snapshots; the tree is
// indexed only when a node is new, which in a steady window it is not.
void BM_PrologueSnapshotCached(benchmark::State& state) {
  TreeEnv& env = EnvFor(static_cast<int>(state.range(0)));
  v8::Isolate* isolate = env.iso.get();
  v8::Isolate::Scope scope(isolate);
  internal::StackTable table;
  internal::FrameResolver frames(table);
  internal::NodeStackCache cache;
  size_t nodes = 0;
  for (auto _ : state) {
    v8::HandleScope handles(isolate);
    std::unique_ptr<v8::AllocationProfile> p(isolate->GetHeapProfiler()->GetAllocationProfile());
    std::optional<internal::AllocationTree> tree;
    for (const v8::AllocationProfile::Sample& s : p->GetSamples()) {
      if (std::optional<StackId> hit = cache.Find(s.node_id)) {
        benchmark::DoNotOptimize(*hit);
        continue;
      }
      if (!tree) tree.emplace(*p, &cache);
      benchmark::DoNotOptimize(tree->StackOf(isolate, s.node_id, frames, table));
    }
    nodes = cache.size();
  }
  SetCounters(state, env, nodes);
}

BENCHMARK(BM_GetAllocationProfile)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrologueSnapshot)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrologueSnapshotWarm)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrologueSnapshotCached)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

// After the usual table: each snapshot as a ratio of V8's part alone.
void PrintRatios(const bench::RunsByArgument& runs) {
  std::printf(
      "\nCPU ms; ratio = snapshot / GetAllocationProfile alone; walk = heapprof's part / V8's\n"
      "%-10s %22s %24s %7s %24s %7s %22s %7s\n",
      "functions", "GetAllocationProfile", "snapshot, new functions", "ratio", "snapshot, known functions", "ratio",
      "snapshot, node cache", "walk");
  for (const auto& [size, v] : runs) {
    auto base = v.find("BM_GetAllocationProfile"), cold = v.find("BM_PrologueSnapshot"),
         warm = v.find("BM_PrologueSnapshotWarm"), cached = v.find("BM_PrologueSnapshotCached");
    if (base == v.end() || cold == v.end() || warm == v.end() || cached == v.end()) continue;
    const double v8_ms = base->second.cpu_ms;
    std::printf("%-10s %22.3f %24.3f %7.2f %24.3f %7.2f %22.3f %7.2f\n", size.c_str(), v8_ms, cold->second.cpu_ms,
                cold->second.cpu_ms / v8_ms, warm->second.cpu_ms, warm->second.cpu_ms / v8_ms, cached->second.cpu_ms,
                (cached->second.cpu_ms - v8_ms) / v8_ms);
  }
}

// The ledger's split, decided (issue #34: heapprof's walk <= V8's copy).

double ThreadCpuNs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// The "before" of the same run: the tree index the ledgers built until the
// node cache and the index became vectors by node id, a hash map entry for
// every node of the tree, made whenever a snapshot met a new node.
class HashIndexedTree {
 public:
  using Cache = std::unordered_map<uint32_t, StackId>;
  HashIndexedTree(v8::AllocationProfile& profile, Cache* cache) : resolved_(cache) {
    v8::AllocationProfile::Node* root = profile.GetRootNode();
    root_id_ = root->node_id;
    std::vector<v8::AllocationProfile::Node*> pending{root};
    while (!pending.empty()) {
      v8::AllocationProfile::Node* node = pending.back();
      pending.pop_back();
      for (v8::AllocationProfile::Node* child : node->children) {
        nodes_.emplace(child->node_id, Entry{child, node == root ? 0 : node->node_id});
        pending.push_back(child);
      }
    }
  }
  StackId StackOf(v8::Isolate* isolate, uint32_t node_id, internal::FrameResolver& frames,
                  internal::StackTable& table) {
    if (node_id == root_id_) return StackId{0};
    std::vector<uint32_t> chain;
    StackId base{0};
    for (uint32_t id = node_id; id != 0;) {
      auto done = resolved_->find(id);
      if (done != resolved_->end()) {
        base = done->second;
        break;
      }
      auto it = nodes_.find(id);
      if (it == nodes_.end()) break;
      chain.push_back(id);
      id = it->second.parent_id;
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      base = table.InternStack(base, frames.Resolve(isolate, *nodes_.at(*it).node));
      resolved_->emplace(*it, base);
    }
    return base;
  }

 private:
  struct Entry {
    v8::AllocationProfile::Node* node;
    uint32_t parent_id;
  };
  std::unordered_map<uint32_t, Entry> nodes_;
  Cache* resolved_;
  uint32_t root_id_ = 0;
};

// One ledger (interning tables, node cache, the sample ids it holds) with
// either index; Walk is LedgerStrategy::Record's loop over a snapshot.
template <bool kVectors>
struct BenchLedger {
  using Cache = std::conditional_t<kVectors, internal::NodeStackCache, HashIndexedTree::Cache>;
  using Tree = std::conditional_t<kVectors, internal::AllocationTree, HashIndexedTree>;
  internal::StackTable table;
  internal::FrameResolver frames{table};
  Cache cache;
  std::vector<char> seen;  // by sample id

  std::optional<StackId> Find(uint32_t node_id) const {
    if constexpr (kVectors) {
      return cache.Find(node_id);
    } else {
      auto hit = cache.find(node_id);
      return hit == cache.end() ? std::nullopt : std::optional<StackId>(hit->second);
    }
  }
  // Records every sample not held yet except `skip` (0: none).
  void Walk(v8::Isolate* isolate, v8::AllocationProfile& p, uint64_t skip = 0) {
    std::optional<Tree> tree;
    for (const v8::AllocationProfile::Sample& s : p.GetSamples()) {
      if (s.sample_id < seen.size() && seen[s.sample_id]) continue;
      if (s.sample_id == skip) continue;
      if (s.sample_id >= seen.size()) seen.resize(s.sample_id + 1, 0);
      seen[s.sample_id] = 1;
      std::optional<StackId> hit = Find(s.node_id);
      if (!hit) {
        if (!tree) tree.emplace(p, &cache);
        hit = tree->StackOf(isolate, s.node_id, frames, table);
      }
      benchmark::DoNotOptimize(*hit);
    }
  }
};

// A before / after ratio (the hash index over the vectors) with its 99 %
// interval, printed and returned; no target: it says how much the change cut.
nlohmann::json BeforeOverAfter(const char* what, const std::vector<double>& ratios) {
  nlohmann::json out = {{"median", bench::Median(ratios)}};
  fmt::print("  {:<22} median {:.4f}", what, bench::Median(ratios));
  if (auto ci = bench::MedianInterval(ratios, bench::kSequentialLevel)) {
    out["ci"] = {ci->first, ci->second};
    fmt::print(", 99 % interval [{:.4f}, {:.4f}]", ci->first, ci->second);
  }
  fmt::print("\n");
  return out;
}

// Rounds of `per_round` snapshots of one tree, each timed in parts; returns
// the row's JSON and prints its ratios.
nlohmann::json WalkRow(int functions, int rounds, int per_round) {
  TreeEnv& env = EnvFor(functions);
  v8::Isolate* isolate = env.iso.get();
  v8::Isolate::Scope scope(isolate);
  BenchLedger<true> steady;
  std::vector<double> steady_ratio, after_ratio, before_ratio, total_before_after, walk_before_after;
  std::vector<double> v8_ns_each, steady_ns_each, after_ns_each, before_ns_each;
  size_t nodes = 0, samples = 0;
  uint64_t turn = 0;
  for (int r = 0; r < rounds; ++r) {
    double v8_steady = 0, walk_steady = 0, v8_new = 0, walk_after = 0, walk_before = 0;
    for (int k = 0; k < per_round; ++k, ++turn) {
      v8::HandleScope handles(isolate);
      // A steady window: every sample is held already (after the first walk).
      double t0 = ThreadCpuNs();
      std::unique_ptr<v8::AllocationProfile> p(isolate->GetHeapProfiler()->GetAllocationProfile());
      double t1 = ThreadCpuNs();
      steady.Walk(isolate, *p);
      double t2 = ThreadCpuNs();
      if (r > 0) v8_steady += t1 - t0, walk_steady += t2 - t1;
      // One new node: two ledgers that hold every sample but one, whose node
      // they have not resolved (made untimed), then the same snapshot walked
      // by each, in alternating order.
      const auto& all = p->GetSamples();
      samples = all.size();
      const v8::AllocationProfile::Sample& fresh = all[turn % all.size()];
      BenchLedger<true> after;
      BenchLedger<false> before;
      after.Walk(isolate, *p, fresh.sample_id);
      before.Walk(isolate, *p, fresh.sample_id);
      double t3 = ThreadCpuNs();
      std::unique_ptr<v8::AllocationProfile> q(isolate->GetHeapProfiler()->GetAllocationProfile());
      double t4 = ThreadCpuNs();
      double a = 0, b = 0;
      if (turn % 2 == 0) {
        after.Walk(isolate, *q);
        double t5 = ThreadCpuNs();
        before.Walk(isolate, *q);
        a = t5 - t4, b = ThreadCpuNs() - t5;
      } else {
        before.Walk(isolate, *q);
        double t5 = ThreadCpuNs();
        after.Walk(isolate, *q);
        b = t5 - t4, a = ThreadCpuNs() - t5;
      }
      nodes = after.cache.size();
      v8_new += t4 - t3, walk_after += a, walk_before += b;
    }
    if (r == 0) continue;  // the first round warms the steady ledger up
    steady_ratio.push_back(walk_steady / v8_steady);
    after_ratio.push_back(walk_after / v8_new);
    before_ratio.push_back(walk_before / v8_new);
    total_before_after.push_back((v8_new + walk_before) / (v8_new + walk_after));
    walk_before_after.push_back(walk_before / walk_after);
    v8_ns_each.push_back((v8_steady + v8_new) / (2 * per_round));
    steady_ns_each.push_back(walk_steady / per_round);
    after_ns_each.push_back(walk_after / per_round);
    before_ns_each.push_back(walk_before / per_round);
  }
  const double v8_ms = bench::Median(v8_ns_each) / 1e6;
  fmt::print(
      "{} functions ({} nodes resolved, {} samples), {} rounds of {}: V8's GetAllocationProfile {:.3f} ms; "
      "walk {:.4f} ms steady, {:.4f} ms with one new node ({:.4f} ms before)\n",
      functions, nodes, samples, steady_ratio.size(), per_round, v8_ms, bench::Median(steady_ns_each) / 1e6,
      bench::Median(after_ns_each) / 1e6, bench::Median(before_ns_each) / 1e6);
  nlohmann::json row = {{"functions", functions},
                        {"nodes", nodes},
                        {"samples", samples},
                        {"rounds", steady_ratio.size()},
                        {"snapshots_per_round", per_round},
                        {"v8_ms", v8_ms},
                        {"steady_walk_ms", bench::Median(steady_ns_each) / 1e6},
                        {"new_node_walk_ms", bench::Median(after_ns_each) / 1e6},
                        {"new_node_walk_ms_before", bench::Median(before_ns_each) / 1e6}};
  row["steady_walk_over_v8"] = bench::RatioSummary("walk / V8, steady", steady_ratio, 1.0);
  row["new_node_walk_over_v8"] = bench::RatioSummary("walk / V8, new node", after_ratio, 1.0);
  row["new_node_walk_over_v8_before"] = bench::RatioSummary("  (before: hash index)", before_ratio, 1.0);
  row["new_node_total_before_over_after"] = BeforeOverAfter("snapshot before / after", total_before_after);
  row["new_node_walk_before_over_after"] = BeforeOverAfter("walk before / after", walk_before_after);
  return row;
}

nlohmann::json WalkAgainstV8(int rounds) {
  fmt::print(
      "\nheapprof's walk against V8's GetAllocationProfile in the same snapshots (thread CPU, 99 % intervals of "
      "the rounds' median ratios, target <= 1)\n");
  nlohmann::json rows = nlohmann::json::array();
  for (auto [functions, per_round] : {std::pair{100, 50}, std::pair{1000, 5}, std::pair{10000, 1}}) {
    rows.push_back(WalkRow(functions, rounds + 1, per_round));
  }
  return {{"rows", rows}};
}

}  // namespace

int main(int argc, char** argv) {
  if (Status s = InitializeV8(); !s.ok()) {
    std::fprintf(stderr, "snapshot_bench: %s\n", s.message().c_str());
    return 1;
  }
  int walk_rounds = 30;
  std::string walk_json;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--walk-rounds") == 0 && i + 1 < argc) {
      walk_rounds = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--walk-json") == 0 && i + 1 < argc) {
      walk_json = argv[++i];
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  bench::RatioReporter reporter(PrintRatios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  nlohmann::json out = WalkAgainstV8(walk_rounds);
  if (!walk_json.empty()) std::ofstream(walk_json) << out.dump(2) << "\n";
  return 0;
}
