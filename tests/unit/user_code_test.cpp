// The answer a newcomer reads: file labels unique within a profile, the
// "your code" view, the one-line summary, and error bars for profiles whose
// rows carry no object size (@datadog/pprof's).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "heapprof/core/diff.h"
#include "heapprof/core/estimate.h"
#include "heapprof/core/file_labels.h"
#include "heapprof/core/flamegraph.h"
#include "heapprof/core/query.h"
#include "heapprof/core/report.h"

using namespace heapprof;
using heapprof::internal::FileLabels;

namespace {

// A heap profile sampled every 64 KiB whose rows carry the object size, as
// heapprof writes them; frames are (name, file) pairs, leaf first.
struct Maker {
  Profile p;
  Maker() {
    p.sample_types = {{p.AddString("alloc_objects"), p.AddString("count")},
                      {p.AddString("alloc_space"), p.AddString("bytes")},
                      {p.AddString("inuse_objects"), p.AddString("count")},
                      {p.AddString("inuse_space"), p.AddString("bytes")}};
    p.default_sample_type = p.sample_types[3].type;
    p.period = 64 * 1024;
  }
  LocationId Fn(const std::string& name, const std::string& file, int line) {
    for (const Location& l : p.locations) {
      const Function& f = p.function(l.lines[0].function);
      if (p.str(f.name) == name && p.str(f.filename) == file) return l.id;
    }
    FunctionId fid{static_cast<uint32_t>(p.functions.size() + 1)};
    p.functions.push_back(Function{fid, p.AddString(name), StringId{0}, p.AddString(file), line});
    LocationId lid{static_cast<uint32_t>(p.locations.size() + 1)};
    p.locations.push_back(Location{lid, 0, {Line{fid, line, 0}}});
    return lid;
  }
  // `samples` samples of 64-byte objects: each stands for 64 KiB (p = s/I).
  void Add(const std::vector<std::pair<std::string, std::string>>& stack, int samples) {
    Sample s;
    int line = 1;
    for (const auto& [name, file] : stack) s.locations.push_back(Fn(name, file, line++));
    const double p_sample = -std::expm1(-64.0 / static_cast<double>(p.period));
    int64_t objects = std::llround(samples / p_sample);
    s.values = {objects, objects * 64, objects, objects * 64};
    s.labels.push_back(Label{p.AddString("bytes"), StringId{0}, 64, StringId{0}});
    p.samples.push_back(s);
  }
};

}  // namespace

TEST_CASE("file labels: a project's own file by its path in the project, else the shortest unique suffix", "[labels]") {
  FileLabels labels = FileLabels::Of(std::vector<std::string_view>{
      "/app/node_modules/@trpc/server/dist/index.js", "/app/node_modules/hono/dist/index.js", "/app/src/worker.js",
      "/app/node_modules/zod/lib/index.js", "heapprof:runtime",
      "heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js", "../src/a/util.ts", "../src/b/util.ts"});
  CHECK(labels.Label("/app/node_modules/@trpc/server/dist/index.js") == "@trpc/server/dist/index.js");
  CHECK(labels.Label("/app/node_modules/hono/dist/index.js") == "hono/dist/index.js");
  CHECK(labels.Label("/app/node_modules/zod/lib/index.js") == "lib/index.js");
  // A project bundle's map names the project's files as the project does.
  FileLabels project =
      FileLabels::Of(std::vector<std::string_view>{"./src/index.ts", "./node_modules/hono/dist/x.js", "lib/a.js"});
  CHECK(project.Label("./src/index.ts") == "src/index.ts");
  CHECK(project.Label("./node_modules/hono/dist/x.js") == "x.js");
  CHECK(project.Label("lib/a.js") == "a.js");
  CHECK(labels.Label("/app/src/worker.js") == "worker.js");
  CHECK(labels.Label("heapprof:runtime") == "heapprof:runtime");
  CHECK(labels.Label("heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js") ==
        "heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js");
  CHECK(labels.Label("../src/a/util.ts") == "a/util.ts");
  // A file that is a suffix of another is shown whole; a file never given, by its base name.
  FileLabels nested = FileLabels::Of(std::vector<std::string_view>{"a/b.js", "x/a/b.js"});
  CHECK(nested.Label("a/b.js") == "a/b.js");
  CHECK(nested.Label("x/a/b.js") == "x/a/b.js");
  CHECK(nested.Label("/elsewhere/c.js") == "c.js");
  // A user's file named like one of the runtime's modules is told apart from it.
  FileLabels beside = FileLabels::Of(
      std::vector<std::string_view>{"/app/node_modules/hono/dist/utils/url.js", "heapprof:runtime/url.js"});
  CHECK(beside.Label("/app/node_modules/hono/dist/utils/url.js") == "utils/url.js");
  CHECK(beside.Label("heapprof:runtime/url.js") == "heapprof:runtime/url.js");
  // Anonymous functions carry the label in their name.
  CHECK(labels.FunctionName("(anonymous index.js:3:14)", "/app/node_modules/hono/dist/index.js") ==
        "(anonymous hono/dist/index.js:3:14)");
  CHECK(labels.FunctionName("handler", "/app/node_modules/hono/dist/index.js") == "handler");
}

