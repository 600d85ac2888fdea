// pprof encode + gzip cost and output size on synthetic heap profiles of 1k,
// 10k and 50k locations with 100k samples. A program, not a test: it prints
// Google Benchmark's table, then each variant's time as a ratio of the
// protobuf serialization alone measured in the same run, and the sizes.
//
//   encode_bench [--benchmark_filter=...] [--raw-out=DIR] [--gzip-reps=N]
// --raw-out writes each synthetic profile (uncompressed) to DIR so other
// encoders can be compared on the same data (see docs/formats.md).
// Then a table of gzip levels 1-9 of libdeflate and zlib on the same
// profiles, each the median of N (default 3; 0 leaves the table out).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <string>

#include "heapprof/core/file_io.h"
#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/core/stack_table.h"
#include "tools/bench/ratio_reporter.h"

using namespace heapprof;

namespace {

constexpr int kSamples = 100'000;

// A call tree the way V8 reports one: 40k tree nodes (distinct stacks; 50k for 50k locations) under a
// 5-frame runtime prefix, each labelled with one of `locations` frames in 50
// scripts (every frame used), binary fan-out so stacks are ~20 frames deep.
// Sample s sits on node s % nodes with one of 10 object sizes, which gives
// exactly 100k distinct (stack, size) samples after merging.
RawSnapshot SyntheticSnapshot(int locations) {
  const int kNodes = std::max(40'000, locations);
  std::mt19937_64 rng(42);
  internal::StackTable table;
  std::vector<FrameId> frames;
  frames.reserve(locations);
  for (int i = 0; i < locations; ++i) {
    frames.push_back(
        table.InternFrame({"function_" + std::to_string(i), "file:///srv/app/module_" + std::to_string(i % 50) + ".js",
                           1 + i % 50, 1 + (i * 7) % 3000, 1 + i % 80}));
  }
  StackId prefix{0};
  for (int i = 0; i < 5; ++i) {
    prefix = table.InternStack(
        prefix, table.InternFrame({"runtime_" + std::to_string(i), "node:internal/run", 0, 10 * i + 1, 1}));
  }
  std::vector<StackId> node_stack(kNodes);
  for (int i = 0; i < kNodes; ++i) {
    int frame = i < locations ? i : static_cast<int>(rng() % locations);
    StackId parent = i == 0 ? prefix : node_stack[(i - 1) / 2];
    node_stack[i] = table.InternStack(parent, frames[frame]);
  }
  RawSnapshot snap;
  snap.info.interval_bytes = 512 * 1024;
  static constexpr uint64_t kSizes[] = {16, 32, 48, 64, 96, 128, 256, 1024, 4096, 65536};
  for (int s = 0; s < kSamples; ++s) {
    snap.samples.push_back(
        {static_cast<uint64_t>(s + 1), node_stack[s % kNodes], kSizes[(s / kNodes) % 10], rng() % 3 == 0});
  }
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  return snap;
}

const Profile& SyntheticProfile(int locations) {
  static std::map<int, Profile> cache;
  auto it = cache.find(locations);
  if (it == cache.end()) it = cache.emplace(locations, BuildProfile(SyntheticSnapshot(locations))).first;
  return it->second;
}

void SetCounters(benchmark::State& state, const Profile& p, size_t bytes) {
  state.counters["locations"] = static_cast<double>(p.locations.size());
  state.counters["samples"] = static_cast<double>(p.samples.size());
  state.counters["out_bytes"] = static_cast<double>(bytes);
}

// Baseline: protobuf serialization alone.
void BM_Serialize(benchmark::State& state) {
  const Profile& p = SyntheticProfile(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    Result<std::string> out = EncodePprof(p);
    if (!out.ok()) state.SkipWithError(out.status().message().c_str());
    bytes = out->size();
    benchmark::DoNotOptimize(out->data());
  }
  SetCounters(state, p, bytes);
}

// The model's invariant checks alone (part of BM_Serialize, which runs them
// sample by sample as it writes).
void BM_Validate(benchmark::State& state) {
  const Profile& p = SyntheticProfile(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Status valid = ValidateProfile(p);
    if (!valid.ok()) state.SkipWithError(valid.message().c_str());
  }
  SetCounters(state, p, 0);
}

// What WritePprofFile does before writing: serialize + gzip (libdeflate at kPprofGzipLevel).
void BM_EncodeGzip(benchmark::State& state) {
  const Profile& p = SyntheticProfile(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    Result<std::string> out = EncodePprofGzip(p);
    if (!out.ok()) state.SkipWithError(out.status().message().c_str());
    bytes = out->size();
    benchmark::DoNotOptimize(out->data());
  }
  SetCounters(state, p, bytes);
}

// Reading the file back: gunzip + parse + validate + renumber.
void BM_Decode(benchmark::State& state) {
  const Profile& p = SyntheticProfile(static_cast<int>(state.range(0)));
  std::string gz = EncodePprofGzip(p).value();
  for (auto _ : state) {
    Result<Profile> back = DecodePprof(gz);
    if (!back.ok()) state.SkipWithError(back.status().message().c_str());
    benchmark::DoNotOptimize(back->samples.data());
  }
  SetCounters(state, p, gz.size());
}

BENCHMARK(BM_Validate)->Arg(1000)->Arg(10000)->Arg(50000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Serialize)->Arg(1000)->Arg(10000)->Arg(50000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeGzip)->Arg(1000)->Arg(10000)->Arg(50000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Decode)->Arg(1000)->Arg(10000)->Arg(50000)->Unit(benchmark::kMillisecond);

// After the usual table: every variant relative to BM_Serialize of the same size.
// CPU time is the steadier figure on a shared machine; both are shown.
void PrintRatios(const bench::RunsByArgument& runs) {
  std::printf("\n%-10s %-22s %9s %9s %15s %12s\n", "locations", "variant", "wall ms", "cpu ms", "cpu x serialize",
              "bytes");
  for (const auto& [size, variants] : runs) {
    auto base = variants.find("BM_Serialize");
    for (const auto& [variant, r] : variants) {
      double ratio = base == variants.end() ? 0.0 : r.cpu_ms / base->second.cpu_ms;
      auto bytes = r.counters.find("out_bytes");
      std::printf("%-10s %-22s %9.2f %9.2f %15.2f %12.0f\n", size.c_str(), variant.c_str(), r.wall_ms, r.cpu_ms, ratio,
                  bytes == r.counters.end() ? 0.0 : bytes->second);
    }
  }
}

double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// gzip levels 1-9 of libdeflate and zlib on each profile's serialized bytes:
// the table kPprofGzipLevel was chosen from. CPU ms is the median of `reps`.
int PrintGzipLevels(int reps) {
  std::printf("\ngzip levels (CPU ms, median of %d; bytes)\n%-10s %-6s", reps, "locations", "level");
  for (const char* lib : {"libdeflate", "zlib"}) std::printf(" %10s ms %12s", lib, "bytes");
  std::printf("\n");
  for (int n : {1000, 10000, 50000}) {
    std::string raw = EncodePprof(SyntheticProfile(n)).value();
    for (int level = 1; level <= 9; ++level) {
      std::printf("%-10d %-6d", n, level);
      for (GzipLibrary lib : {GzipLibrary::kLibdeflate, GzipLibrary::kZlib}) {
        std::vector<double> ms;
        size_t bytes = 0;
        for (int r = 0; r < reps; ++r) {
          double start = CpuMs();
          Result<std::string> gz = GzipCompress(raw, level, lib);
          ms.push_back(CpuMs() - start);
          if (!gz.ok()) {
            std::fprintf(stderr, "encode_bench: %s\n", gz.status().message().c_str());
            return 1;
          }
          bytes = gz->size();
        }
        std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
        std::printf(" %13.2f %12zu%s", ms[reps / 2], bytes,
                    lib == GzipLibrary::kLibdeflate && level == kPprofGzipLevel ? "*" : " ");
      }
      std::printf("\n");
    }
  }
  std::printf("* kPprofGzipLevel, what heapprof writes\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string raw_out;
  int gzip_reps = 3;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--raw-out=", 10) == 0) {
      raw_out = argv[i] + 10;
    } else if (std::strncmp(argv[i], "--gzip-reps=", 12) == 0) {
      gzip_reps = std::max(0, std::atoi(argv[i] + 12));
    } else {
      args.push_back(argv[i]);
    }
  }
  if (!raw_out.empty()) {
    for (int n : {1000, 10000, 50000}) {
      std::string path = raw_out + "/synthetic-" + std::to_string(n) + ".pb";
      Status s = WriteFileAtomic(path, EncodePprof(SyntheticProfile(n)).value());
      if (!s.ok()) {
        std::fprintf(stderr, "encode_bench: %s\n", s.message().c_str());
        return 1;
      }
      std::printf("wrote %s\n", path.c_str());
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  bench::RatioReporter reporter(PrintRatios);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return gzip_reps > 0 ? PrintGzipLevels(gzip_reps) : 0;
}
