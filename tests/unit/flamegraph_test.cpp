// The flamegraph page and SVG on hand-made profiles: the embedded data has the
// right tree and values, the page is self-contained, bad inputs are refused.
#include <map>
#include <regex>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "heapprof/core/flamegraph.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/core/stack_table.h"
#include "unit/flamegraph_profiles.h"

using namespace heapprof;
using namespace heapprof::testing;

namespace {

const std::string kDataOpen = "<script type=\"application/json\" id=\"heapprof-data\">";

std::string DataText(const std::string& page) {
  size_t open = page.find(kDataOpen);
  REQUIRE(open != std::string::npos);
  size_t start = open + kDataOpen.size();
  size_t close = page.find("</script>", start);
  REQUIRE(close != std::string::npos);
  return page.substr(start, close - start);
}

nlohmann::json PageData(const std::string& page) { return nlohmann::json::parse(DataText(page)); }

// "main/handle/leak" -> total of that path, for one value column.
std::map<std::string, int64_t> PathTotals(const nlohmann::json& d, size_t column) {
  size_t n = d["up"].size();
  std::vector<int64_t> total(n);
  std::vector<std::string> path(n);
  std::vector<size_t> parent(n);
  for (size_t i = 0; i < n; ++i) {
    parent[i] = i - d["up"][i].get<size_t>();
    total[i] = d["self"][column][i].get<int64_t>();
    int fn = d["fn"][i].get<int>();
    if (i > 0) {
      std::string name = d["names"][fn].get<std::string>();
      path[i] = parent[i] == 0 ? name : path[parent[i]] + "/" + name;
    }
  }
  for (size_t i = n; i-- > 1;) total[parent[i]] += total[i];
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < n; ++i) out[i == 0 ? "" : path[i]] = total[i];
  return out;
}

}  // namespace

TEST_CASE("flamegraph page embeds the call tree with every sample type") {
  Profile p = KnownProfile();
  Result<std::string> page = RenderFlamegraphHtml(p, {});
  REQUIRE(page.ok());
  nlohmann::json d = PageData(*page);
  REQUIRE(d["types"].size() == 4);
  CHECK(d["types"][kAllocSpace]["type"] == "alloc_space");
  CHECK(d["types"][kAllocSpace]["unit"] == "bytes");
  CHECK(d["initialType"] == kInuseSpace);  // the profile's default
  CHECK(d["diff"] == false);

  auto space = PathTotals(d, kAllocSpace);
  CHECK(space[""] == 10 * static_cast<int64_t>(kMiB));
  CHECK(space["main"] == 10 * static_cast<int64_t>(kMiB));
  CHECK(space["main/handle"] == 9 * static_cast<int64_t>(kMiB));
  CHECK(space["main/handle/leak"] == 6 * static_cast<int64_t>(kMiB));
  CHECK(space["main/handle/parse"] == 3 * static_cast<int64_t>(kMiB));
  CHECK(space.size() == 5);

  auto objects = PathTotals(d, kAllocObjects);
  CHECK(objects[""] == 55);
  CHECK(objects["main/handle/parse"] == 48);

  auto inuse = PathTotals(d, kInuseSpace);
  CHECK(inuse[""] == 6 * static_cast<int64_t>(kMiB));
  CHECK(inuse["main/handle/leak"] == 6 * static_cast<int64_t>(kMiB));
  CHECK(inuse["main/handle/parse"] == 0);

  // Every column sums to the profile's own total.
  for (int t = 0; t < 4; ++t) CHECK(PathTotals(d, t)[""] == p.Total(t));
}

TEST_CASE("flamegraph page starts on the requested sample type") {
  Profile p = KnownProfile();
  FlamegraphOptions options;
  options.sample_type = "alloc_objects";
  options.title = "my <worker>";
  Result<std::string> page = RenderFlamegraphHtml(p, options);
  REQUIRE(page.ok());
  CHECK(PageData(*page)["initialType"] == kAllocObjects);
  CHECK(page->find("<title>my &lt;worker&gt;</title>") != std::string::npos);
  options.sample_type = "1";
  page = RenderFlamegraphHtml(p, options);
  REQUIRE(page.ok());
  CHECK(PageData(*page)["initialType"] == kAllocSpace);
}

