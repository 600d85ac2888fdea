// The symbolizer stage: profiles of code compiled by tsc and bundled and
// minified by esbuild, positioned by V8 itself (hidden tag, run by CTest
// after the fixture), and scripts whose maps are broken in every way.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "heapprof/core/profile_builder.h"
#include "heapprof/core/symbolizer.h"
#include "sourcemap_test_data.h"
#include "unit/test_dirs.h"

using namespace heapprof;
using namespace heapprof::testing;
namespace fs = std::filesystem;

namespace {

// What a function must look like once mapped, taken from the .ts sources.
struct Expected {
  std::string name;
  std::string file;
  std::string declaration;  // text on the function's first line in the source
};

const std::vector<Expected>& ExpectedFunctions() {
  static const std::vector<Expected> kExpected = {
      {"recordRequest", "metrics.ts", "recordRequest(route: string"},
      {"parseRoute", "routing.ts", "export function parseRoute("},
      {"statusFor", "routing.ts", "export const statusFor = "},
      {"handleRequest", "worker.ts", "function handleRequest("},
      {"fetch", "worker.ts", "fetch(request: WorkerRequest"},
  };
  return kExpected;
}

const Function* FindFunction(const Profile& p, std::string_view name) {
  for (const Function& f : p.functions) {
    if (p.str(f.name) == name) return &f;
  }
  return nullptr;
}

// Profiles one build's recorded V8 frames, symbolizes them and checks every
// expected function against the TypeScript sources.
void CheckBuild(const std::string& build, bool renamed) {
  std::vector<Frame> frames = RecordedFrames(build);
  REQUIRE(frames.size() == ExpectedFunctions().size());
  Profile p = BuildProfile(SnapshotOf(frames));
  FileSourceMapProvider provider(TreeOf(GeneratedDir()));
  SymbolizeResult r = Symbolize(p, provider);
  INFO("warnings: " << (r.warnings.empty() ? "" : r.warnings.front()));
  CHECK(r.warnings.empty());
  CHECK(r.frames == frames.size());
  CHECK(r.mapped == frames.size());
  CHECK(r.without_map == 0);
  CHECK(p.CommentValue("source_maps") == fmt::format("{} of {} script frames mapped", frames.size(), frames.size()));

  for (const Expected& e : ExpectedFunctions()) {
    INFO(build << ": " << e.name);
    const Function* f = FindFunction(p, e.name);
    REQUIRE(f != nullptr);
    fs::path source = TsSourceDir() / e.file;
    CHECK(p.str(f->filename) == source.lexically_normal().string());
    int64_t line = LineOf(source, e.declaration);
    REQUIRE(line > 0);
    CHECK(f->start_line == line);
    // The generated name stays visible; minification renamed all but methods.
    const Frame* generated = nullptr;
    for (const Frame& fr : frames) {
      if (fr.function_name == e.name ||
          (renamed && p.str(f->system_name) == fr.function_name && !fr.function_name.empty())) {
        generated = &fr;
      }
    }
    REQUIRE(generated != nullptr);
    if (generated->function_name == e.name) {
      CHECK(f->system_name == StringId{0});
    } else {
      CHECK(generated->function_name.size() <= 2);  // a minified name
      CHECK(p.str(f->system_name) == generated->function_name);
    }
  }
  // Every location's line is now a line of a .ts source, as is its function's.
  for (const Location& loc : p.locations) {
    const Function& f = p.function(loc.lines.front().function);
    CHECK(loc.lines.front().line == f.start_line);
    CHECK(fs::path(p.str(f.filename)).extension() == ".ts");
  }
}

fs::path FreshDir(const std::string& name) {
  fs::path dir = heapprof::testing::BinaryDir() / "test-tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("symbolizer: esbuild's minified bundle maps back to the TypeScript functions", "[.sourcemap-tools]") {
  CheckBuild("esbuild", true);
}

TEST_CASE("symbolizer: the bundle with an inline map", "[.sourcemap-tools]") { CheckBuild("esbuild-inline", true); }

TEST_CASE("symbolizer: tsc output maps to the .ts files", "[.sourcemap-tools]") { CheckBuild("tsc", false); }

TEST_CASE("symbolizer: each script's map is parsed once", "[.sourcemap-tools]") {
  std::vector<Frame> frames = RecordedFrames("esbuild");
  std::vector<Frame> tsc = RecordedFrames("tsc");
  frames.insert(frames.end(), tsc.begin(), tsc.end());
  Profile p = BuildProfile(SnapshotOf(frames));
  FileSourceMapProvider provider(TreeOf(GeneratedDir()));
  SymbolizeResult r = Symbolize(p, provider);
  CHECK(r.mapped == frames.size());
  CHECK(r.scripts == 4);  // the bundle and tsc's worker.js, metrics.js, routing.js
  CHECK(r.scripts_with_map == 4);
  CHECK(provider.maps_parsed() == 4);
}

TEST_CASE("symbolizer: frames of scripts with broken maps stay as they are, with a warning each") {
  fs::path dir = FreshDir("symbolizer_broken");
  const std::string good = R"({"version":3,"sources":["good.ts"],"names":["original"],"mappings":"AAAAA,CAAE"})";
  WriteText(dir / "missing.js", "function f(){}\n//# sourceMappingURL=missing.js.map\n");
  WriteText(dir / "bad_json.js", "function f(){}\n");
  WriteText(dir / "bad_json.js.map", R"({"version":3,"sources":["a.ts"],)");
  WriteText(dir / "bad_vlq.js", "function f(){}\n");
  WriteText(dir / "bad_vlq.js.map", R"({"version":3,"sources":["a.ts"],"names":[],"mappings":"A$AA"})");
  WriteText(dir / "bad_index.js", "function f(){}\n");
  WriteText(dir / "bad_index.js.map", R"({"version":3,"sources":["a.ts"],"names":[],"mappings":"AEAA"})");
  WriteText(dir / "bad_inline.js", "function f(){}\n//# sourceMappingURL=data:application/json;base64,!!!!\n");
  WriteText(dir / "stale.js", "function f(){}\n");
  WriteText(dir / "stale.js.map", good);
  WriteText(dir / "good.js", "function f(){}\n");
  WriteText(dir / "good.js.map", good);
  // A map an hour older than its script: the script was rebuilt without it.
  fs::last_write_time(dir / "stale.js.map", fs::last_write_time(dir / "stale.js") - std::chrono::hours(1));

  std::vector<Frame> frames;
  for (const char* script : {"missing", "bad_json", "bad_vlq", "bad_index", "bad_inline"}) {
    frames.push_back(Frame{"f", (dir / (std::string(script) + ".js")).string(), 1, 1, 11});
  }
  frames.push_back(Frame{"f", (dir / "stale.js").string(), 1, 40, 11});  // the map has no line 40
  frames.push_back(Frame{"g", (dir / "good.js").string(), 1, 1, 2});
  frames.push_back(Frame{"(GC)", "", 0, 0, 0});
  frames.push_back(Frame{"h", "node:internal/timers", 1, 5, 3});
  Profile p = BuildProfile(SnapshotOf(frames));
  const Profile before = p;

  FileSourceMapProvider provider(TreeOf(dir));
  SymbolizeResult r = Symbolize(p, provider);
  CHECK(r.frames == 8);
  CHECK(r.mapped == 1);
  CHECK(r.without_map == 6);
  CHECK(r.outside_map == 1);
  CHECK(r.scripts == 8);
  CHECK(r.scripts_with_map == 2);

  auto warning_for = [&](const std::string& script) -> std::string {
    std::string path = (dir / script).string();
    for (const std::string& w : r.warnings) {
      if (w.substr(0, path.size() + 1) == path + ":") return w;
    }
    return "";
  };
  CHECK_THAT(warning_for("missing.js"), Catch::Contains("cannot be read"));
  CHECK_THAT(warning_for("bad_json.js"), Catch::Contains("invalid JSON"));
  CHECK_THAT(warning_for("bad_vlq.js"), Catch::Contains("invalid VLQ character at byte"));
  CHECK_THAT(warning_for("bad_index.js"), Catch::Contains("source index 2 out of range"));
  CHECK_THAT(warning_for("bad_inline.js"), Catch::Contains("inline source map"));
  CHECK_THAT(warning_for("stale.js"), Catch::Contains("its source map is 3600 s older than the script"));
  CHECK(warning_for("good.js").empty());
  CHECK(r.warnings.size() == 6);

  // Unmapped frames keep their name, file and position; the good one is mapped.
  REQUIRE(p.locations.size() == before.locations.size());
  for (size_t i = 0; i < p.locations.size(); ++i) {
    const Line& now = p.locations[i].lines.front();
    const Line& was = before.locations[i].lines.front();
    const Function& f = p.function(now.function);
    const Function& g = before.function(was.function);
    if (before.str(g.filename) == (dir / "good.js").string()) {
      CHECK(p.str(f.name) == "original");
      CHECK(p.str(f.system_name) == "g");
      CHECK(p.str(f.filename) == (dir / "good.ts").string());
      CHECK(now.line == 1);
      CHECK(now.column == 3);
      continue;
    }
    CHECK(p.str(f.name) == before.str(g.name));
    CHECK(p.str(f.filename) == before.str(g.filename));
    CHECK(f.start_line == g.start_line);
    CHECK(now.line == was.line);
    CHECK(now.column == was.column);
    CHECK(f.system_name == StringId{0});
  }
  CHECK(p.CommentValue("source_maps") == "1 of 8 script frames mapped; 6 without a map; 1 outside their map");
  size_t warning_comments = 0;
  for (const std::string& c : p.CommentTexts()) warning_comments += c.rfind("source_map_warning: ", 0) == 0;
  CHECK(warning_comments == 6);

  // A second run keeps what the first one mapped and does not stack comments.
  FileSourceMapProvider again(TreeOf(dir));
  SymbolizeResult r2 = Symbolize(p, again);
  CHECK(r2.mapped == 1);
  CHECK(p.str(FindFunction(p, "original")->system_name) == "g");
  size_t summaries = 0;
  for (const std::string& c : p.CommentTexts()) summaries += c.rfind("source_maps: ", 0) == 0;
  CHECK(summaries == 1);
}

TEST_CASE("symbolizer: two minified functions with one name on one line split into their originals") {
  fs::path dir = FreshDir("symbolizer_split");
  // Generated line 1: "function e(){}function e(){}" -- the name tokens at
  // 0-based columns 9 and 23 map to "alpha" (a.ts 3:10) and "beta" (b.ts 7:10).
  WriteText(dir / "bundle.js", "function e(){}function e(){}\n");
  WriteText(
      dir / "bundle.js.map",
      R"({"version":3,"sources":["a.ts","b.ts"],"names":["alpha","beta"],"mappings":"AAEA,SAASA,CAAU,ICInB,SAASC,CAAU"})");
  std::vector<Frame> frames = {Frame{"e", (dir / "bundle.js").string(), 1, 1, 11},
                               Frame{"e", (dir / "bundle.js").string(), 1, 1, 25}};
  Profile p = BuildProfile(SnapshotOf(frames));
  REQUIRE(p.functions.size() == 1);  // the builder cannot tell them apart
  FileSourceMapProvider provider(TreeOf(dir));
  SymbolizeResult r = Symbolize(p, provider);
  CHECK(r.warnings.empty());
  CHECK(r.mapped == 2);
  REQUIRE(p.functions.size() == 2);
  const Function* alpha = FindFunction(p, "alpha");
  const Function* beta = FindFunction(p, "beta");
  REQUIRE(alpha);
  REQUIRE(beta);
  CHECK(p.str(alpha->filename) == (dir / "a.ts").string());
  CHECK(alpha->start_line == 3);
  CHECK(p.str(beta->filename) == (dir / "b.ts").string());
  CHECK(beta->start_line == 7);
  CHECK(p.str(alpha->system_name) == "e");
}
