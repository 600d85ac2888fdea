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

AllocationTree::AllocationTree(v8::AllocationProfile& profile, NodeStackCache* cache)
    : resolved_(cache ? cache : &own_) {
  v8::AllocationProfile::Node* root = profile.GetRootNode();
  root_id_ = root->node_id;
  std::vector<v8::AllocationProfile::Node*> pending{root};
  while (!pending.empty()) {
    v8::AllocationProfile::Node* node = pending.back();
    pending.pop_back();
    for (v8::AllocationProfile::Node* child : node->children) {
      nodes_.emplace(child->node_id, Entry{child, node == root ? 0 : node->node_id});
      pending.push_back(child);
    }
  }
}

StackId AllocationTree::StackOf(v8::Isolate* isolate, uint32_t node_id, FrameResolver& frames, StackTable& table) {
  if (node_id == root_id_) return StackId{0};
  // Walk up to the nearest resolved ancestor, then intern downwards.
  std::vector<uint32_t> chain;
  StackId base{0};
  for (uint32_t id = node_id; id != 0;) {
    auto done = resolved_->find(id);
    if (done != resolved_->end()) {
      base = done->second;
      break;
    }
    auto it = nodes_.find(id);
    if (it == nodes_.end()) break;
    chain.push_back(id);
    id = it->second.parent_id;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    FrameId frame = frames.Resolve(isolate, *nodes_.at(*it).node);
    base = table.InternStack(base, frame);
    resolved_->emplace(*it, base);
  }
  return base;
}

}  // namespace heapprof::internal
