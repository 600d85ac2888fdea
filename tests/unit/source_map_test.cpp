// The source map reader and locator: maps made by tsc and esbuild (hidden
// tag, run by CTest after the fixture generates them), and malformed input.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <catch2/catch.hpp>

#include "heapprof/core/source_map.h"
#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/text.h"
#include "sourcemap_test_data.h"
#include "unit/test_dirs.h"

using namespace heapprof;
using namespace heapprof::testing;
namespace fs = std::filesystem;

namespace {

fs::path FreshDir(const std::string& name) {
  fs::path dir = heapprof::testing::BinaryDir() / "test-tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string ParseError(const std::string& json) {
  Result<SourceMap> m = SourceMap::Parse(json);
  REQUIRE_FALSE(m.ok());
  CHECK(m.status().code() == ErrorCode::kDataLoss);
  return m.status().message();
}

std::string Base64(const std::string& in) { return internal::Base64Encode(in); }

}  // namespace

TEST_CASE("source map: VLQ fields are relative and decoded with sign and continuation") {
  // Line 1: (0 -> a.ts 1:1), (9 -> a.ts 1:4 "foo"); line 2: (16 -> a.ts 2:5).
  auto m = SourceMap::Parse(R"({"version":3,"sources":["a.ts"],"names":["foo"],"mappings":"AAAA,SAAGA;gBACC"})");
  REQUIRE(m.ok());
  CHECK(m->mapping_count() == 3);
  CHECK(m->generated_lines() == 2);
  auto p = m->Lookup(1, 10);
  REQUIRE(p);
  CHECK(p->line == 1);
  CHECK(p->column == 4);
  CHECK(p->name == 0);
  CHECK(m->names()[0] == "foo");
  p = m->Lookup(2, 17);
  REQUIRE(p);
  CHECK(p->line == 2);
  CHECK(p->column == 5);
  CHECK(p->name == -1);
  // Between mappings: the one before covers the position; before the first: the one after.
  CHECK(m->Lookup(1, 5)->column == 1);
  CHECK(m->Lookup(2, 1)->column == 5);
  CHECK_FALSE(m->Lookup(3, 1));
  CHECK(m->MappingBefore(1, 10)->column == 1);
  CHECK_FALSE(m->MappingBefore(1, 1));
  // A negative delta ('D' = -1) moves back.
  auto n = SourceMap::Parse(R"({"version":3,"sources":["a.ts"],"names":[],"mappings":"AAEE,CADD"})");
  REQUIRE(n.ok());
  CHECK(n->Lookup(1, 2)->line == 2);
  CHECK(n->Lookup(1, 2)->column == 2);
}

TEST_CASE("source map: sourceRoot and relative sources resolve against the map's folder") {
  auto m = SourceMap::Parse(R"({"version":3,"sourceRoot":"src","sources":["a.ts","/abs/b.ts","webpack://app/c.ts",null],
                               "sourcesContent":["let a = 1;"],"names":[],"mappings":"AAAA"})",
                            "/srv/app/dist/app.js.map");
  REQUIRE(m.ok());
  REQUIRE(m->sources().size() == 4);
  CHECK(m->sources()[0] == "/srv/app/dist/src/a.ts");
  CHECK(m->sources()[1] == "/abs/b.ts");
  CHECK(m->sources()[2] == "webpack://app/c.ts");
  CHECK(m->sources()[3] == "");
  REQUIRE(m->source_content(0));
  CHECK(*m->source_content(0) == "let a = 1;");
  CHECK_FALSE(m->source_content(1));
  auto rel = SourceMap::Parse(R"({"version":3,"sources":["../src/a.ts"],"names":[],"mappings":"AAAA"})",
                              "file:///srv/app/dist/app.js.map");
  REQUIRE(rel.ok());
  CHECK(rel->sources()[0] == "/srv/app/src/a.ts");
}

