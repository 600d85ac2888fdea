// Chrome DevTools .heapprofile JSON <-> Profile. What the format cannot carry
// is listed in include/heapprof/core/heapprofile.h and docs/formats.md.
#include "heapprof/core/heapprofile.h"

#include "heapprof/core/heapprofile_tree.h"
#include "heapprof/core/inspector_sizes.h"
#include "heapprof/core/profile_tables.h"
#include "heapprof/core/stack_table.h"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/core/report.h"

namespace heapprof {
namespace {

using Json = nlohmann::json;

// Frames over all imported samples: ~64 MiB of location ids, some 30 times what
// a real file (10^4 stacks of up to 128 frames with bytes) needs.
constexpr uint64_t kMaxImportedFrames = uint64_t{1} << 24;
// A node's selfSize or an object's size: 64 GiB, beyond any V8 heap. With at
// most 2^25 samples in a 1 GiB file, products and sums stay below 2^61.
constexpr int64_t kMaxImportedSize = int64_t{1} << 36;

Status Invalid(std::string message) { return Error(ErrorCode::kDataLoss, "heapprofile: " + std::move(message)); }

// ---- export ----

struct TreeNode {
  uint64_t key = 0;  // location id << 16 | line index: one node per frame
  int parent = -1;
  int64_t self = 0;
  std::vector<int> children;
  std::unordered_map<uint64_t, int> child_index;
};

class ScriptIds {
 public:
  std::string operator()(std::string_view url) {
    if (url.empty()) return "0";
    auto [it, inserted] = ids_.emplace(std::string(url), ids_.size() + 1);
    return std::to_string(it->second);
  }

 private:
  std::unordered_map<std::string, size_t> ids_;
};

Json CallFrame(const Profile& p, const Line& line, ScriptIds& script_ids) {
  const Function& f = p.function(line.function);
  int64_t start = line.line != 0 ? line.line : f.start_line;
  return Json{{"functionName", p.str(f.name)},
              {"scriptId", script_ids(p.str(f.filename))},
              {"url", p.str(f.filename)},
              {"lineNumber", start - 1},  // 0-based; -1 = unknown
              {"columnNumber", line.column - 1}};
}

// ---- import ----

int64_t IntField(const Json& object, const char* key, int64_t fallback, bool* ok) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(it->get<uint64_t>());
  }
  if (it->is_number_float()) {
    double d = it->get<double>();
    if (std::isfinite(d) && std::fabs(d) < 9.0e15) return std::llround(d);
  }
  *ok = false;
  return fallback;
}

// The node tree and samples[] of a .heapprofile or a DevTools sampling
// profile, validated, before they become a Profile or a RawSnapshot.
class TreeReader {
 public:
  struct Node {
    int parent = -1;
    Frame frame;  // unused for the head, V8's "(root)"
    int64_t self = 0;
    std::map<int64_t, int64_t> sizes;  // object size -> samples of that size
  };
  struct SampleEntry {
    size_t node = 0;
    int64_t size = 0;
    uint64_t ordinal = 0;
  };

  Status Read(const Json& root) {
    if (!root.is_object()) return Invalid("the top level is not a JSON object");
    auto head = root.find("head");
    if (head == root.end() || !head->is_object()) return Invalid("missing the \"head\" node tree");
    HEAPPROF_RETURN_IF_ERROR(ReadTree(*head));
    HEAPPROF_RETURN_IF_ERROR(ReadSamples(root));
    return CheckStackFrames();
  }

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<SampleEntry>& samples() const { return samples_; }
  uint64_t orphans() const { return orphans_; }