TEST_CASE("file labels: no two files of a table, a stack list or a diff print alike", "[labels]") {
  Maker m;
  m.Add({{"fakePromise", "/app/node_modules/@whatwg-node/promise-helpers/cjs/index.js"}}, 30);
  m.Add({{"createHandler", "/app/node_modules/graphql-yoga/cjs/index.js"}}, 20);
  TopOptions options;
  options.sample_index = kInuseSpace;
  std::string table = FormatTopTable(m.p, options);
  CHECK_THAT(table, Catch::Contains("fakePromise  @whatwg-node/promise-helpers/cjs/index.js:1"));
  CHECK_THAT(table, Catch::Contains("createHandler  graphql-yoga/cjs/index.js:1"));
  std::string stacks = FormatStacks(m.p, TopStacks(m.p, kInuseSpace, 5), "bytes");
  CHECK_THAT(stacks, Catch::Contains("fakePromise (@whatwg-node/promise-helpers/cjs/index.js:1)"));

  Maker next = m;
  next.Add({{"createHandler", "/app/node_modules/graphql-yoga/cjs/index.js"}}, 400);
  Result<ProfileDiff> diff = DiffProfiles(m.p, next.p, {});
  REQUIRE(diff.ok());
  CHECK_THAT(FormatDiffTable(diff.value(), 5), Catch::Contains("createHandler (graphql-yoga/cjs/index.js:1)"));
}

TEST_CASE("user-code view: built-ins and runtime frames are charged to their nearest user-code caller", "[user-code]") {
  Maker m;
  // padEnd (a built-in) allocates for plantedCulprit; the runtime's Response for it too.
  m.Add({{"padEnd", ""},
         {"plantedCulprit", "/w/worker.js"},
         {"dispatch", "/w/node_modules/hono/dist/hono.js"},
         {"handleRequest", "heapprof:runtime"}},
        300);
  m.Add({{"Response", "heapprof:runtime"}, {"plantedCulprit", "/w/worker.js"}, {"handleRequest", "heapprof:runtime"}},
        100);
  m.Add({{"slice", ""}, {"route", "/w/node_modules/hono/dist/hono.js"}}, 150);
  // The runtime on its own, outside any user frame.
  m.Add({{"makeRequest", "heapprof:runtime"}, {"(V8 API)", ""}}, 50);

  std::vector<FunctionTotal> all = FunctionTotals(m.p, kInuseSpace);
  REQUIRE_FALSE(all.empty());
  CHECK(all[0].name == "padEnd");  // the full table stays as V8 recorded it

  std::vector<FunctionTotal> mine = FunctionTotals(m.p, kInuseSpace, false, FrameView::kUserCode);
  REQUIRE(mine.size() >= 3);
  CHECK(mine[0].name == "plantedCulprit");
  CHECK(mine[0].flat == m.p.samples[0].values[kInuseSpace] + m.p.samples[1].values[kInuseSpace]);
  CHECK(mine[1].name == "route");
  CHECK(mine[2].name == "makeRequest");
  for (const FunctionTotal& t : mine) {
    CHECK(t.name != "padEnd");
    CHECK(t.name != "slice");
    CHECK(t.name != "Response");
  }
  // Frames above the user's code keep their cum.
  bool dispatch = false;
  for (const FunctionTotal& t : mine) dispatch = dispatch || (t.name == "dispatch" && t.cum > 0 && t.flat == 0);
  CHECK(dispatch);

  std::string line = FormatSummaryLine(m.p, kInuseSpace);
  CHECK_THAT(line, Catch::StartsWith("plantedCulprit (worker.js:2) holds 66.7% ±"));
  CHECK_THAT(line, Catch::Contains("of that through the built-ins and runtime functions it calls"));

  TopOptions options;
  options.view = FrameView::kUserCode;
  std::string table = FormatTopTable(m.p, options);
  CHECK_THAT(table, Catch::Contains("(your code)"));
  CHECK_THAT(table, !Catch::Contains("padEnd"));
}

