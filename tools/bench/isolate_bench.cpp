// What an isolate of its own per Durable Object would cost in time (Google
// Benchmark): a bare V8 isolate created and disposed (the floor, measured in
// the same run), against heapprof's worker runtime on one (its globals, the
// prelude's Web APIs) with an empty object-sized worker loaded and one request
// answered. The ratio is what the runtime adds to V8's own isolate. (workerd
// keeps every object of a namespace in one isolate: it pays this once.)
//   isolate_bench [--benchmark_min_time=...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/v8_host.h"
#include "tools/bench/ratio_reporter.h"

using namespace heapprof;

namespace {

constexpr const char* kEmptyWorker = "export default { async fetch(request) { return new Response('ok'); } };\n";

void BM_BareIsolate(benchmark::State& state) {
  for (auto _ : state) {
    Result<Isolate> iso = Isolate::Create(IsolateOptions{});
    if (!iso.ok()) state.SkipWithError(iso.status().message().c_str());
    benchmark::DoNotOptimize(iso);
  }
}

void BM_WorkerIsolate(benchmark::State& state) {
  WorkerOptions options;
  options.console = [](std::string_view, std::string_view) {};
  WorkerRequest request;
  request.url = "https://example.com/";
  for (auto _ : state) {
    Result<WorkerRuntime> runtime = WorkerRuntime::Create(options);
    if (!runtime.ok()) {
      state.SkipWithError(runtime.status().message().c_str());
      break;
    }
    if (Status s = runtime->Load(kEmptyWorker, "empty-object.js"); !s.ok()) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    Result<WorkerResponse> response = runtime->Dispatch(request);
    if (!response.ok()) {
      state.SkipWithError(response.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(response);
  }
}

BENCHMARK(BM_BareIsolate)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WorkerIsolate)->Arg(1)->Unit(benchmark::kMillisecond);

void PrintRatios(const bench::RunsByArgument& runs) {
  for (const auto& [arg, v] : runs) {
    auto bare = v.find("BM_BareIsolate"), worker = v.find("BM_WorkerIsolate");
    if (bare == v.end() || worker == v.end()) continue;
    const double bare_cpu = bare->second.cpu_ms, worker_cpu = worker->second.cpu_ms;
    std::printf(
        "\nms per isolate (CPU; wall in brackets, which on a loaded machine is mostly waiting):\n"
        "  bare V8 isolate %.2f [%.1f]; worker runtime + empty worker + 1 request %.2f [%.1f]: x%.1f CPU\n"
        "  1000 objects, an isolate each: %.1f s CPU\n",
        bare_cpu, bare->second.wall_ms, worker_cpu, worker->second.wall_ms, worker_cpu / bare_cpu, worker_cpu);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (Status s = InitializeV8(); !s.ok()) {
    std::fprintf(stderr, "isolate_bench: %s\n", s.message().c_str());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  bench::RatioReporter reporter(PrintRatios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
