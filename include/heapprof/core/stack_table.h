// Internal: interns the frames and stacks of a RawSnapshot while it is taken
// (the collector strategies, the .heapprofile and DevTools importers, tests
// that build snapshots by hand). Not API: a RawSnapshot is a plain struct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "heapprof/core/raw_snapshot.h"

namespace heapprof::internal {

// Interns frames and stacks: equal frames get one FrameId, equal (parent, frame) one StackId.
class StackTable {
 public:
  StackTable();
  FrameId InternFrame(const Frame& frame);
  StackId InternStack(StackId parent, FrameId frame);

  const std::vector<Frame>& frames() const { return frames_; }
  const std::vector<StackNode>& stacks() const { return stacks_; }
  std::vector<Frame> TakeFrames() { return std::move(frames_); }
  std::vector<StackNode> TakeStacks() { return std::move(stacks_); }
  // Approximate heap bytes held by the tables.
  size_t MemoryBytes() const;

 private:
  struct FrameHash {
    size_t operator()(const Frame& f) const;
  };
  std::vector<Frame> frames_;
  std::vector<StackNode> stacks_;  // [0] is the root
  std::unordered_map<Frame, FrameId, FrameHash> frame_index_;
  std::unordered_map<uint64_t, StackId> stack_index_;  // (parent << 32 | frame)
};

}  // namespace heapprof::internal