TEST_CASE("summary: says when heapprof's runtime itself is the top consumer, and how much per request", "[user-code]") {
  Maker m;
  m.Add({{"makeRequest", "heapprof:runtime"}, {"(V8 API)", ""}}, 300);
  m.Add({{"concat", ""}, {"handler", "/w/worker.js"}}, 100);
  SummaryOptions options;
  options.requests = 1000;
  std::string line = FormatSummaryLine(m.p, kAllocSpace, options);
  CHECK_THAT(line, Catch::StartsWith("heapprof's runtime itself allocated the most, outside any user-code frame: "
                                     "makeRequest (heapprof:runtime:1) 75.0% ±"));
  CHECK_THAT(line, Catch::Contains(" per request; the top user function: handler (worker.js:2) 25.0% ±"));
  // Few samples: the line says it cannot be sure.
  Maker few;
  few.Add({{"a", "/w/worker.js"}}, 3);
  few.Add({{"b", "/w/worker.js"}}, 2);
  CHECK_THAT(FormatSummaryLine(few.p, kInuseSpace), Catch::Contains("too few samples to be sure"));
}

TEST_CASE("error bars for a profile without object sizes: sizes from its objects/space pair", "[estimate]") {
  // @datadog/pprof's heap profile: sample types objects/count and space/bytes,
  // period in bytes, one row per V8 allocation entry and no "bytes" label.
  Profile p;
  p.sample_types = {{p.AddString("objects"), p.AddString("count")}, {p.AddString("space"), p.AddString("bytes")}};
  p.period = 512 * 1024;
  auto fn = [&](const char* name) {
    FunctionId fid{static_cast<uint32_t>(p.functions.size() + 1)};
    p.functions.push_back(Function{fid, p.AddString(name), StringId{0}, p.AddString("/srv/app.js"), 1});
    LocationId lid{static_cast<uint32_t>(p.locations.size() + 1)};
    p.locations.push_back(Location{lid, 0, {Line{fid, 1, 0}}});
    return lid;
  };
  LocationId leak = fn("leak"), other = fn("other");
  // V8 scales a count of n samples of s bytes to round(n / p(s)).
  auto row = [&](LocationId at, int n, double size) {
    double prob = -std::expm1(-size / static_cast<double>(p.period));
    int64_t count = std::llround(n / prob);
    p.samples.push_back(Sample{{at}, {count, count * static_cast<int64_t>(size)}, {}});
  };
  row(leak, 40, 1024);
  row(leak, 10, 100000);
  row(other, 10, 1024);
  std::optional<SamplingModel> model = SamplingModel::For(p, 1);
  REQUIRE(model);
  CHECK(model->total().samples == Approx(60).margin(0.5));
  CHECK(SamplingModel::Unavailable(p, 1).empty());
  TopOptions options;
  options.sample_index = 1;
  std::string table = FormatTopTable(p, options);
  CHECK_THAT(table, Catch::Contains("from 60 samples"));
  CHECK_THAT(table, Catch::Contains("% ±"));

  // No period: one line says why there are no error bars.
  p.period = 0;
  CHECK_FALSE(SamplingModel::For(p, 1));
  CHECK_THAT(FormatTopTable(p, options), Catch::Contains("(no sampling error: the profile does not say how often it "
                                                         "was sampled (no period))"));
  // A period but no way to tell object sizes.
  p.period = 512 * 1024;
  p.sample_types[0].type = p.AddString("things");
  CHECK_THAT(SamplingModel::Unavailable(p, 1), Catch::Contains("no object size"));
}

TEST_CASE("flamegraph page: file labels, and a warning for a sample type with too few samples", "[labels]") {
  Maker m;
  m.Add({{"fakePromise", "/app/node_modules/@whatwg-node/promise-helpers/cjs/index.js"}}, 3);
  m.Add({{"createHandler", "/app/node_modules/graphql-yoga/cjs/index.js"}}, 2);
  Result<std::string> page = RenderFlamegraphHtml(m.p, {});
  REQUIRE(page.ok());
  CHECK_THAT(page.value(), Catch::Contains("\"fileLabels\":[\"@whatwg-node/promise-helpers/cjs/index.js\""));
  CHECK_THAT(page.value(), Catch::Contains("inuse_space: 5 samples; shares are"));
  CHECK_THAT(page.value(), Catch::Contains("too few to rank functions"));
  CHECK(TooFewSamples(m.p, kInuseSpace).starts_with("inuse_space: 5 samples; shares are ±"));

  Maker many;
  many.Add({{"a", "/w/worker.js"}}, 4000);
  many.Add({{"b", "/w/worker.js"}}, 4000);
  CHECK(TooFewSamples(many.p, kInuseSpace).empty());
  CHECK(CheckSampling(many.p, kInuseSpace).enough);
}
