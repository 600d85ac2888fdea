#include "heapprof/core/call_tree.h"

#include <fmt/format.h>

#include <optional>

#include "heapprof/core/estimate.h"

namespace heapprof::internal {

std::vector<int64_t> CallTree::Totals(size_t column) const {
  std::vector<int64_t> total = self.at(column);
  for (size_t i = total.size(); i-- > 1;) total[parent[i]] += total[i];
  return total;
}

std::vector<uint32_t> CallTree::Depths() const {
  std::vector<uint32_t> depth(size(), 0);
  for (size_t i = 1; i < size(); ++i) depth[i] = depth[parent[i]] + 1;
  return depth;
}

CallTreeBuilder::CallTreeBuilder(size_t series, size_t values_per_series) : series_(series) {
  tree_.values_per_series = values_per_series;
  tree_.self.assign(series * values_per_series, std::vector<int64_t>{0});
  tree_.variance.assign(series * values_per_series, std::vector<double>{0});
  tree_.sampled.assign(series * values_per_series, false);
  tree_.parent.push_back(0);
  tree_.function.push_back(CallTree::kNoFunction);
}

uint32_t CallTreeBuilder::InternFunction(const Profile& profile, const Function& fn, int64_t line) {
  std::string name(profile.str(fn.name));
  if (name.empty()) name = std::string(profile.str(fn.system_name));
  if (name.empty()) name = "(anonymous)";
  std::string filename(profile.str(fn.filename));
  int64_t start = fn.start_line != 0 ? fn.start_line : line;
  return InternName(std::move(name), std::move(filename), start);
}

uint32_t CallTreeBuilder::InternName(std::string name, std::string filename, int64_t line) {
  std::string key = fmt::format("{}\n{}\n{}", name, filename, line);
  auto [it, inserted] = function_index_.try_emplace(std::move(key), static_cast<uint32_t>(tree_.functions.size()));
  if (inserted) tree_.functions.push_back({std::move(name), std::move(filename), line});
  return it->second;
}

uint32_t CallTreeBuilder::Child(uint32_t parent, uint32_t function) {
  uint64_t key = (uint64_t{parent} << 32) | function;
  auto [it, inserted] = child_index_.try_emplace(key, static_cast<uint32_t>(tree_.parent.size()));
  if (inserted) {
    tree_.parent.push_back(parent);
    tree_.function.push_back(function);
    for (auto& column : tree_.self) column.push_back(0);
    for (auto& column : tree_.variance) column.push_back(0);
  }
  return it->second;
}

Status CallTreeBuilder::AddProfile(const Profile& profile, size_t series, const std::vector<int>& sample_indexes) {
  if (series >= series_ || sample_indexes.size() != tree_.values_per_series) {
    return Error(ErrorCode::kInternal, "call tree: bad series or value count");
  }
  for (int index : sample_indexes) {
    if (index < 0 || static_cast<size_t>(index) >= profile.sample_types.size()) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("profile has no sample type #{}", index));
    }
  }
  const size_t strings = profile.strings.size();
  auto string_ok = [&](StringId id) { return static_cast<uint32_t>(id) < strings; };

  // Function ids of this profile -> tree functions, resolved once.
  std::vector<uint32_t> fn_map(profile.functions.size(), CallTree::kNoFunction);
  auto resolve = [&](const Line& line, uint32_t* out) -> Status {
    uint32_t id = static_cast<uint32_t>(line.function);
    if (id == 0 || id > profile.functions.size()) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("profile: dangling function id {}", id));
    }
    uint32_t& cached = fn_map[id - 1];
    if (cached == CallTree::kNoFunction) {
      const Function& fn = profile.functions[id - 1];
      if (!string_ok(fn.name) || !string_ok(fn.system_name) || !string_ok(fn.filename)) {
        return Error(ErrorCode::kInvalidArgument, fmt::format("profile: function {} has a bad string index", id));
      }
      cached = InternFunction(profile, fn, line.line);
    }
    *out = cached;
    return Status::Ok();
  };

  const size_t base = series * tree_.values_per_series;
  std::vector<std::optional<SamplingModel>> models;
  for (size_t v = 0; v < sample_indexes.size(); ++v) {
    models.push_back(SamplingModel::For(profile, sample_indexes[v]));
    tree_.sampled[base + v] = models.back().has_value();
  }
  for (const Sample& sample : profile.samples) {
    uint32_t node = 0;
    for (auto loc = sample.locations.rbegin(); loc != sample.locations.rend(); ++loc) {
      uint32_t lid = static_cast<uint32_t>(*loc);
      if (lid == 0 || lid > profile.locations.size()) {
        return Error(ErrorCode::kInvalidArgument, fmt::format("profile: dangling location id {}", lid));
      }
      const Location& location = profile.locations[lid - 1];
      if (location.lines.empty()) {
        // Unsymbolized foreign profiles: name the frame by its address, as the top table does.
        node = Child(node, InternName(fmt::format("0x{:x}", location.address), "", 0));
        continue;
      }
      // Lines are innermost first: the outermost (caller) comes first in a root -> leaf walk.
      for (auto line = location.lines.rbegin(); line != location.lines.rend(); ++line) {
        uint32_t fn = 0;
        HEAPPROF_RETURN_IF_ERROR(resolve(*line, &fn));
        node = Child(node, fn);
      }
    }
    for (size_t v = 0; v < sample_indexes.size(); ++v) {
      size_t index = static_cast<size_t>(sample_indexes[v]);
      if (index < sample.values.size()) tree_.self[base + v][node] += sample.values[index];
      if (models[v]) tree_.variance[base + v][node] += models[v]->Row(sample).variance;
    }
  }
  return Status::Ok();
}

}  // namespace heapprof::internal
