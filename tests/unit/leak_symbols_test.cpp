// A leak report's sites through the symbolizer (SymbolizeLeakReport): a
// bundled frame comes back as its original function, source and line, the
// way the profile tables name it; a frame without a map stays as V8 named it.
#include <catch2/catch.hpp>

#include <string>

#include "heapprof/core/leaks.h"
#include "heapprof/core/source_map.h"

using namespace heapprof;

namespace {

// bundle.js line 2: the name token at column 1 is recordRequest (src/metrics.ts
// line 2), the function's start at column 5 maps to line 2, column 11.
class BundleMap final : public SourceMapProvider {
 public:
  BundleMap()
      : map_(SourceMap::Parse(
                 R"({"version":3,"sources":["src/metrics.ts"],"names":["recordRequest"],"mappings":"AAAA;AACAA,IAAU"})")
                 .value()) {}
  Result<const SourceMap*> MapFor(std::string_view script) override {
    if (script == "file:///w/bundle.js") return &map_;
    return static_cast<const SourceMap*>(nullptr);
  }

 private:
  SourceMap map_;
};

}  // namespace

TEST_CASE("a leak report's growing site is named by its original function, file and line") {
  LeakReport report;
  LeakSite growing;
  growing.verdict = LeakVerdict::kGrowing;
  growing.frames = {{"e", "file:///w/bundle.js", 1, 2, 5}, {"handler", "file:///w/plain.js", 2, 7, 3}};
  LeakSite vm;
  vm.frames = {{"(GC)", "", 0, 0, 0}};
  report.sites = {growing, vm};

  BundleMap maps;
  SymbolizeResult r = SymbolizeLeakReport(report, maps);
  CHECK(r.mapped == 1);
  CHECK(r.without_map == 1);
  const Frame& leaf = report.sites[0].frames[0];
  CHECK(leaf.function_name == "recordRequest");
  CHECK(leaf.script_name == "src/metrics.ts");
  CHECK(leaf.line == 2);
  CHECK(leaf.column == 11);
  // Without a map, and a VM-state frame: as they were.
  CHECK(report.sites[0].frames[1] == Frame{"handler", "file:///w/plain.js", 2, 7, 3});
  CHECK(report.sites[1].frames[0] == Frame{"(GC)", "", 0, 0, 0});
  CHECK_THAT(FormatLeakReport(report), Catch::Contains("recordRequest (metrics.ts:2) < handler (plain.js:7)"));
  CHECK_THAT(LeakReportJson(report), Catch::Contains(R"("function":"recordRequest")"));
}
