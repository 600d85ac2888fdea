// The two ways of getting alloc_* and inuse_* out of one window, behind one
// interface. The build picks one by feature detection on the V8 headers.
#pragma once

#include <v8-profiler.h>
#include <v8.h>

#include <memory>

#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/status.h"
#include "heapprof/v8/session.h"

namespace heapprof::internal {

// True when the V8 headers report liveness per sample (newer V8).
template <typename S>
concept SampleHasIsLive = requires(const S& s) {
  s.is_live;
};
#ifdef HEAPPROF_FORCE_LEDGER
// A build that keeps the ledger even on V8 with is_live (to compare the two).
inline constexpr bool kNativeLiveness = false;
#else
inline constexpr bool kNativeLiveness = SampleHasIsLive<v8::AllocationProfile::Sample>;
#endif

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual const char* name() const = 0;
  // Flags for StartSamplingHeapProfiler.
  virtual v8::HeapProfiler::SamplingFlags sampling_flags() const = 0;
  // Called right after the sampler started.
  virtual void OnStarted(v8::Isolate* isolate) = 0;
  // The final snapshot, taken while the sampler still runs: fills frames,
  // stacks, samples, the heap's size (ReadHeapSize) and the strategy's
  // counters of `out`.
  virtual Status Finish(v8::Isolate* isolate, RawSnapshot& out) = 0;
  // Detaches callbacks; safe to call more than once.
  virtual void Detach(v8::Isolate* isolate) = 0;
  virtual uint64_t prologue_snapshots() const { return 0; }
};

// The heap's used size and limit into out.info, read after the pre-snapshot
// GC and before the snapshot allocates: measured on V8 10.2 with the sampler
// running, the first allocation after a full GC (one short string) raised the
// used old space by ~150 KiB that the next GC gave back: V8's accounting of
// the block it allocates from, not the isolate's objects.
inline void ReadHeapSize(v8::Isolate* isolate, RawSnapshot& out) {
  v8::HeapStatistics heap;
  isolate->GetHeapStatistics(&heap);
  out.info.heap_used_bytes = heap.used_heap_size();
  out.info.heap_limit_bytes = heap.heap_size_limit();
}

std::unique_ptr<Strategy> MakeLedgerStrategy(const SessionOptions& options);
std::unique_ptr<Strategy> MakeNativeLivenessStrategy(const SessionOptions& options);

}  // namespace heapprof::internal