TEST_CASE("source map: malformed maps fail with a reason, never a crash") {
  CHECK_THAT(ParseError("{\"version\":3,"), Catch::Contains("invalid JSON"));
  CHECK_THAT(ParseError("[1,2]"), Catch::Contains("not a JSON object"));
  CHECK_THAT(ParseError(R"({"version":2,"sources":[],"mappings":""})"), Catch::Contains("version"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"]})"), Catch::Contains("mappings"));
  CHECK_THAT(ParseError(R"({"version":3,"mappings":"AAAA"})"), Catch::Contains("sources"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"mappings":"AA!A"})"),
             Catch::Contains("invalid VLQ character at byte 2") && Catch::Contains("line 1"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"mappings":"AAAA;AAAg"})"),
             Catch::Contains("truncated VLQ") && Catch::Contains("line 2"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"mappings":"gggggggggB"})"), Catch::Contains("32 bits"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"mappings":"AA"})"), Catch::Contains("2 fields"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"mappings":"AAAAAA"})"), Catch::Contains("more than 5"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"mappings":"D"})"),
             Catch::Contains("negative generated column"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"mappings":"AAAA,ACAA"})"),
             Catch::Contains("source index 1 out of range"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"names":["x"],"mappings":"AAAAC"})"),
             Catch::Contains("name index 1 out of range"));
  CHECK_THAT(ParseError(R"({"version":3,"sources":["a"],"mappings":"AADA"})"), Catch::Contains("out of range"));
  CHECK_THAT(ParseError(R"({"version":3,"sections":[{"offset":{"line":0,"column":0},"url":"x.map"}]})"),
             Catch::Contains("\"url\""));
  CHECK_THAT(ParseError(R"({"version":3,"sections":[{"offset":{"line":-1,"column":0},"map":{}}]})"),
             Catch::Contains("offset"));
  CHECK_THAT(ParseError(R"({"version":3,"sections":[
      {"offset":{"line":5,"column":0},"map":{"version":3,"sources":["a"],"mappings":"AAAA"}},
      {"offset":{"line":1,"column":0},"map":{"version":3,"sources":["b"],"mappings":"AAAA"}}]})"),
             Catch::Contains("out of order"));
  // Nested offsets that each fit but add up past 2^32 used to wrap to line 1 / a small column.
  const std::string leaf = R"({"version":3,"sources":["a"],"mappings":"AAAA"})";
  auto nest = [](const std::string& inner, const std::string& line, const std::string& column) {
    return R"({"version":3,"sections":[{"offset":{"line":)" + line + R"(,"column":)" + column + R"(},"map":)" + inner +
           "}]}";
  };
  CHECK_THAT(ParseError(nest(nest(nest(leaf, "2", "0"), "2147483647", "0"), "2147483647", "0")),
             Catch::Contains("offset out of range"));
  CHECK_THAT(ParseError(nest(nest(nest(leaf, "0", "2147483647"), "0", "2147483647"), "0", "2147483647")),
             Catch::Contains("offset out of range"));
  // A deeply nested "version" used to be dumped into the message, recursing off the stack.
  const size_t depth = 1'000'000;
  CHECK_THAT(ParseError(R"({"version":)" + std::string(depth, '[') + std::string(depth, ']') + "}"),
             Catch::Contains("unsupported source map version: a array instead of the number 3"));
}

TEST_CASE("source map: index map sections are offset and keep their own sources and names") {
  auto m = SourceMap::Parse(R"({"version":3,"sections":[
      {"offset":{"line":0,"column":0},"map":{"version":3,"sources":["a.ts"],"names":["fa"],"mappings":"AAAAA"}},
      {"offset":{"line":0,"column":10},"map":{"version":3,"sources":["b.ts"],"names":["fb"],"mappings":"AACAA;EAAE"}}]})");
  REQUIRE(m.ok());
  REQUIRE(m->sources().size() == 2);
  auto p = m->Lookup(1, 11);  // section 2 starts at column 10 (0-based) of line 1
  REQUIRE(p);
  CHECK(m->sources()[p->source] == "b.ts");
  CHECK(p->line == 2);
  CHECK(m->names()[p->name] == "fb");
  p = m->Lookup(2, 3);  // the column offset does not apply to the section's later lines
  REQUIRE(p);
  CHECK(p->generated_column == 3);
  CHECK(p->line == 2);
  CHECK(p->column == 3);
  p = m->Lookup(1, 5);
  CHECK(m->sources()[p->source] == "a.ts");
  CHECK(m->names()[p->name] == "fa");
}

