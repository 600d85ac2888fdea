// Reads V8's AllocationProfile tree: maps node ids to nodes and resolves a
// node's stack into interned, V8-free frames (never keeping node ids, which
// V8 may reuse after pruning).
#pragma once

#include <v8-profiler.h>
#include <v8.h>

#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/stack_table.h"

namespace heapprof::internal {

// Frame cache that survives across snapshots of one window: a function is
// identified by (script id, start position), so its strings are copied once.
class FrameResolver {
 public:
  explicit FrameResolver(StackTable& table) : table_(table) {}
  FrameId Resolve(v8::Isolate* isolate, const v8::AllocationProfile::Node& node);

 private:
  StackTable& table_;
  std::map<std::tuple<int, int, int, int>, FrameId> by_position_;
};

// Node id -> interned stack. V8 numbers a sampler's nodes from one counter
// and never changes a node's frame or parent, so while one sampler runs (it
// is not stopped and restarted) a node's stack can be kept across snapshots;
// the map must be cleared with the StackTable it points into.
using NodeStackCache = std::unordered_map<uint32_t, StackId>;

// One snapshot's view of the tree: node id -> (node, parent).
class AllocationTree {
 public:
  // With `cache`, resolved nodes are kept there (across snapshots) instead of
  // in this tree (one snapshot).
  explicit AllocationTree(v8::AllocationProfile& profile, NodeStackCache* cache = nullptr);
  // The interned stack of a node (leaf = the node); StackId{0} if unknown.
  StackId StackOf(v8::Isolate* isolate, uint32_t node_id, FrameResolver& frames, StackTable& table);
  size_t node_count() const { return nodes_.size(); }

 private:
  struct Entry {
    v8::AllocationProfile::Node* node;
    uint32_t parent_id;  // 0 for children of the root
  };
  std::unordered_map<uint32_t, Entry> nodes_;
  NodeStackCache own_;
  NodeStackCache* resolved_;
  uint32_t root_id_ = 0;
};

}  // namespace heapprof::internal
