#include "tools/heapprof/profile_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "heapprof/core/file_io.h"
#include "heapprof/core/flamegraph.h"
#include "heapprof/core/report.h"
#include "heapprof/core/terminal_text.h"

namespace heapprof::cli {

void PrintTables(const Profile& profile, const TableOptions& options) {
  if (options.rows == 0) return;
  // A profile of code that may inline (by --allow-inlining, or a target that
  // could not be switched) must not read as exact.
  for (const std::string& comment : profile.CommentTexts()) {
    if (comment == "inlining: allowed" || comment == "inlining: unknown") {
      fmt::print("\ninlining on: a function's allocations may be charged to its caller{}\n",
                 comment == "inlining: unknown" ? " (the target's inlining could not be checked or switched off)" : "");
      break;
    }
  }
  if (profile.samples.empty()) {
    fmt::print(
        "\nNo samples: the window allocated less than about one sampling interval ({}).\n"
        "{} or sample more often (--interval 64KiB).\n",
        FormatValue(static_cast<int64_t>(options.interval_bytes), "bytes"), options.more_samples_hint);
    return;
  }
  bool builtins = false, runtime_frames = false, library_frames = false;
  for (int index : options.indexes) {
    TopOptions top;
    top.sample_index = index;
    top.rows = options.rows;
    top.view = options.view;
    fmt::print("\n{}\n{}", options.title ? options.title(index) : std::string(), FormatTopTable(profile, top));
    std::vector<FunctionTotal> totals = FunctionTotals(profile, index, false, options.view);
    for (size_t i = 0; i < std::min(options.rows, totals.size()); ++i) {
      builtins = builtins || totals[i].filename.empty();
      const std::string& file = totals[i].filename;
      runtime_frames = runtime_frames || file.rfind("heapprof:runtime", 0) == 0;
      library_frames = library_frames || file.rfind("heapprof:runtime-libraries/", 0) == 0;
    }
  }
  // One line per kind of unfamiliar row, so a first reader can tell them apart.
  if (builtins) {
    fmt::print(
        "\nRows without a file are V8 built-ins (Map, set, exec...) charged for what they allocate for\n"
        "their caller, or VM states: (V8 API) is work done from C++ outside any JavaScript frame;\n"
        "(anonymous) without a file is where V8 resumes async functions.\n");
  }
  if (runtime_frames) {
    fmt::print("heapprof:runtime rows are heapprof's own worker runtime (Request, Headers, Response, URL, streams).\n");
  }
  if ((builtins || runtime_frames) && options.view == FrameView::kAll) {
    fmt::print(
        "The answers below charge those rows to their nearest user-code caller; --user-code prints the tables "
        "that way.\n");
  }
  if (library_frames) {
    fmt::print(
        "heapprof:runtime-libraries/PACKAGE/... rows are npm packages the runtime bundles (streams, URLPattern),\n"
        "at the line of the package's own file; one- or two-letter names are as the package ships them, minified.\n");
  }
}

void PrintSummary(const Profile& profile, const std::vector<int>& indexes, int64_t requests,
                  const std::string& runtime) {
  SummaryOptions options;
  options.requests = requests;
  if (!runtime.empty()) options.runtime = runtime;
  for (int index : indexes) {
    std::string line = FormatSummaryLine(profile, index, options);
    if (!line.empty()) fmt::print("{}\n", line);
  }
}

Status WriteFlamegraph(const Profile& profile, const std::string& path, const std::string& title) {
  FlamegraphOptions page_options;
  page_options.title = title;
  Result<std::string> page = RenderFlamegraphHtml(profile, page_options);
  if (!page.ok()) {
    fmt::print(stderr, "No flamegraph written: {}\n", page.status().message());
    return Status::Ok();
  }
  if (Status s = WriteFileAtomic(path, page.value()); !s.ok()) return s;
  fmt::print("Wrote {}\n", path);
  return Status::Ok();
}

Result<std::vector<int>> TableIndexes(const std::string& sample_index) {
  if (sample_index.empty()) return std::vector<int>{kInuseSpace, kAllocSpace};
  static const char* kTypes[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"};
  for (int i = 0; i < 4; ++i) {
    if (sample_index == kTypes[i] || sample_index == std::to_string(i)) return std::vector<int>{i};
  }
  return Error(ErrorCode::kInvalidArgument, "unknown --sample-index \"" + sample_index +
                                                "\"; use alloc_objects, alloc_space, inuse_objects or inuse_space");
}

}  // namespace heapprof::cli
