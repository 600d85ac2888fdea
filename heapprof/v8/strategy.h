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
  // stacks, samples and the strategy's counters of `out`.
  virtual Status Finish(v8::Isolate* isolate, RawSnapshot& out) = 0;
  // Detaches callbacks; safe to call more than once.
  virtual void Detach(v8::Isolate* isolate) = 0;
  virtual uint64_t prologue_snapshots() const { return 0; }
};

std::unique_ptr<Strategy> MakeLedgerStrategy(const SessionOptions& options);
std::unique_ptr<Strategy> MakeNativeLivenessStrategy(const SessionOptions& options);

}  // namespace heapprof::internal