TEST_CASE("flamegraph page is self-contained and light") {
  Result<std::string> page = RenderFlamegraphHtml(KnownProfile(), {});
  REQUIRE(page.ok());
  const std::string& html = *page;
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // Nothing is fetched: no external scripts, styles, images or fonts.
  CHECK(html.find("<script src") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("fetch(") == std::string::npos);
  // Exactly the elements of the template: the data and the script, one style.
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("</script>") == 2);
  CHECK(count("</style>") == 1);
  // Every template marker was filled.
  CHECK(html.find("{{") == std::string::npos);
  // The page without its data stays under 300 KB.
  CHECK(html.size() - DataText(html).size() < 300 * 1024);
}

TEST_CASE("function names cannot break out of the data script") {
  Profile p = BuildProfile(SnapshotOf({
      {{"</script><script>alert(1)</script>", "<!--x"}, 2, kMiB, true},
      {{std::string("bad\xff\xfe utf8")}, 1, kMiB, true},
  }));
  Result<std::string> page = RenderFlamegraphHtml(p, {});
  REQUIRE(page.ok());
  CHECK(page->find("alert(1)</script>") == std::string::npos);
  CHECK(page->find("<!--x") == std::string::npos);
  nlohmann::json d = PageData(*page);
  bool found = false;
  for (const auto& name : d["names"]) found = found || name == "</script><script>alert(1)</script>";
  CHECK(found);  // the name survives, escaped
}

TEST_CASE("inlined lines become caller -> callee frames") {
  Profile p = KnownProfile();
  // Fold "handle" into the location of "leak" as its inlined caller:
  // lines are innermost first, so [leak, handle].
  Profile q = p;
  for (Sample& s : q.samples) {
    if (s.locations.size() == 3 && q.FunctionName(s.locations[0]) == "leak") {
      Location& leak = q.locations[static_cast<uint32_t>(s.locations[0]) - 1];
      if (leak.lines.size() == 1) leak.lines.push_back(q.location(s.locations[1]).lines[0]);
      s.locations.erase(s.locations.begin() + 1);
    }
  }
  Result<std::string> page = RenderFlamegraphHtml(q, {});
  REQUIRE(page.ok());
  auto totals = PathTotals(PageData(*page), kAllocSpace);
  CHECK(totals["main/handle/leak"] == 6 * static_cast<int64_t>(kMiB));
  CHECK(totals.count("main/leak") == 0);
}

TEST_CASE("flamegraph refuses bad inputs with clear errors") {
  SECTION("empty profile") {
    Profile empty = BuildProfile(SnapshotOf({}));
    Result<std::string> page = RenderFlamegraphHtml(empty, {});
    REQUIRE_FALSE(page.ok());
    CHECK(page.status().code() == ErrorCode::kInvalidArgument);
    CHECK_THAT(page.status().message(), Catch::Contains("no samples"));
    Result<std::string> svg = RenderFlamegraphSvg(empty, {});
    REQUIRE_FALSE(svg.ok());
    CHECK_THAT(svg.status().message(), Catch::Contains("no samples"));
  }
  SECTION("unknown sample type") {
    FlamegraphOptions options;
    options.sample_type = "cpu";
    Result<std::string> page = RenderFlamegraphHtml(KnownProfile(), options);
    REQUIRE_FALSE(page.ok());
    CHECK_THAT(page.status().message(), Catch::Contains("cpu") && Catch::Contains("inuse_space"));
    FlamegraphSvgOptions svg_options;
    svg_options.sample_type = "cpu";
    CHECK_FALSE(RenderFlamegraphSvg(KnownProfile(), svg_options).ok());
  }
  SECTION("dangling ids") {
    Profile p = KnownProfile();
    p.samples[0].locations.push_back(LocationId{999});
    Result<std::string> page = RenderFlamegraphHtml(p, {});
    REQUIRE_FALSE(page.ok());
    CHECK_FALSE(page.status().message().empty());
  }
}

