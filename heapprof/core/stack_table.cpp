#include <functional>

#include "heapprof/core/stack_table.h"

namespace heapprof::internal {

StackTable::StackTable() { stacks_.push_back(StackNode{}); }

size_t StackTable::FrameHash::operator()(const Frame& f) const {
  size_t h = std::hash<std::string>{}(f.function_name);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(std::hash<std::string>{}(f.script_name));
  mix(static_cast<size_t>(f.script_id));
  mix(static_cast<size_t>(f.line) << 20 ^ static_cast<size_t>(f.column));
  return h;
}

FrameId StackTable::InternFrame(const Frame& frame) {
  auto [it, inserted] = frame_index_.try_emplace(frame, FrameId{static_cast<uint32_t>(frames_.size())});
  if (inserted) frames_.push_back(frame);
  return it->second;
}

StackId StackTable::InternStack(StackId parent, FrameId frame) {
  uint64_t key = (uint64_t{static_cast<uint32_t>(parent)} << 32) | static_cast<uint32_t>(frame);
  auto [it, inserted] = stack_index_.try_emplace(key, StackId{static_cast<uint32_t>(stacks_.size())});
  if (inserted) stacks_.push_back(StackNode{parent, frame});
  return it->second;
}

size_t StackTable::MemoryBytes() const {
  size_t bytes = frames_.capacity() * sizeof(Frame) + stacks_.capacity() * sizeof(StackNode);
  for (const Frame& f : frames_) bytes += f.function_name.capacity() + f.script_name.capacity();
  // Node-based hash maps: one node (key, value, next pointer, hash) per entry plus buckets.
  bytes += frame_index_.size() * (sizeof(Frame) + sizeof(FrameId) + 2 * sizeof(void*)) +
           frame_index_.bucket_count() * sizeof(void*);
  bytes += stack_index_.size() * (sizeof(uint64_t) + sizeof(StackId) + 2 * sizeof(void*)) +
           stack_index_.bucket_count() * sizeof(void*);
  return bytes;
}

}  // namespace heapprof::internal
