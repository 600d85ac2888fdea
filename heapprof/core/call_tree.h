// A merged call tree (root -> leaf) of one or more profiles, the shape every
// flamegraph (HTML page, SVG, diff) is drawn from. Internal to the core.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof::internal {

// A function as a reader identifies it across profiles.
struct TreeFunction {
  std::string name;
  std::string filename;
  int64_t line = 0;  // start line, 0 = unknown
};

// Node 0 is the synthetic root; every node's parent precedes it, so one
// reverse pass turns self values into totals.
struct CallTree {
  static constexpr uint32_t kNoFunction = UINT32_MAX;

  std::vector<TreeFunction> functions;
  std::vector<uint32_t> parent;    // parent[0] == 0
  std::vector<uint32_t> function;  // index into functions; kNoFunction for the root
  // One column per (series, value): self[series * values_per_series + v][node].
  std::vector<std::vector<int64_t>> self;
  // Estimated sampling variance of each self value, same layout as `self`
  // (docs/statistics.md); a column stays all zero when its profile cannot
  // say how it was sampled (`sampled` false).
  std::vector<std::vector<double>> variance;
  std::vector<bool> sampled;
  size_t values_per_series = 0;

  size_t size() const { return parent.size(); }
  // Totals (self plus descendants) of one column.
  std::vector<int64_t> Totals(size_t column) const;
  // Depth of every node (root = 0).
  std::vector<uint32_t> Depths() const;
};

// Merges profiles into one tree. Each AddProfile call fills one series; the
// value columns are the profile's sample types picked by `sample_indexes`.
class CallTreeBuilder {
 public:
  CallTreeBuilder(size_t series, size_t values_per_series);
  // Adds every sample of `profile` to `series`. Fails on dangling ids or a
  // sample index the profile does not have.
  Status AddProfile(const Profile& profile, size_t series, const std::vector<int>& sample_indexes);
  CallTree Take() { return std::move(tree_); }

 private:
  uint32_t InternFunction(const Profile& profile, const Function& fn, int64_t line);
  uint32_t InternName(std::string name, std::string filename, int64_t line);
  uint32_t Child(uint32_t parent, uint32_t function);

  CallTree tree_;
  size_t series_;
  std::unordered_map<std::string, uint32_t> function_index_;
  std::unordered_map<uint64_t, uint32_t> child_index_;  // (parent << 32 | function)
};

}  // namespace heapprof::internal
