// Hand-made, V8-shaped profiles shared by the encoder tests.
#pragma once

#include "heapprof/core/profile_builder.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/stack_table.h"

namespace heapprof::testing {

// main -> handler -> {leak, parse -> (anonymous)}, parse also allocates large
// objects itself, and a VM-state (GC) frame at the root; interval 4 KiB.
inline RawSnapshot HandMadeSnapshot() {
  internal::StackTable t;
  FrameId main_f = t.InternFrame({"main", "file:///srv/worker.js", 1, 1, 1});
  FrameId handler = t.InternFrame({"handler", "file:///srv/worker.js", 1, 10, 3});
  FrameId leak = t.InternFrame({"leak", "file:///srv/metrics.js", 2, 20, 5});
  FrameId parse = t.InternFrame({"parse", "file:///srv/worker.js", 1, 40, 7});
  FrameId garbage = t.InternFrame({"", "file:///srv/worker.js", 1, 44, 9});
  FrameId gc = t.InternFrame({"(GC)", "", 0, 0, 0});
  StackId m = t.InternStack(StackId{0}, main_f);
  StackId h = t.InternStack(m, handler);
  StackId hl = t.InternStack(h, leak);
  StackId hp = t.InternStack(h, parse);
  StackId hpg = t.InternStack(hp, garbage);
  StackId g = t.InternStack(StackId{0}, gc);
  RawSnapshot snap;
  snap.info.interval_bytes = 4096;
  snap.info.start_unix_nanos = 1'700'000'000'123'456'789;
  snap.info.duration_nanos = 2'500'000'000;
  snap.info.v8_version = "10.2.154.26";
  snap.info.isolate_name = "worker-a";
  snap.info.strategy = "gc-prologue-ledger";
  snap.info.heap_used_bytes = 12345678;
  snap.info.heap_limit_bytes = 128u << 20;
  uint64_t id = 1;
  for (int i = 0; i < 25; ++i) snap.samples.push_back({id++, hl, 128, true});
  for (int i = 0; i < 40; ++i) snap.samples.push_back({id++, hpg, 64, i % 4 == 0});
  for (int i = 0; i < 3; ++i) snap.samples.push_back({id++, hp, 100000, false});
  snap.samples.push_back({id++, g, 32, false});
  snap.frames = t.TakeFrames();
  snap.stacks = t.TakeStacks();
  return snap;
}

}  // namespace heapprof::testing