 private:
  Status ReadTree(const Json& head) {
    // Explicit stack: a hostile file can nest deeper than the C++ stack allows.
    std::vector<std::pair<const Json*, int>> pending{{&head, -1}};
    while (!pending.empty()) {
      auto [node, parent] = pending.back();
      pending.pop_back();
      const size_t ordinal = nodes_.size();
      if (!node->is_object()) return Invalid(fmt::format("node #{} is not a JSON object", ordinal));
      bool ok = true;
      auto id_it = node->find("id");
      if (id_it == node->end()) return Invalid(fmt::format("node #{} has no \"id\"", ordinal));
      int64_t id = IntField(*node, "id", 0, &ok);
      int64_t self = IntField(*node, "selfSize", 0, &ok);
      if (!ok) return Invalid(fmt::format("node #{} (id {}): \"id\" and \"selfSize\" must be numbers", ordinal, id));
      if (self < 0) return Invalid(fmt::format("node id {} has a negative selfSize ({})", id, self));
      if (self > kMaxImportedSize) {
        return Invalid(
            fmt::format("node id {} has a selfSize of {}, beyond 2^36 (64 GiB, more than any heap)", id, self));
      }
      auto [it, inserted] = node_index_.emplace(id, ordinal);
      if (!inserted) return Invalid(fmt::format("node id {} is used twice", id));

      Node info;
      info.parent = parent;
      info.self = self;
      if (parent >= 0) {  // the head is V8's "(root)": not a frame
        HEAPPROF_ASSIGN_OR_RETURN(Frame frame, ReadCallFrame(*node, id));
        info.frame = std::move(frame);
      }
      nodes_.push_back(std::move(info));

      auto children = node->find("children");
      if (children == node->end() || children->is_null()) continue;
      if (!children->is_array()) return Invalid(fmt::format("node id {}: \"children\" is not an array", id));
      for (auto c = children->rbegin(); c != children->rend(); ++c) {
        pending.emplace_back(&*c, static_cast<int>(ordinal));
      }
    }
    return Status::Ok();
  }

  static Result<Frame> ReadCallFrame(const Json& node, int64_t id) {
    auto cf = node.find("callFrame");
    if (cf == node.end() || !cf->is_object()) return Invalid(fmt::format("node id {} has no \"callFrame\" object", id));
    auto name_it = cf->find("functionName");
    if (name_it == cf->end() || !name_it->is_string()) {
      return Invalid(fmt::format("node id {}: callFrame.functionName must be a string", id));
    }
    Frame frame;
    if (auto u = cf->find("url"); u != cf->end() && !u->is_null()) {
      if (!u->is_string()) return Invalid(fmt::format("node id {}: callFrame.url must be a string", id));
      frame.script_name = u->get<std::string>();
    }
    bool ok = true;
    int64_t line0 = IntField(*cf, "lineNumber", -1, &ok);
    int64_t column0 = IntField(*cf, "columnNumber", -1, &ok);
    if (!ok || line0 > INT32_MAX - 1 || column0 > INT32_MAX - 1) {
      return Invalid(fmt::format("node id {}: callFrame line and column must be numbers", id));
    }
    std::string script;
    if (auto s = cf->find("scriptId"); s != cf->end()) {
      if (s->is_string())
        script = s->get<std::string>();
      else if (s->is_number_integer())
        script = std::to_string(s->get<int64_t>());
    }
    frame.line = line0 >= 0 ? static_cast<int>(line0 + 1) : 0;  // the model is 1-based, 0 = unknown
    frame.column = column0 >= 0 ? static_cast<int>(column0 + 1) : 0;
    frame.function_name = name_it->get<std::string>();
    if (frame.function_name.empty() && frame.script_name.empty() && !script.empty() && script != "0") {
      frame.function_name = fmt::format("(anonymous script {})", script);  // keeps anonymous functions apart
    }
    return frame;
  }