TEST_CASE("source map: sourceMappingURL comments and data: URLs") {
  CHECK(FindSourceMappingUrl("x();\n//# sourceMappingURL=a.js.map\n") == std::optional<std::string>("a.js.map"));
  CHECK(FindSourceMappingUrl("x();\n//@ sourceMappingURL=old.map") == std::optional<std::string>("old.map"));
  // The last comment wins; one inside code or a string does not count.
  CHECK(FindSourceMappingUrl("//# sourceMappingURL=1.map\n//# sourceMappingURL=2.map\n") ==
        std::optional<std::string>("2.map"));
  CHECK_FALSE(FindSourceMappingUrl("const s = '//# sourceMappingURL=fake.map';\n"));
  CHECK_FALSE(FindSourceMappingUrl("no comment here"));
  CHECK_FALSE(FindSourceMappingUrl("//# sourceMappingURL=\n"));

  std::string json = R"({"version":3,"sources":["a.ts"],"mappings":"AAAA"})";
  auto b64 = DecodeDataUrl("data:application/json;charset=utf-8;base64," + Base64(json));
  REQUIRE(b64.ok());
  CHECK(b64.value() == json);
  auto pct = DecodeDataUrl("data:application/json,%7B%22a%22%3A1%7D");
  REQUIRE(pct.ok());
  CHECK(pct.value() == "{\"a\":1}");
  CHECK_FALSE(DecodeDataUrl("data:application/json;base64,e30*").ok());
  CHECK_FALSE(DecodeDataUrl("data:application/json;base64").ok());
  CHECK_FALSE(DecodeDataUrl("data:application/json,%zz").ok());

  CHECK(ScriptPath("file:///srv/app/worker.js") == "/srv/app/worker.js");
  CHECK(ScriptPath("/srv/app/worker.js") == "/srv/app/worker.js");
  CHECK(ScriptPath("node:internal/fs") == "");
  CHECK(ScriptPath("https://example.com/a.js") == "");
}

TEST_CASE("source map locator: comment, beside the script, a maps folder, inline, and failures") {
  fs::path dir = FreshDir("locator");
  const std::string map = R"({"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"})";
  WriteText(dir / "maps" / "named.map", map);
  WriteText(dir / "with_comment.js", "f();\n//# sourceMappingURL=maps/named.map\n");
  WriteText(dir / "beside.js", "f();\n");
  WriteText(dir / "beside.js.map", map);
  WriteText(dir / "inline.js", "f();\n//# sourceMappingURL=data:application/json;base64," + Base64(map) + "\n");
  WriteText(dir / "missing.js", "f();\n//# sourceMappingURL=gone.js.map\n");
  WriteText(dir / "remote.js", "f();\n//# sourceMappingURL=https://cdn.example/remote.js.map\n");
  WriteText(dir / "bad_inline.js", "f();\n//# sourceMappingURL=data:application/json;base64,@@@@\n");
  WriteText(dir / "plain.js", "f();\n");
  WriteText(dir / "folder" / "elsewhere.js.map", map);

  SourceMapSearch search = TreeOf(dir);
  auto found = LocateSourceMap((dir / "with_comment.js").string(), search);
  REQUIRE(found.ok());
  REQUIRE(found.value());
  CHECK(found.value()->location == (dir / "maps" / "named.map").string());

  found = LocateSourceMap("file://" + (dir / "beside.js").string(), search);
  REQUIRE(found.ok());
  REQUIRE(found.value());
  CHECK(found.value()->location == (dir / "beside.js.map").string());

  found = LocateSourceMap((dir / "inline.js").string(), search);
  REQUIRE(found.ok());
  REQUIRE(found.value());
  CHECK(found.value()->json == map);
  CHECK(found.value()->location == (dir / "inline.js").string());

  found = LocateSourceMap((dir / "plain.js").string(), search);
  REQUIRE(found.ok());
  CHECK_FALSE(found.value());
  found = LocateSourceMap("node:internal/fs", search);
  REQUIRE(found.ok());
  CHECK_FALSE(found.value());

  auto missing = LocateSourceMap((dir / "missing.js").string(), search);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("gone.js.map") && Catch::Contains("cannot be read"));
  auto remote = LocateSourceMap((dir / "remote.js").string(), search);
  REQUIRE_FALSE(remote.ok());
  CHECK_THAT(remote.status().message(), Catch::Contains("remote"));
  auto bad_inline = LocateSourceMap((dir / "bad_inline.js").string(), search);
  REQUIRE_FALSE(bad_inline.ok());
  CHECK_THAT(bad_inline.status().message(), Catch::Contains("inline source map") && Catch::Contains("base64"));

  // A profile from another machine: the script is not here, its map is in --maps DIR.
  search.map_dirs = {(dir / "folder").string()};
  found = LocateSourceMap("/other/machine/elsewhere.js", search);
  REQUIRE(found.ok());
  REQUIRE(found.value());
  CHECK(found.value()->location == (dir / "folder" / "elsewhere.js.map").string());
}

