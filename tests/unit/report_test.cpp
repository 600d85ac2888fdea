// Per-function totals and the top table, on hand-made profiles.
#include <catch2/catch.hpp>

#include "heapprof/core/report.h"

using namespace heapprof;

namespace {

// A tiny heap profile: functions by name, stacks leaf first, values for the
// four heap sample types.
struct ProfileMaker {
  Profile p;
  ProfileMaker() {
    p.sample_types = {{p.AddString("alloc_objects"), p.AddString("count")},
                      {p.AddString("alloc_space"), p.AddString("bytes")},
                      {p.AddString("inuse_objects"), p.AddString("count")},
                      {p.AddString("inuse_space"), p.AddString("bytes")}};
    p.default_sample_type = p.sample_types[3].type;
  }
  LocationId Fn(const std::string& name, int line = 1) {
    for (const Location& l : p.locations) {
      if (p.FunctionName(l.id) == name) return l.id;
    }
    FunctionId fid{static_cast<uint32_t>(p.functions.size() + 1)};
    p.functions.push_back(Function{fid, p.AddString(name), StringId{0}, p.AddString("/srv/worker.js"), line});
    LocationId lid{static_cast<uint32_t>(p.locations.size() + 1)};
    p.locations.push_back(Location{lid, 0, {Line{fid, line, 0}}});
    return lid;
  }
  void Add(std::vector<std::string> stack, int64_t alloc, int64_t inuse) {
    Sample s;
    for (const auto& name : stack) s.locations.push_back(Fn(name));
    s.values = {1, alloc, inuse ? 1 : 0, inuse};
    p.samples.push_back(s);
  }
};

const FunctionTotal* Find(const std::vector<FunctionTotal>& totals, const std::string& name) {
  for (const auto& t : totals) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("flat goes to the leaf, cum to every function on the stack once") {
  ProfileMaker m;
  m.Add({"observe", "handle", "fetch"}, 600, 500);
  m.Add({"render", "handle", "fetch"}, 300, 0);
  m.Add({"walk", "walk", "walk", "fetch"}, 100, 10);  // recursion
  auto alloc = FunctionTotals(m.p, kAllocSpace);
  REQUIRE(alloc.size() == 5);
  CHECK(alloc[0].name == "observe");
  CHECK(alloc[0].flat == 600);
  CHECK(alloc[0].filename == "/srv/worker.js");
  CHECK(Find(alloc, "handle")->flat == 0);
  CHECK(Find(alloc, "handle")->cum == 900);
  CHECK(Find(alloc, "fetch")->cum == 1000);
  CHECK(Find(alloc, "walk")->flat == 100);
  CHECK(Find(alloc, "walk")->cum == 100);

  auto by_cum = FunctionTotals(m.p, kAllocSpace, /*sort_by_cum=*/true);
  CHECK(by_cum[0].name == "fetch");
  CHECK(by_cum[1].name == "handle");

  auto inuse = FunctionTotals(m.p, kInuseSpace);
  CHECK(inuse[0].name == "observe");
  CHECK(inuse[0].flat == 500);
  CHECK(Find(inuse, "render") == nullptr);  // nothing of render's is in use
}

TEST_CASE("samples without a stack are shown, not dropped") {
  ProfileMaker m;
  m.Add({"a"}, 10, 10);
  m.p.samples.push_back(Sample{{}, {1, 30, 1, 30}, {}});
  auto totals = FunctionTotals(m.p, kAllocSpace);
  REQUIRE(totals.size() == 2);
  CHECK(totals[0].name == "(no stack)");
  CHECK(totals[0].flat == 30);
}

TEST_CASE("sample types resolve by name, index or the profile's default") {
  ProfileMaker m;
  CHECK(ResolveSampleIndex(m.p, "").value() == kInuseSpace);
  CHECK(ResolveSampleIndex(m.p, "alloc_space").value() == kAllocSpace);
  CHECK(ResolveSampleIndex(m.p, "0").value() == kAllocObjects);
  auto bad = ResolveSampleIndex(m.p, "cpu");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("alloc_objects, alloc_space, inuse_objects, inuse_space"));
  CHECK_FALSE(ResolveSampleIndex(m.p, "7").ok());
  m.p.default_sample_type = StringId{0};
  CHECK(ResolveSampleIndex(m.p, "").value() == 3);  // pprof picks the last type
  Profile empty;
  CHECK_FALSE(ResolveSampleIndex(empty, "").ok());
}

TEST_CASE("values are human-readable for bytes and counts") {
  CHECK(FormatValue(0, "bytes") == "0 B");
  CHECK(FormatValue(1023, "bytes") == "1023 B");
  CHECK(FormatValue(1536, "bytes") == "1.5 KiB");
  CHECK(FormatValue(30 * 1024 * 1024 + 300 * 1024, "bytes") == "30.3 MiB");
  CHECK(FormatValue(200ll * 1024 * 1024, "bytes") == "200 MiB");
  CHECK(FormatValue(-2048, "bytes") == "-2.0 KiB");
  CHECK(FormatValue(3ll << 30, "bytes") == "3.0 GiB");
  CHECK(FormatValue(999, "count") == "999");
  CHECK(FormatValue(12345, "count") == "12.3k");
  CHECK(FormatValue(4500000, "count") == "4.5M");
  CHECK(FormatValue(2500000, "nanoseconds") == "2.5ms");
  CHECK(FormatValue(42, "widgets") == "42 widgets");
  CHECK(FormatValue(INT64_MIN, "bytes").front() == '-');
}

TEST_CASE("the top table lists functions with shares that add up") {
  ProfileMaker m;
  m.Add({"observe", "fetch"}, 3 * 1024 * 1024, 2 * 1024 * 1024);
  m.Add({"render", "fetch"}, 1024 * 1024, 0);
  TopOptions options;
  options.sample_index = kAllocSpace;
  options.rows = 10;
  std::string table = FormatTopTable(m.p, options);
  INFO(table);
  CHECK_THAT(table, Catch::StartsWith("alloc_space: total 4.0 MiB, 3 functions; top 3 by flat\n"));
  CHECK_THAT(table, Catch::Contains("flat%"));
  CHECK_THAT(table, Catch::Contains("3.0 MiB   75.0%   75.0%  3.0 MiB   75.0%  observe  worker.js:1"));
  CHECK_THAT(table, Catch::Contains("1.0 MiB   25.0%  100.0%  1.0 MiB   25.0%  render  worker.js:1"));
  CHECK_THAT(table, Catch::Contains("0 B    0.0%  100.0%  4.0 MiB  100.0%  fetch  worker.js:1"));
  // Rows are in flat order: observe before render before fetch.
  CHECK(table.find("observe") < table.find("render"));
  CHECK(table.find("render") < table.find("  fetch"));

  options.rows = 1;
  options.sort_by_cum = true;
  std::string cum = FormatTopTable(m.p, options);
  CHECK_THAT(cum, Catch::Contains("top 1 by cumulative"));
  CHECK_THAT(cum, Catch::Contains("fetch"));
  CHECK_THAT(cum, !Catch::Contains("observe"));

  options.sample_index = 9;
  CHECK_THAT(FormatTopTable(m.p, options), Catch::Contains("no sample type"));
}
