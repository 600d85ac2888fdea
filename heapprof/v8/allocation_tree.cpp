#include "heapprof/v8/allocation_tree.h"

#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {

FrameId FrameResolver::Resolve(v8::Isolate* isolate, const v8::AllocationProfile::Node& node) {
  // VM-state pseudo frames ("(GC)", "(V8 API)") have no script: key them by name.
  bool has_script = node.script_id > 0;
  auto key = std::make_tuple(node.script_id, node.start_position, node.line_number, node.column_number);
  if (has_script) {
    auto it = by_position_.find(key);
    if (it != by_position_.end()) return it->second;
  }
  Frame frame;
  frame.function_name = ToStdString(isolate, node.name);
  frame.script_name = ToStdString(isolate, node.script_name);
  frame.script_id = has_script ? node.script_id : 0;
  frame.line = node.line_number > 0 ? node.line_number : 0;
  frame.column = node.column_number > 0 ? node.column_number : 0;
  FrameId id = table_.InternFrame(frame);
  if (has_script) by_position_.emplace(key, id);
  return id;
}

void NodeStackCache::Set(uint32_t node_id, StackId stack) {
  if (node_id >= stacks_.size()) stacks_.resize(std::max<size_t>(node_id + 1, stacks_.size() * 3 / 2), 0);
  if (stacks_[node_id] == 0) ++known_;
  stacks_[node_id] = static_cast<uint32_t>(stack) + 1;
}

void NodeStackCache::Clear() {
  stacks_ = {};
  index_ = {};
  known_ = 0;
}

size_t NodeStackCache::MemoryBytes() const {
  return stacks_.capacity() * sizeof(uint32_t) + index_.capacity() * sizeof(IndexEntry);
}

AllocationTree::AllocationTree(v8::AllocationProfile& profile, NodeStackCache* cache) : cache_(cache ? cache : &own_) {
  std::vector<NodeStackCache::IndexEntry>& index = cache_->index_;
  v8::AllocationProfile::Node* root = profile.GetRootNode();
  root_id_ = root->node_id;
  std::vector<v8::AllocationProfile::Node*> pending{root};
  while (!pending.empty()) {
    v8::AllocationProfile::Node* node = pending.back();
    pending.pop_back();
    for (v8::AllocationProfile::Node* child : node->children) {
      const uint32_t id = child->node_id;
      if (id >= index.size()) index.resize(std::max<size_t>(id + 1, index.size() * 3 / 2));
      index[id] = {child, node == root ? 0 : node->node_id};
      visited_.push_back(id);
      pending.push_back(child);
    }
  }
}

AllocationTree::~AllocationTree() {
  // The nodes die with the profile: a later tree must not find them.
  for (uint32_t id : visited_) cache_->index_[id].node = nullptr;
}

StackId AllocationTree::StackOf(v8::Isolate* isolate, uint32_t node_id, FrameResolver& frames, StackTable& table) {
  if (node_id == root_id_) return StackId{0};
  const std::vector<NodeStackCache::IndexEntry>& index = cache_->index_;
  // Walk up to the nearest resolved ancestor, then intern downwards.
  std::vector<uint32_t> chain;
  StackId base{0};
  for (uint32_t id = node_id; id != 0;) {
    if (std::optional<StackId> done = cache_->Find(id)) {
      base = *done;
      break;
    }
    if (id >= index.size() || index[id].node == nullptr) break;
    chain.push_back(id);
    id = index[id].parent_id;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    FrameId frame = frames.Resolve(isolate, *index[*it].node);
    base = table.InternStack(base, frame);
    cache_->Set(*it, base);
  }
  return base;
}

}  // namespace heapprof::internal
