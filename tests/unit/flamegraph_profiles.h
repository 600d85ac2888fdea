// Hand-made heap profiles with known shapes, shared by the flamegraph and
// diff unit tests and the browser test's page generator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heapprof/core/profile_builder.h"
#include "heapprof/core/stack_table.h"

namespace heapprof::testing {

// Objects this large are always sampled (scale 1), so values are exact.
inline constexpr uint64_t kMiB = 1024 * 1024;
inline constexpr uint64_t kInterval = 1024;

struct StackSpec {
  std::vector<std::string> frames;  // root first
  int count = 1;                    // samples
  uint64_t size = kMiB;             // bytes each
  bool live = false;
};

inline RawSnapshot SnapshotOf(const std::vector<StackSpec>& specs) {
  internal::StackTable table;
  RawSnapshot snap;
  snap.info.interval_bytes = kInterval;
  snap.info.start_unix_nanos = 1'790'000'000'000'000'000;
  snap.info.duration_nanos = 10'000'000'000;
  snap.info.isolate_name = "test";
  uint64_t id = 1;
  for (const StackSpec& spec : specs) {
    StackId stack{0};
    for (const std::string& name : spec.frames) {
      bool vm = !name.empty() && name[0] == '(';
      int line = vm ? 0 : static_cast<int>(10 * (name.size() % 7) + name[0] % 10 + 1);
      FrameId f = table.InternFrame({name, vm ? "" : "app.js", vm ? 0 : 1, line, 1});
      stack = table.InternStack(stack, f);
    }
    for (int i = 0; i < spec.count; ++i) snap.samples.push_back({id++, stack, spec.size, spec.live});
  }
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  return snap;
}

// main -> handle -> leak     6 x 1 MiB, live
// main -> handle -> parse   48 x 64 KiB (3 MiB), dead
// main                       1 x 1 MiB, dead
// alloc_space 10 MiB: handle 90 %, leak 60 %, parse 30 %, main self 10 %.
// alloc_objects 55: parse 48. inuse_space 6 MiB, all leak.
inline Profile KnownProfile() {
  return BuildProfile(SnapshotOf({
      {{"main", "handle", "leak"}, 6, kMiB, true},
      {{"main", "handle", "parse"}, 48, 64 * 1024, false},
      {{"main"}, 1, kMiB, false},
  }));
}

// Two windows of a worker whose metrics registry keeps every request:
// registryPush retains 2 MiB, then 12 MiB; cacheFill shrinks 4 -> 1 MiB.
inline Profile LeakFirstWindow() {
  return BuildProfile(SnapshotOf({
      {{"handler", "recordRequest", "registryPush"}, 2, kMiB, true},
      {{"handler", "renderJson"}, 8, kMiB, true},
      {{"handler", "cacheFill"}, 4, kMiB, true},
  }));
}
inline Profile LeakSecondWindow() {
  return BuildProfile(SnapshotOf({
      {{"handler", "recordRequest", "registryPush"}, 12, kMiB, true},
      {{"handler", "renderJson"}, 9, kMiB, true},
      {{"handler", "cacheFill"}, 1, kMiB, true},
      {{"handler", "newThing"}, 1, kMiB, false},
  }));
}

// Two windows of small objects (64 B at a 1 KiB interval: each sample stands
// for about 1 KiB, so the values carry sampling noise): steady 400 -> 420
// samples, a change well within the noise; grower 100 -> 600, far beyond it.
inline Profile NoisyFirstWindow() {
  return BuildProfile(SnapshotOf({
      {{"handler", "steady"}, 400, 64, true},
      {{"handler", "grower"}, 100, 64, true},
  }));
}
inline Profile NoisySecondWindow() {
  return BuildProfile(SnapshotOf({
      {{"handler", "steady"}, 420, 64, true},
      {{"handler", "grower"}, 600, 64, true},
  }));
}

// A profile with about `nodes` distinct call-tree nodes (deterministic).
inline Profile BigProfile(size_t nodes, int functions = 3000) {
  internal::StackTable table;
  RawSnapshot snap;
  snap.info.interval_bytes = kInterval;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::vector<FrameId> frames;
  for (int i = 0; i < functions; ++i) {
    frames.push_back(table.InternFrame({"fn" + std::to_string(i), "big.js", 1, i + 1, 1}));
  }
  std::vector<StackId> stacks{StackId{0}};
  std::vector<int> depth{0};
  uint64_t id = 1;
  while (table.stacks().size() <= nodes) {
    // Prefer recent stacks so the tree gets deep as well as wide.
    size_t pick =
        next() % 4 == 0 ? next() % stacks.size() : stacks.size() - 1 - next() % std::min<size_t>(stacks.size(), 64);
    if (depth[pick] >= 40) pick = 0;
    StackId s = table.InternStack(stacks[pick], frames[next() % frames.size()]);
    if (static_cast<uint32_t>(s) + 1 > stacks.size()) {
      stacks.push_back(s);
      depth.push_back(depth[pick] + 1);
    }
    uint64_t size = 64 + next() % (256 * 1024);
    snap.samples.push_back({id++, s, size, next() % 3 == 0});
  }
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  return BuildProfile(snap);
}

}  // namespace heapprof::testing
