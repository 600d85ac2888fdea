// A V8-free copy of what V8's sampling heap profiler knew at the end of one
// window: resolved frames, interned stacks and individual samples. Taken on
// the isolate thread; everything that follows (profile_builder.h) runs
// without V8 and without the isolate lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace heapprof {

// Index into RawSnapshot::frames.
enum class FrameId : uint32_t {};
// Index into RawSnapshot::stacks; StackId{0} is the empty stack (V8's root).
enum class StackId : uint32_t {};

// One resolved JS (or VM-state) frame, as V8 reports it.
struct Frame {
  std::string function_name;  // may be empty for anonymous functions
  std::string script_name;    // script URL or name; empty for VM-state frames
  int script_id = 0;          // 0 when there is no script
  int line = 0;               // 1-based start line of the function, 0 = unknown
  int column = 0;             // 1-based start column, 0 = unknown

  bool operator==(const Frame&) const = default;
};

// A stack as a trie node: the frame on top of `parent` (towards the leaf).
struct StackNode {
  StackId parent{};
  FrameId frame{};
};

// One sampled allocation.
struct RawSample {
  uint64_t sample_id = 0;  // V8's time-ordered id, 1-based within a window
  StackId stack{};
  uint64_t size = 0;      // object size in bytes
  bool live = false;      // still alive at the end of the window
  bool allocated = true;  // counts in alloc_*; false for a DevTools in-use-only window (heapprof attach)
};

// The mean bytes between samples when nobody says (sessions, heapprof attach, serve, run).
inline constexpr uint64_t kDefaultIntervalBytes = 512 * 1024;

// Facts about the window that go into the profile's metadata.
struct WindowInfo {
  int64_t start_unix_nanos = 0;
  int64_t duration_nanos = 0;
  uint64_t interval_bytes = kDefaultIntervalBytes;
  int max_stack_depth = 64;
  std::string v8_version;
  std::string isolate_name;
  std::string strategy;  // "gc-prologue-ledger" or "native-liveness"
  bool gc_before_snapshot = true;
  int inlining_allowed = -1;  // 1 yes, 0 no, -1 unknown
  uint64_t heap_used_bytes = 0;
  uint64_t heap_limit_bytes = 0;
  uint64_t prologue_snapshots = 0;  // GC-prologue snapshots taken (ledger only)
  int64_t prologue_nanos = 0;       // time spent in them, in total
  uint64_t dropped_samples = 0;     // samples beyond the cap, not recorded
  uint64_t missing_sample_ids = 0;  // gaps in the window's id sequence
  uint64_t profiler_samples = 0;    // samples attributed to heapprof's own snapshots
  std::vector<std::string> notes;   // extra "key: value" comments
};

// The wall clock in nanoseconds since the Unix epoch, as WindowInfo and
// LiveSnapshot times record it.
inline int64_t UnixNanosNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct RawSnapshot {
  std::vector<Frame> frames;
  std::vector<StackNode> stacks;  // stacks[0] is the empty stack
  std::vector<RawSample> samples;
  WindowInfo info;
};

}  // namespace heapprof