TEST_CASE("SVG flamegraph draws frames in proportion to their values") {
  FlamegraphSvgOptions options;
  options.sample_type = "alloc_space";
  options.width = 1020;  // 1000 px of frames between 10 px margins
  Result<std::string> svg = RenderFlamegraphSvg(KnownProfile(), options);
  REQUIRE(svg.ok());
  CHECK(svg->rfind("<?xml", 0) == 0);
  CHECK(svg->find("<script") == std::string::npos);
  // <g><title>NAME (file:line)\n...</title><rect x=".." y=".." width="W" ...
  std::regex frame(R"re(<g><title>([^ \n<]+)[^<]*</title><rect x="([0-9.]+)" y="([0-9]+)" width="([0-9.]+)")re");
  std::map<std::string, double> width;
  std::map<std::string, int> y;
  for (auto it = std::sregex_iterator(svg->begin(), svg->end(), frame); it != std::sregex_iterator(); ++it) {
    width[(*it)[1]] = std::stod((*it)[4]);
    y[(*it)[1]] = std::stoi((*it)[3]);
  }
  REQUIRE(width.size() == 5);  // all, main, handle, leak, parse
  // Widths are value * 1000 px minus a 1 px gap.
  CHECK(width["all"] == Approx(999).margin(0.01));
  CHECK(width["handle"] == Approx(899).margin(0.01));
  CHECK(width["leak"] == Approx(599).margin(0.01));
  CHECK(width["parse"] == Approx(299).margin(0.01));
  // Flame orientation: callees above callers.
  CHECK(y["leak"] < y["handle"]);
  CHECK(y["handle"] < y["main"]);
  CHECK(y["main"] < y["all"]);
  CHECK(svg->find("alloc_space total 10.0 MiB") != std::string::npos);
}

TEST_CASE("SVG flamegraph colours runtime frames apart from the worker's own") {
  internal::StackTable table;
  RawSnapshot snap;
  snap.info.interval_bytes = kInterval;
  StackId fetch = table.InternStack(StackId{0}, table.InternFrame({"fetch", "worker.js", 1, 3, 1}));
  StackId request = table.InternStack(fetch, table.InternFrame({"makeRequest", "heapprof:runtime", 1, 40, 1}));
  StackId pattern = table.InternStack(
      fetch, table.InternFrame({"exec", "heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js", 1, 1, 9}));
  StackId fs = table.InternStack(fetch, table.InternFrame({"readFile", "node:fs", 1, 7, 1}));
  uint64_t id = 1;
  for (StackId s : {fetch, request, pattern, fs}) snap.samples.push_back({id++, s, kMiB, false});
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  FlamegraphSvgOptions options;
  options.sample_type = "alloc_space";
  Result<std::string> svg = RenderFlamegraphSvg(BuildProfile(snap), options);
  REQUIRE(svg.ok());
  // <g><title>NAME ...</title><rect ... fill="hsl(H,S%,L%)"
  std::regex frame(R"re(<g><title>([^ \n<]+)[^<]*</title><rect [^>]*fill="hsl\(([0-9]+),([0-9]+)%)re");
  std::map<std::string, std::pair<int, int>> hue_saturation;
  for (auto it = std::sregex_iterator(svg->begin(), svg->end(), frame); it != std::sregex_iterator(); ++it) {
    hue_saturation[(*it)[1]] = {std::stoi((*it)[2]), std::stoi((*it)[3])};
  }
  auto runtime = [&](const std::string& name) {
    auto [hue, saturation] = hue_saturation.at(name);
    return hue >= 185 && hue < 210 && saturation == 42;
  };
  CHECK(runtime("makeRequest"));
  CHECK(runtime("exec"));
  CHECK(runtime("readFile"));
  CHECK_FALSE(runtime("fetch"));
}

TEST_CASE("SVG flamegraph leaves out frames narrower than a pixel") {
  Profile p = BuildProfile(SnapshotOf({
      {{"main", "big"}, 5000, kMiB, true},
      {{"main", "tiny"}, 1, kMiB, true},
  }));
  FlamegraphSvgOptions options;
  options.width = 1020;
  Result<std::string> svg = RenderFlamegraphSvg(p, options);
  REQUIRE(svg.ok());
  CHECK(svg->find("<g><title>big") != std::string::npos);
  CHECK(svg->find("<g><title>tiny") == std::string::npos);
  options.width = 100;
  CHECK_FALSE(RenderFlamegraphSvg(p, options).ok());
}

TEST_CASE("a 50k-frame profile becomes a page") {
  Profile big = BigProfile(50'000);
  Result<std::string> page = RenderFlamegraphHtml(big, {});
  REQUIRE(page.ok());
  nlohmann::json d = PageData(*page);
  CHECK(d["up"].size() >= 50'000);
  CHECK(PathTotals(d, kAllocSpace)[""] == big.Total(kAllocSpace));
}
