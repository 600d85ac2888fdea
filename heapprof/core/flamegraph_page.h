// Assembles the interactive flamegraph page (template + embedded JSON data)
// for a call tree; shared by the single-profile page and the diff page.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/call_tree.h"
#include "heapprof/core/status.h"

namespace heapprof::internal {

struct PageSampleType {
  std::string type;  // "inuse_space"
  std::string unit;  // "bytes"
};

struct PageInfo {
  std::string title;
  std::vector<PageSampleType> sample_types;  // one per value column of a series
  size_t initial_type = 0;
  // Diff page: the tree has two series, base (0) and new (1); widths follow
  // the new profile and colours the change.
  bool diff = false;
  std::vector<std::string> details;  // "key: value" lines shown under the title
  // Per sample type, a warning shown above the graph and the table while that
  // type is chosen ("" = none): too few samples to rank functions.
  std::vector<std::string> warnings;
};

// "key: value" lines about a profile: window start, duration, comments.
std::vector<std::string> ProfileDetails(const Profile& profile);

// The whole self-contained HTML document.
Result<std::string> RenderFlamegraphPage(const CallTree& tree, const PageInfo& info);

}  // namespace heapprof::internal
