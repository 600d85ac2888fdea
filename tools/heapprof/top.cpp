// `heapprof top PROFILE`: the functions that allocate or hold the most, from
// any profile on disk (heapprof's, another tool's pprof, or a .heapprofile), without pprof.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "heapprof/core/formats.h"
#include "heapprof/core/report.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/profile_report.h"

namespace heapprof::cli {
namespace {

struct TopArgs {
  std::string path;
  std::string sample_index;
  int rows = 10;
  bool cum = false;
  bool user_code = false;
};

int RunTop(const TopArgs& args) {
  Result<Profile> profile = ReadProfileFile(args.path);
  if (!profile.ok()) return Fail("top", "cannot read " + args.path + ": " + profile.status().message());
  Result<int> index = ResolveSampleIndex(profile.value(), args.sample_index);
  if (!index.ok()) return UsageError("top", index.status().message());
  TopOptions options;
  options.sample_index = index.value();
  options.rows = static_cast<size_t>(args.rows);
  options.sort_by_cum = args.cum;
  options.view = args.user_code ? FrameView::kUserCode : FrameView::kAll;
  fmt::print("{}", FormatTopTable(profile.value(), options));
  return kExitOk;
}

}  // namespace

void RegisterTop(Commands& commands) {
  auto args = std::make_shared<TopArgs>();
  CLI::App* top =
      commands.Add("top", "Print the top functions of a profile (like `pprof -top`)", [args] { return RunTop(*args); });
  top->add_option("profile", args->path, kProfileArgHelp)->required();
  top->add_option("--sample-index,-s", args->sample_index,
                  "Sample type to rank by, by name (inuse_space, alloc_space, inuse_objects, alloc_objects) or "
                  "index; default: the profile's default type");
  top->add_option("-n,--rows", args->rows, "How many functions to show")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  top->add_flag("--cum", args->cum, "Rank by cumulative value (the function and what it calls) instead of flat");
  top->add_flag("--user-code", args->user_code, kUserCodeHelp);
}

}  // namespace heapprof::cli
