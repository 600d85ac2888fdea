// `heapprof diff BASE NEW`: which functions grew or shrank between two
// profiles (e.g. two windows of a leaking worker), as a table and optionally
// as a flamegraph page coloured by change.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "heapprof/core/diff.h"
#include "heapprof/core/file_io.h"
#include "heapprof/core/formats.h"
#include "heapprof/core/report.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/outputs.h"

namespace heapprof::cli {
namespace {

struct DiffArgs {
  std::string base;
  std::string next;
  std::string sample_index;
  size_t rows = 10;
  bool cum = false;
  std::string flamegraph;
};

int RunDiff(const DiffArgs& args) {
  if (Status s = CheckOutputs({args.base, args.next}, {args.flamegraph}); !s.ok()) return Fail("diff", s);
  Result<Profile> base = ReadProfileFile(args.base);
  if (!base.ok()) return Fail("diff", base.status());
  Result<Profile> next = ReadProfileFile(args.next);
  if (!next.ok()) return Fail("diff", next.status());
  if (Result<int> index = ResolveSampleIndex(*next, args.sample_index); !index.ok()) {
    return UsageError("diff", index.status().message());
  }
  DiffOptions options;
  options.sample_type = args.sample_index;
  options.sort_by_cum = args.cum;
  Result<ProfileDiff> diff = DiffProfiles(*base, *next, options);
  if (!diff.ok()) return Fail("diff", diff.status());
  fmt::print("{}", FormatDiffTable(*diff, args.rows));
  if (!args.flamegraph.empty()) {
    Result<std::string> page =
        RenderDiffFlamegraphHtml(*base, *next, options, fmt::format("heapprof diff: {} -> {}", args.base, args.next));
    if (!page.ok()) return Fail("diff", page.status());
    if (Status s = WriteFileAtomic(args.flamegraph, *page); !s.ok()) return Fail("diff", s);
    fmt::print("\nwrote {}\n", args.flamegraph);
  }
  return kExitOk;
}

}  // namespace

void RegisterDiff(Commands& commands) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = commands.Add("diff", "Show which functions grew or shrank between two profiles",
                               [args] { return RunDiff(*args); });
  cmd->add_option("base", args->base, "The earlier profile")->required();
  cmd->add_option("new", args->next, "The later profile")->required();
  cmd->add_option("--sample-index,-s", args->sample_index,
                  "Sample type to compare, by name or index; default: the new profile's default (inuse_space)");
  cmd->add_option("-n,--rows", args->rows, "How many growers and shrinkers to show")->capture_default_str();
  cmd->add_flag("--cum", args->cum, "Rank by cumulative change (the function and what it calls) instead of flat");
  cmd->add_option("--flamegraph", args->flamegraph,
                  "Also write an interactive flamegraph page of NEW coloured by change (red grew, blue shrank)");
}

}  // namespace heapprof::cli
