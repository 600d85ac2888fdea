// The always-on sampler: one per isolate, started once and never stopped
// until the isolate ends (DESIGN.md "Round 3"). V8's sampler runs without
// the include-collected flags, so it holds exactly the samples whose objects
// are alive (memory: the live heap / interval). A *window* is a range of V8
// sample ids [first, last] with its wall-clock span; windows may overlap.
// While some window is open a GC-prologue ledger records every sample that
// an open window covers before a GC can free it (alloc_* of the window);
// with no window open there is no ledger and no GC callback at all.
//
// Everything here runs on the isolate's thread with the isolate entered.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/status.h"
#include "heapprof/v8/session.h"

namespace v8 {
class Isolate;
}  // namespace v8

namespace heapprof {

struct SamplerOptions {
  uint64_t interval_bytes = kDefaultIntervalBytes;  // mean bytes between samples (fixed for the sampler's life)
  int max_stack_depth = 64;                         // frames kept per stack (fixed for the sampler's life)
  // The full GC before a snapshot that asks for one (see SessionOptions::full_gc).
  std::function<void()> full_gc;
  // Cap on ledger entries (sampled allocations kept for open windows) and on
  // the samples of one snapshot; the rest are counted as dropped.
  uint64_t max_samples = 4'000'000;
  // The heap limit reported in snapshots: the configured one. 0: V8's limit
  // when the sampler started (before any near-limit raise).
  uint64_t heap_limit_bytes = 0;
};

// The sampler options a window's SessionOptions imply.
SamplerOptions SamplerOptionsFrom(const SessionOptions& options);

// What a window records about itself (per window, not per sampler).
struct WindowLabels {
  std::string isolate_name;   // recorded in the profile
  int inlining_allowed = -1;  // recorded: 1 allowed, 0 disabled, -1 unknown
};

// An open window: its id range starts at first_sample_id.
struct WindowMark {
  uint64_t window = 0;           // the sampler's number for it (0: none)
  uint64_t first_sample_id = 0;  // the window's samples have ids >= this
  int64_t start_unix_nanos = 0;
  std::chrono::steady_clock::time_point start;
};

// Counters for tests and the benchmark.
struct SamplerStats {
  uint64_t open_windows = 0;
  uint64_t ledger_entries = 0;      // sampled allocations held for open windows
  uint64_t ledger_bytes = 0;        // their memory, with the interned stacks
  uint64_t last_sample_id = 0;      // the highest V8 sample id seen so far
  uint64_t prologue_snapshots = 0;  // GC-prologue snapshots over the sampler's life
  int64_t prologue_nanos = 0;       // time spent in them
  uint64_t interned_stacks = 0;     // stacks in the sampler's table
};

class Sampler {
 public:
  // Starts V8's sampler on the isolate. Fails (as a value) when V8's sampler
  // is held by someone else (the inspector), a Session or another Sampler
  // holds this isolate, or the options are bad.
  static Result<std::unique_ptr<Sampler>> Start(v8::Isolate* isolate, const SamplerOptions& options = {});
  ~Sampler();  // stops V8's sampler
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Opens a window: its samples are those with ids after every sample taken
  // so far (one snapshot of V8's profile finds where that is).
  WindowMark OpenWindow(const WindowLabels& labels = {});
  // Closes a window: optional full GC, a final snapshot; alloc_* = the
  // samples with ids in [first, last], inuse_* = those of them still alive.
  // The window's ledger entries are released once no other window needs them.
  Result<RawSnapshot> CloseWindow(const WindowMark& mark, bool full_gc);
  // Drops a window without a snapshot (its requester gave up).
  void AbandonWindow(const WindowMark& mark);
  // Every sample alive now, whatever its age: live = true, allocated = false
  // (an in-use profile; alloc_* belong to windows). With `full_gc`, garbage
  // is collected first (not inside a GC callback).
  Result<RawSnapshot> LiveSnapshot(bool full_gc);

  const SamplerOptions& options() const;
  SamplerStats stats() const;
  // Wall time at which this sampler started (what a LiveSnapshot can see back to).
  int64_t start_unix_nanos() const;

  class Impl;

 private:
  explicit Sampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace heapprof