  Status ReadSamples(const Json& root) {
    auto samples = root.find("samples");
    if (samples == root.end() || samples->is_null()) return Status::Ok();
    if (!samples->is_array()) return Invalid("\"samples\" is not an array");
    for (size_t i = 0; i < samples->size(); ++i) {
      const Json& s = (*samples)[i];
      if (!s.is_object()) return Invalid(fmt::format("samples[{}] is not a JSON object", i));
      bool ok = true;
      if (!s.contains("nodeId") || !s.contains("size")) {
        return Invalid(fmt::format("samples[{}] needs \"size\" and \"nodeId\"", i));
      }
      int64_t node_id = IntField(s, "nodeId", 0, &ok);
      int64_t size = IntField(s, "size", 0, &ok);
      int64_t ordinal = IntField(s, "ordinal", static_cast<int64_t>(i + 1), &ok);
      if (!ok) return Invalid(fmt::format("samples[{}]: \"size\" and \"nodeId\" must be numbers", i));
      if (size < 0) return Invalid(fmt::format("samples[{}] has a negative size ({})", i, size));
      if (size > kMaxImportedSize) {
        return Invalid(fmt::format("samples[{}] has a size of {}, beyond 2^36 (64 GiB, more than any heap)", i, size));
      }
      auto it = node_index_.find(node_id);
      if (it == node_index_.end()) {
        ++orphans_;  // V8's own allocations while it wrote the file
        continue;
      }
      ++nodes_[it->second].sizes[size];
      samples_.push_back(SampleEntry{it->second, size, static_cast<uint64_t>(std::max<int64_t>(ordinal, 0))});
    }
    return Status::Ok();
  }

  // Every pprof sample carries its whole stack, so a deep tree with bytes at
  // every level costs depth^2 frames: refuse such a file up front instead of
  // spending minutes and gigabytes on it.
  Status CheckStackFrames() const {
    std::vector<uint32_t> depth(nodes_.size(), 0);
    uint64_t frames = 0;
    uint32_t deepest = 0;
    for (size_t n = 1; n < nodes_.size(); ++n) {
      const Node& node = nodes_[n];
      depth[n] = depth[static_cast<size_t>(node.parent)] + 1;
      if (node.self == 0 && node.sizes.empty()) continue;
      frames += uint64_t{depth[n]} * std::max<uint64_t>(1, node.sizes.size());
      deepest = std::max(deepest, depth[n]);
    }
    if (frames > kMaxImportedFrames) {
      return Error(ErrorCode::kResourceExhausted,
                   fmt::format("heapprofile: the samples' stacks would hold {} frames in all (up to {} deep), more "
                               "than the {} heapprof imports",
                               frames, deepest, kMaxImportedFrames));
    }
    return Status::Ok();
  }

  std::vector<Node> nodes_;
  std::vector<SampleEntry> samples_;
  std::unordered_map<int64_t, size_t> node_index_;
  uint64_t orphans_ = 0;
};

// A read tree as a Profile: selfSize gives each node's space, samples[] split
// it by object size.
class ProfileEmitter {
 public:
  explicit ProfileEmitter(const TreeReader& tree) : tree_(tree) {}

  Profile Run() {
    p_.sample_types = {{Intern("alloc_objects"), Intern("count")},
                       {Intern("alloc_space"), Intern("bytes")},
                       {Intern("inuse_objects"), Intern("count")},
                       {Intern("inuse_space"), Intern("bytes")}};
    p_.period_type = {Intern("space"), Intern("bytes")};
    p_.default_sample_type = Intern("inuse_space");
    bytes_ = Intern("bytes");
    EmitSamples();
    p_.comments.push_back(Intern("source: .heapprofile"));
    p_.comments.push_back(
        Intern("note: alloc_* and inuse_* both hold the file's samples (a .heapprofile has no alloc/in-use split)"));
    if (tree_.orphans() > 0) {
      p_.comments.push_back(Intern(fmt::format("heapprofile_orphan_samples: {}", tree_.orphans())));
    }
    return std::move(p_);
  }

 private:
  StringId Intern(std::string_view s) { return strings_(s); }
  LocationId LocationOf(const Frame& frame) { return locations_.Of(frame); }

