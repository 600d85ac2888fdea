// `heapprof flamegraph PROFILE -o OUT.html`: an interactive, self-contained
// flamegraph page (or a static SVG) of any profile on disk (pprof or .heapprofile).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "heapprof/core/file_io.h"
#include "heapprof/core/flamegraph.h"
#include "heapprof/core/formats.h"
#include "heapprof/core/report.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/outputs.h"

namespace heapprof::cli {
namespace {

struct FlamegraphArgs {
  std::string path;
  std::string out;
  std::string format;  // html | svg; empty: from the output's extension
  std::string sample_index;
  std::string title;
  int width = 1200;
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "dir/x.pb.gz" -> "dir/x" (the output goes next to the profile by default).
std::string Stem(const std::string& path) {
  for (const char* ext : {".pb.gz", ".pprof", ".pb", ".gz"}) {
    if (EndsWith(path, ext)) return path.substr(0, path.size() - std::string(ext).size());
  }
  return path;
}

int RunFlamegraph(const FlamegraphArgs& args) {
  std::string format = args.format;
  if (format.empty()) format = EndsWith(args.out, ".svg") ? "svg" : "html";
  std::string out = args.out.empty() ? Stem(args.path) + "." + format : args.out;

  if (Status s = CheckOutputs({args.path}, {out}); !s.ok()) return Fail("flamegraph", s);
  Result<Profile> profile = ReadProfileFile(args.path);
  if (!profile.ok()) return Fail("flamegraph", profile.status());
  if (Result<int> index = ResolveSampleIndex(*profile, args.sample_index); !index.ok()) {
    return UsageError("flamegraph", index.status().message());
  }
  std::string title = args.title.empty() ? fmt::format("heapprof: {}", args.path) : args.title;
  auto render = [&]() -> Result<std::string> {
    if (format == "svg") {
      FlamegraphSvgOptions options;
      options.sample_type = args.sample_index;
      options.title = title;
      options.width = args.width;
      return RenderFlamegraphSvg(*profile, options);
    }
    FlamegraphOptions options;
    options.sample_type = args.sample_index;
    options.title = title;
    return RenderFlamegraphHtml(*profile, options);
  };
  Result<std::string> rendered = render();
  if (!rendered.ok()) return Fail("flamegraph", args.path + ": " + rendered.status().message());
  if (Status s = WriteFileAtomic(out, *rendered); !s.ok()) return Fail("flamegraph", s);
  fmt::print("wrote {} ({:.1f} KiB)\n", out, static_cast<double>(rendered->size()) / 1024);
  return kExitOk;
}

}  // namespace

void RegisterFlamegraph(Commands& commands) {
  auto args = std::make_shared<FlamegraphArgs>();
  CLI::App* cmd = commands.Add(
      "flamegraph", "Write an interactive flamegraph page (self-contained HTML) or a static SVG of a profile",
      [args] { return RunFlamegraph(*args); });
  cmd->add_option("profile", args->path, kProfileArgHelp)->required();
  cmd->add_option("-o,--output", args->out, "Output file; default: the profile's name with .html or .svg");
  cmd->add_option("--format", args->format, "html (interactive, the default) or svg (static, no JS needed)")
      ->check(CLI::IsMember({"html", "svg"}));
  cmd->add_option("--sample-index,-s", args->sample_index,
                  "Sample type shown first (the page can switch), by name or index; default: the profile's default");
  cmd->add_option("--title", args->title, "Title of the page or image");
  cmd->add_option("--width", args->width, "SVG width in pixels")->check(CLI::Range(200, 100000))->capture_default_str();
}

}  // namespace heapprof::cli
