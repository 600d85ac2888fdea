// Cost of one GC-prologue snapshot (Google Benchmark): what the ledger
// strategy does inside a GC prologue when the sampler's tree has grown —
// V8's GetAllocationProfile, then heapprof's tree index and interned stacks
// for every sample — for trees of about 100, 1k and 10k nodes. The baseline
// measured in the same run is GetAllocationProfile alone (V8's own copy of its
// tree), so the ratio is what heapprof adds on top of V8.
//   snapshot_bench [--benchmark_min_time=...]
// (collector_bench measures the same cost in place, inside real GCs.)
#include <benchmark/benchmark.h>
#include <v8-profiler.h>
#include <v8.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/stack_table.h"
#include "heapprof/v8/allocation_tree.h"
#include "heapprof/v8/v8_host.h"
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
      auto hit = cache.find(s.node_id);
      if (hit != cache.end()) {
        benchmark::DoNotOptimize(hit->second);
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

}  // namespace

int main(int argc, char** argv) {
  if (Status s = InitializeV8(); !s.ok()) {
    std::fprintf(stderr, "snapshot_bench: %s\n", s.message().c_str());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  bench::RatioReporter reporter(PrintRatios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
