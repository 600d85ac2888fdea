// A profiling window on one isolate: Start() opens it, std::move(s).Stop()
// closes it and yields a V8-free RawSnapshot. Call both on the isolate's
// thread, with the isolate entered (or locked); nothing else needs the lock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "heapprof/core/profile.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/status.h"

namespace v8 {
class Isolate;
}  // namespace v8

namespace heapprof {

struct SessionOptions {
  uint64_t interval_bytes = kDefaultIntervalBytes;  // mean bytes between samples
  int max_stack_depth = 64;                         // frames kept per stack
  bool gc_before_snapshot = true;                   // full GC before the in-use snapshot
  // Runs that GC where V8's testing API is off (V8 started by someone else):
  // the Node addon passes the gc() of --expose-gc. Empty: a critical
  // memory-pressure notification, a memory-reducing GC that costs 2-3x a
  // plain one on small heaps (heapprof/node/README.md).
  std::function<void()> full_gc;
  uint64_t max_samples = 4'000'000;  // cap on recorded samples; the rest are counted as dropped
  std::string isolate_name;          // recorded in the profile
  int inlining_allowed = -1;         // recorded: 1 allowed, 0 disabled, -1 unknown
};

// The sampling strategy compiled into this build: "native-liveness" when the
// V8 headers have AllocationProfile::Sample::is_live, else "gc-prologue-ledger".
const char* CompiledStrategy();

// One open window. Move-only; a destroyed, unstopped session stops the
// sampler and discards its data.
class [[nodiscard]] Session {
 public:
  // Opens a window. Fails (as a value) when the sampler is held by someone
  // else, a window is already open on this isolate, or the options are bad.
  static Result<Session> Start(v8::Isolate* isolate, const SessionOptions& options = {});

  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  // Closes the window: optional full GC, final snapshot, sampler stopped.
  Result<RawSnapshot> Stop() &&;
  // Stop() then BuildProfile(); convenient when no other thread is at hand.
  Result<Profile> StopAndBuild() &&;

  // Whether this object still owns an open window.
  bool active() const;
  // GC-prologue snapshots taken so far (0 for native liveness).
  uint64_t prologue_snapshots() const;

  class Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace heapprof
