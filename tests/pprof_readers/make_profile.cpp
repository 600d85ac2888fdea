// Test helper for the real-reader tests: writes a known heap profile, or
// converts any profile heapprof reads into pprof, and prints the model's view
// (totals per sample type, function names) for the scripts to compare with
// what `go tool pprof` and pprof-format report.
//
//   make_profile write OUT.pb.gz          a synthetic worker-shaped profile
//   make_profile convert IN OUT.pb.gz     IN may be pprof or .heapprofile
//   make_profile show IN                  totals of any readable profile
//
// Output lines: "total <sample_type> <value>", "function <name>", "samples <n>".
#include <cstdio>
#include <set>
#include <string>

#include "heapprof/core/formats.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/core/stack_table.h"

using namespace heapprof;

namespace {

// handleFetch -> {recordRequestMetrics (retained), parseRequestBody -> JSON.parse,
// renderResponse -> anonymous}, plus a (GC) VM-state frame; 512 KiB interval.
RawSnapshot WorkerSnapshot() {
  internal::StackTable t;
  FrameId fetch = t.InternFrame({"handleFetch", "file:///srv/worker.js", 1, 12, 3});
  FrameId metrics = t.InternFrame({"recordRequestMetrics", "file:///srv/metrics.js", 2, 40, 22});
  FrameId parse = t.InternFrame({"parseRequestBody", "file:///srv/worker.js", 1, 30, 5});
  FrameId json = t.InternFrame({"JSON.parse", "", 0, 0, 0});
  FrameId render = t.InternFrame({"renderResponse", "file:///srv/worker.js", 1, 60, 5});
  FrameId anon = t.InternFrame({"", "file:///srv/worker.js", 1, 64, 18});
  FrameId gc = t.InternFrame({"(GC)", "", 0, 0, 0});
  StackId f = t.InternStack(StackId{0}, fetch);
  StackId fm = t.InternStack(f, metrics);
  StackId fp = t.InternStack(f, parse);
  StackId fpj = t.InternStack(fp, json);
  StackId fr = t.InternStack(f, render);
  StackId fra = t.InternStack(fr, anon);
  StackId g = t.InternStack(StackId{0}, gc);

  RawSnapshot snap;
  snap.info.interval_bytes = 512 * 1024;
  snap.info.start_unix_nanos = 1'764'000'000'000'000'000;
  snap.info.duration_nanos = 10'000'000'000;
  snap.info.v8_version = "10.2.154.26";
  snap.info.isolate_name = "reader-test";
  snap.info.strategy = "gc-prologue-ledger";
  uint64_t id = 1;
  auto add = [&](StackId s, uint64_t size, int n, int live_every) {
    for (int i = 0; i < n; ++i) snap.samples.push_back({id++, s, size, live_every > 0 && i % live_every == 0});
  };
  add(fm, 4096, 120, 1);  // every metrics record is retained
  add(fm, 96, 300, 1);
  add(fpj, 65536, 400, 0);  // parse garbage dies
  add(fpj, 1 << 20, 6, 3);  // a few big buffers, a third retained
  add(fp, 2048, 150, 10);
  add(fra, 320, 500, 25);
  add(g, 64, 4, 0);
  snap.frames = t.TakeFrames();
  snap.stacks = t.TakeStacks();
  return snap;
}

void Show(const Profile& p) {
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    std::printf("total %s %lld\n", std::string(p.str(p.sample_types[i].type)).c_str(),
                static_cast<long long>(p.Total(static_cast<int>(i))));
  }
  std::set<std::string> names;
  for (const Function& f : p.functions) names.emplace(p.str(f.name));
  for (const std::string& n : names) std::printf("function %s\n", n.c_str());
  std::printf("samples %zu\n", p.samples.size());
}

int Fail(const Status& s) {
  std::fprintf(stderr, "make_profile: %s\n", s.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "write" && argc == 3) {
    Profile p = BuildProfile(WorkerSnapshot());
    if (Status s = WritePprofFile(argv[2], p); !s.ok()) return Fail(s);
    Show(p);
    return 0;
  }
  if ((mode == "convert" && argc == 4) || (mode == "show" && argc == 3)) {
    Result<Profile> p = ReadProfileFile(argv[2]);
    if (!p.ok()) return Fail(p.status());
    if (mode == "convert") {
      if (Status s = WritePprofFile(argv[3], *p); !s.ok()) return Fail(s);
    }
    Show(*p);
    return 0;
  }
  std::fprintf(stderr, "usage: make_profile write OUT | convert IN OUT | show IN\n");
  return 2;
}
