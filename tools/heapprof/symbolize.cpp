// `heapprof symbolize PROFILE --maps DIR -o OUT`: applies source maps to a
// profile taken elsewhere, so bundled or TypeScript workers show their
// original function names, .ts files and lines.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "heapprof/core/formats.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/symbolizer.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/outputs.h"

namespace heapprof::cli {
namespace {

struct SymbolizeArgs {
  std::string path;
  std::vector<std::string> map_dirs;
  std::vector<std::string> script_dirs;
  std::string output;
  bool no_scripts = false;
};

int RunSymbolize(const SymbolizeArgs& args) {
  if (Status s = CheckOutputs({args.path}, {args.output}); !s.ok()) return Fail("symbolize", s);
  Result<Profile> profile = ReadProfileFile(args.path);
  if (!profile.ok()) return Fail("symbolize", "cannot read " + args.path + ": " + profile.status().message());

  SourceMapSearch search;
  search.map_dirs = args.map_dirs;
  search.roots = args.script_dirs;
  // The profile names the scripts, and a profile may come from anyone: only the user's folders are read.
  if (search.map_dirs.empty() && search.roots.empty()) {
    fmt::print(stderr,
               "heapprof symbolize: warning: no folder to read scripts and maps from; name the scripts' folder with "
               "--source-map-path DIR or the maps' with --maps DIR\n");
  }
  search.read_scripts = !args.no_scripts;
  search.beside_script = !args.no_scripts;
  FileSourceMapProvider provider(search);
  SymbolizeResult r = Symbolize(profile.value(), provider);

  // Broken maps never stop the profile from being written; say why frames stayed unmapped.
  for (const std::string& w : r.warnings) fmt::print(stderr, "heapprof symbolize: warning: {}\n", w);
  if (Status st = WritePprofFile(args.output, profile.value()); !st.ok()) {
    return Fail("symbolize", "cannot write " + args.output + ": " + st.message());
  }
  std::string summary = fmt::format("{} of {} script frames mapped", r.mapped, r.frames);
  if (r.without_map) summary += fmt::format(", {} without a map", r.without_map);
  if (r.outside_map > r.generated) summary += fmt::format(", {} outside their map", r.outside_map - r.generated);
  if (r.generated) summary += fmt::format(", {} in generated helpers no map describes", r.generated);
  fmt::print(stderr, "heapprof symbolize: {} ({} of {} scripts have a map); wrote {}\n", summary, r.scripts_with_map,
             r.scripts, args.output);
  return kExitOk;
}

}  // namespace

void RegisterSymbolize(Commands& commands) {
  auto args = std::make_shared<SymbolizeArgs>();
  CLI::App* cmd = commands.Add(
      "symbolize",
      "Apply source maps to a profile: original function names, sources and lines for bundled, minified or "
      "TypeScript workers",
      [args] { return RunSymbolize(*args); });
  cmd->add_option("profile", args->path, kProfileArgHelp)->required();
  cmd->add_option("--maps,-m", args->map_dirs,
                  "Folder holding the maps (SCRIPT.js.map, or the file the script's sourceMappingURL names); "
                  "may be repeated. Maps are also found through each script's sourceMappingURL comment or beside "
                  "the script, for scripts under --source-map-path")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--source-map-path", args->script_dirs,
                  "Folder whose tree holds the profiled scripts and their maps; scripts the profile names are read "
                  "only there (and in --maps folders), never elsewhere. May be repeated")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", args->output, "Where to write the symbolized profile (.pb.gz)")->required();
  cmd->add_flag("--no-scripts", args->no_scripts,
                "Do not read the scripts named in the profile; look only in the --maps folders");
}

}  // namespace heapprof::cli
