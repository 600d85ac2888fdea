// What `heapprof run` and `heapprof attach` print and write after a window:
// the top tables, the one-line answers, the optional flamegraph page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/report.h"
#include "heapprof/core/status.h"

namespace heapprof::cli {

struct TableOptions {
  std::vector<int> indexes;               // sample types to print, in order
  size_t rows = 10;                       // 0: no tables
  uint64_t interval_bytes = 0;            // for the "no samples" advice
  std::function<std::string(int)> title;  // the heading of each sample type's table
  std::string more_samples_hint;          // how to get a longer window, for the "no samples" advice
  FrameView view = FrameView::kAll;       // --user-code: the tables in the "your code" view
};

// The top table of each sample type, and one line for each kind of unfamiliar row.
void PrintTables(const Profile& profile, const TableOptions& options);
// One sentence per table's winner, in the "your code" view (FormatSummaryLine):
// the answer, after the details. `requests`: the window's, 0 when unknown.
// `runtime` names who the frames outside user code are ("" = heapprof's runtime).
void PrintSummary(const Profile& profile, const std::vector<int>& indexes, int64_t requests = 0,
                  const std::string& runtime = "");
// The help of --user-code, the same in every command that prints tables.
inline constexpr const char* kUserCodeHelp =
    "Tables in the 'your code' view: V8 built-ins (padEnd, slice...), VM states and heapprof:runtime frames "
    "charged to their nearest user-code caller, as pprof's -hide of those frames would (the one-line answers "
    "always use this view)";
// Writes the interactive flamegraph page and says so. An empty profile is a
// result, not a failure: it is reported and Ok returned; only an unwritable
// file is an error.
Status WriteFlamegraph(const Profile& profile, const std::string& path, const std::string& title);
// The index of a --sample-index value (name or 0..3), or the usual pair
// (inuse_space, alloc_space) for "".
Result<std::vector<int>> TableIndexes(const std::string& sample_index);

}  // namespace heapprof::cli