TEST_CASE("source map provider: parses a map once and remembers failures", "[sourcemap]") {
  fs::path dir = FreshDir("provider");
  WriteText(dir / "shared.map", R"({"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"})");
  WriteText(dir / "one.js", "//# sourceMappingURL=shared.map\n");
  WriteText(dir / "two.js", "//# sourceMappingURL=shared.map\n");
  WriteText(dir / "broken.js", "//# sourceMappingURL=broken.js.map\n");
  WriteText(dir / "broken.js.map", "{not json");
  FileSourceMapProvider provider(TreeOf(dir));
  auto one = provider.MapFor((dir / "one.js").string());
  auto again = provider.MapFor((dir / "one.js").string());
  auto two = provider.MapFor((dir / "two.js").string());
  REQUIRE(one.ok());
  REQUIRE(two.ok());
  REQUIRE(one.value() != nullptr);
  CHECK(again.value() == one.value());
  CHECK(two.value() == one.value());
  CHECK(provider.maps_parsed() == 1);
  auto broken = provider.MapFor((dir / "broken.js").string());
  REQUIRE_FALSE(broken.ok());
  CHECK_THAT(broken.status().message(), Catch::Contains("broken.js.map") && Catch::Contains("invalid JSON"));
  CHECK_FALSE(provider.MapFor((dir / "broken.js").string()).ok());
  CHECK(provider.maps_parsed() == 2);
}

// ---- Maps written by the real tools (generated by the CTest fixture) ----

TEST_CASE("source map: esbuild's minified bundle map", "[.sourcemap-tools]") {
  fs::path map_path = GeneratedDir() / "esbuild" / "worker.min.js.map";
  REQUIRE(fs::exists(map_path));
  auto m = SourceMap::Parse(ReadText(map_path), map_path.string());
  REQUIRE(m.ok());
  REQUIRE(m->sources().size() == 3);
  for (size_t i = 0; i < m->sources().size(); ++i) {
    fs::path source = m->sources()[i];
    CHECK(source.parent_path() == TsSourceDir().lexically_normal());
    REQUIRE(m->source_content(i));
    CHECK(*m->source_content(i) == ReadText(source));  // esbuild embeds the sources
  }
  CHECK(m->generated_lines() == 1);  // minified: everything on line 1
  const auto& names = m->names();
  for (const char* original : {"handleRequest", "parseRoute", "statusFor", "MetricsRegistry"}) {
    CHECK(std::find(names.begin(), names.end(), original) != names.end());
  }
}

TEST_CASE("source map: tsc maps and an index map made of them", "[.sourcemap-tools]") {
  fs::path tsc = GeneratedDir() / "tsc";
  auto routing = SourceMap::Parse(ReadText(tsc / "routing.js.map"), (tsc / "routing.js.map").string());
  auto metrics = SourceMap::Parse(ReadText(tsc / "metrics.js.map"), (tsc / "metrics.js.map").string());
  REQUIRE(routing.ok());
  REQUIRE(metrics.ok());
  CHECK(routing->sources() == std::vector<std::string>{(TsSourceDir() / "routing.ts").lexically_normal().string()});
  CHECK_FALSE(routing->source_content(0));  // tsc does not embed sources by default

  // Concatenate routing.js and metrics.js as a bundler would and describe the
  // result with an index map whose sections are the two tsc maps.
  std::string routing_js = ReadText(tsc / "routing.js");
  int64_t routing_lines = std::count(routing_js.begin(), routing_js.end(), '\n');
  std::string index =
      "{\"version\":3,\"sections\":[{\"offset\":{\"line\":0,\"column\":0},\"map\":" + ReadText(tsc / "routing.js.map") +
      "},{\"offset\":{\"line\":" + std::to_string(routing_lines) +
      ",\"column\":0},\"map\":" + ReadText(tsc / "metrics.js.map") + "}]}";
  auto combined = SourceMap::Parse(index, (tsc / "combined.js.map").string());
  REQUIRE(combined.ok());
  CHECK(combined->sources().size() == 2);

  // Node's V8 positions of recordRequest and parseRoute in the separate files.
  int checked = 0;
  for (const Frame& f : RecordedFrames("tsc")) {
    int64_t line_offset = 0;
    std::string ts;
    if (f.function_name == "recordRequest") {
      line_offset = routing_lines;
      ts = "metrics.ts";
    } else if (f.function_name == "parseRoute") {
      ts = "routing.ts";
    } else {
      continue;
    }
    auto p = combined->Lookup(f.line + line_offset, f.column);
    REQUIRE(p);
    CHECK(fs::path(combined->sources()[p->source]).filename() == ts);
    CHECK(p->line == LineOf(TsSourceDir() / ts, f.function_name + "("));
    ++checked;
  }
  CHECK(checked == 2);
}