  void EmitSamples() {
    const std::vector<TreeReader::Node>& nodes = tree_.nodes();
    std::vector<LocationId> locations(nodes.size(), LocationId{0});
    for (size_t n = 1; n < nodes.size(); ++n) locations[n] = LocationOf(nodes[n].frame);
    for (size_t n = 1; n < nodes.size(); ++n) {
      const TreeReader::Node& node = nodes[n];
      if (node.self == 0 && node.sizes.empty()) continue;
      std::vector<LocationId> stack;  // leaf first; the head is not a frame
      for (int i = static_cast<int>(n); i > 0; i = nodes[i].parent) stack.push_back(locations[i]);

      auto add = [&](int64_t objects, int64_t space, int64_t size, bool labelled) {
        Sample s;
        s.locations = stack;
        s.values = {objects, space, objects, space};
        if (labelled) s.labels.push_back(Label{bytes_, StringId{0}, size, bytes_});
        p_.samples.push_back(std::move(s));
      };
      int64_t sampled = 0;
      for (const auto& [size, count] : node.sizes) sampled += size * count;
      if (node.sizes.empty() || sampled == 0) {
        add(0, node.self, 0, false);  // no object sizes known: space only
        continue;
      }
      // selfSize is the node's space; samples[] split it by object size.
      const int64_t total = node.self > 0 ? node.self : sampled;
      int64_t assigned = 0;
      size_t k = 0;
      for (const auto& [size, count] : node.sizes) {
        ++k;
        int64_t space = total == sampled ? size * count
                        : k == node.sizes.size()
                            ? total - assigned
                            : std::llround(static_cast<double>(total) * static_cast<double>(size * count) /
                                           static_cast<double>(sampled));
        assigned += space;
        int64_t objects = total == sampled ? count
                          : size > 0       ? std::llround(static_cast<double>(space) / static_cast<double>(size))
                                           : count;
        add(objects, space, size, true);
      }
    }
  }

  const TreeReader& tree_;
  Profile p_;
  StringId bytes_{};
  internal::StringInterner strings_{p_};
  internal::LocationTable locations_{p_, strings_};
};

Result<Json> ParseJson(std::string_view json) {
  if (json.empty()) return Invalid("input is empty (0 bytes)");
  try {
    return Json::parse(json.begin(), json.end());
  } catch (const Json::exception& e) {
    return Invalid(fmt::format("not valid JSON: {}", e.what()));
  }
}

}  // namespace

Result<std::string> EncodeHeapProfile(const Profile& profile, const HeapProfileExportOptions& options) {
  HEAPPROF_RETURN_IF_ERROR(ValidateProfile(profile));
  HEAPPROF_ASSIGN_OR_RETURN(int index, ResolveSampleIndex(profile, options.sample_type));

  std::vector<TreeNode> nodes(1);  // [0] is the root
  Json samples = Json::array();
  for (const Sample& s : profile.samples) {
    int64_t value = s.values[index];
    if (value == 0) continue;
    if (value < 0) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("sample type {} has negative values, which .heapprofile cannot hold",
                               profile.str(profile.sample_types[index].type)));
    }
    int node = 0;
    for (auto loc = s.locations.rbegin(); loc != s.locations.rend(); ++loc) {  // root first
      const Location& location = profile.location(*loc);
      // Outermost inlined frame first; a location without lines is one frame.
      for (size_t line = std::max<size_t>(location.lines.size(), 1); line-- > 0;) {
        uint64_t key = (uint64_t{static_cast<uint32_t>(*loc)} << 16) | line;
        auto it = nodes[node].child_index.find(key);
        if (it == nodes[node].child_index.end()) {
          int child = static_cast<int>(nodes.size());
          nodes[node].child_index.emplace(key, child);
          nodes[node].children.push_back(child);
          nodes.push_back(TreeNode{key, node, 0, {}, {}});
          node = child;
        } else {
          node = it->second;
        }
      }
    }
    nodes[node].self += value;
    samples.push_back(Json{{"size", value}, {"nodeId", node + 1}, {"ordinal", samples.size() + 1}});
  }

  // The tree is written depth-first with an explicit stack, not as one nested
  // Json: nlohmann's dump recurses once per level, so a deep enough stack
  // would overflow the thread's. Keys in nlohmann's (sorted) order.
  // Frames are made back to front, as script ids have always been numbered.
  ScriptIds script_ids;
  std::vector<std::string> frames(nodes.size());
  for (size_t i = nodes.size(); i-- > 0;) {
    const TreeNode& n = nodes[i];
    Json frame;
    if (i == 0) {
      frame =
          Json{{"functionName", "(root)"}, {"scriptId", "0"}, {"url", ""}, {"lineNumber", -1}, {"columnNumber", -1}};
    } else {
      const Location& loc = profile.location(LocationId{static_cast<uint32_t>(n.key >> 16)});
      if (loc.lines.empty()) {
        frame = Json{{"functionName", fmt::format("(location 0x{:x})", loc.address)},
                     {"scriptId", "0"},
                     {"url", ""},
                     {"lineNumber", -1},
                     {"columnNumber", -1}};
      } else {
        frame = CallFrame(profile, loc.lines[n.key & 0xffff], script_ids);
      }
    }
    frames[i] = frame.dump();
  }
  std::string out = "{\"head\":";
  auto open_node = [&](size_t i) {
    out += "{\"callFrame\":";
    out += frames[i];
    out += ",\"children\":[";
  };
  struct Open {
    size_t node;
    size_t next_child;
  };
  std::vector<Open> open{{0, 0}};
  open_node(0);
  while (!open.empty()) {
    Open& top = open.back();
    const TreeNode& n = nodes[top.node];
    if (top.next_child < n.children.size()) {
      if (top.next_child > 0) out += ',';
      size_t child = static_cast<size_t>(n.children[top.next_child++]);
      open_node(child);
      open.push_back({child, 0});  // `top` is not used past this point
    } else {
      out += fmt::format("],\"id\":{},\"selfSize\":{}}}", top.node + 1, n.self);
      open.pop_back();
    }
  }
  out += ",\"samples\":";
  out += samples.dump();
  out += '}';
  return out;
}

