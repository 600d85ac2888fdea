#include "tools/heapprof/remote_report.h"

#include <fmt/format.h>

#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/core/symbolizer.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"

namespace heapprof::cli {
namespace {

std::string TableTitle(int index, remote::RemoteSampleTypes types, bool gc) {
  const bool both = types == remote::RemoteSampleTypes::kBoth;
  switch (index) {
    case kInuseSpace:
      return fmt::format("Memory allocated in the {}window and still in use at its end (inuse_space{}):",
                         both ? "second " : "", gc ? ", after a full GC" : ", no GC before the snapshot");
    case kAllocSpace:
      return fmt::format("Memory allocated during the {}window, freed or not (alloc_space):", both ? "first " : "");
    case kInuseObjects:
      return "Objects still in use at the window's end (inuse_objects):";
    case kAllocObjects:
      return "Objects allocated during the window (alloc_objects):";
  }
  return "";
}

}  // namespace

int ReportRemoteProfile(Profile& profile, const RemoteReport& report) {
  // Tables of sample types the windows did not measure would be empty: leave them out.
  Result<std::vector<int>> requested = TableIndexes(report.sample_index);
  if (!requested.ok()) return Fail(report.command, requested.status());
  std::vector<int> tables;
  for (int index : requested.value()) {
    bool alloc = index == kAllocSpace || index == kAllocObjects;
    if (report.sample_index.empty() && alloc && report.types == remote::RemoteSampleTypes::kInuse) continue;
    if (report.sample_index.empty() && !alloc && report.types == remote::RemoteSampleTypes::kAlloc) continue;
    tables.push_back(index);
  }
  if (report.symbolize) {  // original names and .ts lines for bundled or compiled scripts
    SourceMapSearch search;
    search.map_dirs = report.map_dirs;
    search.roots = report.roots;
    FileSourceMapProvider maps(search);
    for (const std::string& w : Symbolize(profile, maps).warnings) {
      fmt::print(stderr, "heapprof {}: warning: {}\n", report.command, w);
    }
  }
  std::string written;
  const bool at_output = DeliverReported(
      report.command, "profile", report.output, FallbackDirs(report.fallback_dir),
      [&](const std::string& p) { return WritePprofFile(p, profile); }, &written);

  fmt::print("{}\n", report.headline);
  for (const std::string& comment : profile.CommentTexts()) {
    if (comment.rfind("windows: ", 0) == 0) fmt::print("  {}\n", comment.substr(9));
  }
  for (const std::string& line : report.details) fmt::print("  {}\n", line);
  fmt::print("  sampling one sample per {} allocated on average; values are estimates of the real totals\n",
             FormatValue(static_cast<int64_t>(report.interval_bytes), "bytes"));
  if (!written.empty()) fmt::print("Wrote {}\n", written);
  bool page_ok = true;
  if (!report.flamegraph.empty()) {
    std::string page;
    page_ok = DeliverReported(
        report.command, "flamegraph", report.flamegraph, FallbackDirs(report.fallback_dir),
        [&](const std::string& p) { return WriteFlamegraph(profile, p, "heapprof " + report.command); }, &page);
  }
  TableOptions table_options;
  table_options.indexes = tables;
  table_options.rows = report.top;
  table_options.interval_bytes = report.interval_bytes;
  table_options.title = [&](int index) { return TableTitle(index, report.types, report.gc); };
  table_options.more_samples_hint = report.more_samples_hint;
  table_options.view = report.user_code ? FrameView::kUserCode : FrameView::kAll;
  PrintTables(profile, table_options);
  if (report.top > 0) {
    fmt::print("\n");
    PrintSummary(profile, tables, 0, "the target's runtime");
  }
  if (written.empty()) return kExitFailure;
  fmt::print("\nMore: heapprof top {0} --cum    go tool pprof -top -sample_index=alloc_space {0}\n", written);
  return at_output && page_ok ? kExitOk : kExitFailure;
}

}  // namespace heapprof::cli