TEST_CASE("source map locator reads only regular files in the allowed trees and quotes nothing it read") {
  fs::path root = FreshDir("locator_root");
  fs::path outside = FreshDir("locator_outside");
  const std::string secret = "SECRET_TOKEN_4c1d";
  WriteText(outside / "secret.map", R"({"version":")" + secret + R"(","sources":[],"mappings":""})");
  WriteText(outside / "secret.txt", secret + "\n");
  const std::string map = R"({"version":3,"sources":["a.ts"],"names":[],"mappings":"AAAA"})";
  SourceMapSearch search = TreeOf(root);
  auto no_secret = [&](const Status& s) {
    INFO(s.message());
    CHECK(s.message().find(secret) == std::string::npos);
    CHECK(s.message().find("secret") == std::string::npos);  // not even the file's name
  };

  // Absolute paths, ../ escapes, file:// elsewhere, /proc and /etc: refused, nothing opened.
  for (const std::string& url : {(outside / "secret.map").string(), std::string("../locator_outside/secret.map"),
                                 "file://" + (outside / "secret.map").string(), std::string("/proc/self/environ"),
                                 std::string("/etc/passwd"), std::string("%2E%2E/locator_outside/secret.map")}) {
    INFO(url);
    WriteText(root / "worker.js", "f();\n//# sourceMappingURL=" + url + "\n");
    auto found = LocateSourceMap((root / "worker.js").string(), search);
    REQUIRE_FALSE(found.ok());
    CHECK_THAT(found.status().message(), Catch::Contains("outside the folders heapprof reads maps from"));
    no_secret(found.status());
  }

  // A symbolic link planted in the tree (beside the script, in a maps folder) is not followed out of it.
  WriteText(root / "linked.js", "f();\n");
  fs::create_symlink(outside / "secret.map", root / "linked.js.map");
  auto linked = LocateSourceMap((root / "linked.js").string(), search);
  REQUIRE(linked.ok());
  CHECK_FALSE(linked.value());
  fs::create_directories(root / "maps");
  fs::create_symlink(outside / "secret.map", root / "maps" / "linked.js.map");
  SourceMapSearch with_maps = search;
  with_maps.map_dirs = {(root / "maps").string()};
  linked = LocateSourceMap((root / "linked.js").string(), with_maps);
  REQUIRE(linked.ok());
  CHECK_FALSE(linked.value());
  WriteText(root / "via_link.js", "f();\n//# sourceMappingURL=linked.js.map\n");
  auto via_link = LocateSourceMap((root / "via_link.js").string(), search);
  REQUIRE_FALSE(via_link.ok());
  no_secret(via_link.status());

  // A FIFO named by the script fails at once instead of blocking in open().
  REQUIRE(::mkfifo((root / "fifo.map").c_str(), 0600) == 0);
  WriteText(root / "fifo.js", "f();\n//# sourceMappingURL=fifo.map\n");
  ::alarm(20);  // a blocking open() would hang: let the test die instead
  auto fifo = LocateSourceMap((root / "fifo.js").string(), search);
  ::alarm(0);
  REQUIRE_FALSE(fifo.ok());
  CHECK_THAT(fifo.status().message(), Catch::Contains("is a FIFO, not a regular file"));

  // A script outside the trees is not read, even to find an inline map.
  WriteText(outside / "inline.js", "f();\n//# sourceMappingURL=data:application/json;base64," + Base64(map) + "\n");
  auto foreign = LocateSourceMap((outside / "inline.js").string(), search);
  REQUIRE(foreign.ok());
  CHECK_FALSE(foreign.value());
  // No allowed folder at all: nothing on disk is read.
  WriteText(root / "plain.js", "f();\n");
  WriteText(root / "plain.js.map", map);
  auto nowhere = LocateSourceMap((root / "plain.js").string(), SourceMapSearch{});
  REQUIRE(nowhere.ok());
  CHECK_FALSE(nowhere.value());
  // Inside the tree, a map in a subfolder and one beside the script are found.
  auto beside = LocateSourceMap((root / "plain.js").string(), search);
  REQUIRE(beside.ok());
  REQUIRE(beside.value());

  // What a map holds is never echoed into the provider's message (it becomes a warning and a comment).
  fs::copy_file(outside / "secret.map", root / "bad_version.js.map");
  WriteText(root / "bad_version.js", "f();\n");
  WriteText(root / "bad_json.js.map", "{\"version\":3, " + secret + "}");
  WriteText(root / "bad_json.js", "f();\n");
  FileSourceMapProvider provider(search);
  for (const char* script : {"bad_version.js", "bad_json.js"}) {
    auto m = provider.MapFor((root / script).string());
    REQUIRE_FALSE(m.ok());
    CHECK(m.status().message().find(secret) == std::string::npos);
  }
}