Result<Profile> DecodeHeapProfile(std::string_view json) {
  HEAPPROF_ASSIGN_OR_RETURN(Json root, ParseJson(json));
  TreeReader tree;
  HEAPPROF_RETURN_IF_ERROR(tree.Read(root));
  Profile profile = ProfileEmitter(tree).Run();
  if (Status s = CheckValueTotals(profile); !s.ok()) return Invalid(s.message());
  return profile;
}

Result<RawSnapshot> SamplingProfileSnapshot(const nlohmann::json& profile, const SampledWindow& window,
                                            internal::StackTable& table) {
  if (window.interval_bytes == 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "a sampling profile needs the interval it was sampled at (its sizes are scaled by it)");
  }
  TreeReader tree;
  HEAPPROF_RETURN_IF_ERROR(tree.Read(profile));
  const std::vector<TreeReader::Node>& nodes = tree.nodes();
  std::vector<StackId> stacks(nodes.size(), StackId{0});
  for (size_t n = 1; n < nodes.size(); ++n) {  // parents come before their children
    stacks[n] = table.InternStack(stacks[static_cast<size_t>(nodes[n].parent)], table.InternFrame(nodes[n].frame));
  }
  RawSnapshot snapshot;
  snapshot.samples.reserve(tree.samples().size());
  for (const TreeReader::SampleEntry& s : tree.samples()) {
    const uint64_t size = InspectorObjectSize(static_cast<uint64_t>(s.size), window.interval_bytes);
    RawSample sample{s.ordinal, stacks[s.node], size, window.live};
    sample.allocated = window.allocated;
    snapshot.samples.push_back(sample);
  }
  if (tree.orphans() > 0) {
    snapshot.info.notes.push_back(fmt::format("heapprofile_orphan_samples: {}", tree.orphans()));
  }
  return snapshot;
}

Result<RawSnapshot> DecodeSamplingProfile(std::string_view json, const SampledWindow& window) {
  HEAPPROF_ASSIGN_OR_RETURN(Json root, ParseJson(json));
  const Json* profile = &root;
  if (auto it = profile->find("profile"); profile->is_object() && it != profile->end()) profile = &*it;
  internal::StackTable table;
  Result<RawSnapshot> snapshot = SamplingProfileSnapshot(*profile, window, table);
  if (!snapshot.ok()) return snapshot;
  snapshot->frames = table.TakeFrames();
  snapshot->stacks = table.TakeStacks();
  return snapshot;
}

}  // namespace heapprof
