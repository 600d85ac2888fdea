// Reads V8's AllocationProfile tree: maps node ids to nodes and resolves a
// node's stack into interned, V8-free frames (never keeping node ids past the
// sampler run that numbered them).
#pragma once

#include <v8-profiler.h>
#include <v8.h>

#include <map>
#include <optional>
#include <tuple>
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
// the cache must be cleared with the StackTable it points into. Ids are
// dense, so both the cache and the tree index it lends AllocationTree are
// vectors by id (4 + 16 bytes a node V8 made while the cache lives), not
// hash maps: a snapshot that meets a new node indexes the tree at the cost of
// a walk over V8's nodes, without an allocation per node.
class NodeStackCache {
 public:
  std::optional<StackId> Find(uint32_t node_id) const {
    if (node_id >= stacks_.size() || stacks_[node_id] == 0) return std::nullopt;
    return StackId{stacks_[node_id] - 1};
  }
  // Nodes whose stack is kept.
  size_t size() const { return known_; }
  void Clear();
  size_t MemoryBytes() const;

 private:
  friend class AllocationTree;
  struct IndexEntry {
    v8::AllocationProfile::Node* node = nullptr;  // non-null only for the nodes of the tree indexed now
    uint32_t parent_id = 0;                       // 0 for children of the root
  };
  void Set(uint32_t node_id, StackId stack);

  std::vector<uint32_t> stacks_;  // StackId + 1 by node id; 0: not resolved
  size_t known_ = 0;
  std::vector<IndexEntry> index_;  // by node id, reused by each AllocationTree
};

// One snapshot's view of the tree: node id -> (node, parent).
class AllocationTree {
 public:
  // With `cache`, resolved nodes are kept there (across snapshots) instead of
  // in this tree (one snapshot). One tree at a time may use a cache.
  explicit AllocationTree(v8::AllocationProfile& profile, NodeStackCache* cache = nullptr);
  ~AllocationTree();
  AllocationTree(const AllocationTree&) = delete;
  AllocationTree& operator=(const AllocationTree&) = delete;
  // The interned stack of a node (leaf = the node); StackId{0} if unknown.
  StackId StackOf(v8::Isolate* isolate, uint32_t node_id, FrameResolver& frames, StackTable& table);
  size_t node_count() const { return visited_.size(); }

 private:
  NodeStackCache own_;
  NodeStackCache* cache_;
  std::vector<uint32_t> visited_;  // the ids indexed, whose entries the destructor clears
  uint32_t root_id_ = 0;
};

}  // namespace heapprof::internal
