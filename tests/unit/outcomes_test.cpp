// Request outcomes: counting, distinct errors, stacks mapped through a real
// source map, and the failure verdict.
#include <catch2/catch.hpp>

#include <string>

#include "heapprof/core/source_map.h"
#include "heapprof/workload/outcomes.h"

using namespace heapprof;

namespace {

// Maps bundle.js line 2, column 5 (1-based) to src/app.ts line 2, column 11.
class OneMap final : public SourceMapProvider {
 public:
  OneMap()
      : map_(SourceMap::Parse(R"({"version":3,"sources":["src/app.ts"],"names":[],"mappings":"AAAA;IACU"})").value()) {}
  Result<const SourceMap*> MapFor(std::string_view script) override {
    if (script == "/w/bundle.js") return &map_;
    return static_cast<const SourceMap*>(nullptr);
  }

 private:
  SourceMap map_;
};

}  // namespace

TEST_CASE("outcomes count statuses and failures by kind") {
  RequestOutcomes o;
  for (int i = 0; i < 6; ++i) o.AddResponse(200);
  o.AddResponse(404);
  o.AddResponse(503);
  o.AddFailure(RequestFailure::kThrown, "TypeError: x is undefined\n    at f (/w/bundle.js:2:5)");
  o.AddFailure(RequestFailure::kThrown, "TypeError: x is undefined\n    at f (/w/bundle.js:2:5)");
  o.AddFailure(RequestFailure::kRejected, "Error: session expired");
  o.AddFailure(RequestFailure::kTimedOut, "ran longer than the time limit of 1 s and was terminated");
  o.AddConsoleError();
  CHECK(o.requests() == 12);
  CHECK(o.responses() == 8);
  CHECK(o.server_errors() == 1);
  CHECK(o.failed() == 5);
  CHECK(o.distinct_errors() == 3);
  REQUIRE(o.errors().size() == 3);
  CHECK(o.errors()[0].count == 2);
  CHECK(o.errors()[0].first_request == 9);
  CHECK(o.errors()[0].message == "TypeError: x is undefined");

  OneMap maps;
  std::string report = FormatOutcomes(o, &maps);
  CHECK_THAT(report,
             Catch::StartsWith("Requests: 12; responses by status: 200 x6, 404 x1, 503 x1; failed: 5 requests (42 %)"));
  CHECK_THAT(report, Catch::Contains("2 threw, 1 rejected, 1 timed out, 1 answered 5xx; console.error calls: 1"));
  CHECK_THAT(report, Catch::Contains("threw x2 (first at request #9): TypeError: x is undefined\n"
                                     "        at f (src/app.ts:2:11)\n"));
  CHECK_THAT(report, Catch::Contains("rejected x1 (first at request #11): Error: session expired"));
}

TEST_CASE("stack lines without a map, or outside it, stay as they are") {
  OneMap maps;
  CHECK(SymbolizeStack("    at /w/bundle.js:2:5\n    at g (/w/other.js:1:1)\n    at <anonymous>", maps) ==
        "    at src/app.ts:2:11\n    at g (/w/other.js:1:1)\n    at <anonymous>");
  CHECK(SymbolizeStack("    at h (/w/bundle.js:99:1)", maps) == "    at h (/w/bundle.js:99:1)");
}

TEST_CASE("only the first distinct errors are kept, the rest are counted") {
  RequestOutcomes o;
  for (int i = 0; i < 12; ++i) o.AddFailure(RequestFailure::kThrown, "Error: case " + std::to_string(i));
  o.AddFailure(RequestFailure::kThrown, "Error: case 11");
  CHECK(o.errors().size() == RequestOutcomes::kMaxDistinct);
  CHECK(o.distinct_errors() == 12);
  CHECK_THAT(FormatOutcomes(o, nullptr), Catch::Contains("The first 5 of 12 distinct errors:"));
}

TEST_CASE("the verdict fails a run above the failure share and says why") {
  RequestOutcomes o;
  for (int i = 0; i < 4; ++i) o.AddResponse(200);
  for (int i = 0; i < 6; ++i) o.AddResponse(500);
  CHECK_FALSE(JudgeFailures(o, 0.6).too_many);
  FailureVerdict v = JudgeFailures(o, 0.5);
  CHECK(v.too_many);
  CHECK(v.message == "60 % of 10 requests failed (6 answered 5xx), above the limit of 50 % (--max-failures)");
  RequestOutcomes rejected;
  rejected.AddResponse(200);
  rejected.AddFailure(RequestFailure::kRejected, "Error: boom\n    at x (a.js:1:1)");
  CHECK_FALSE(JudgeFailures(rejected, 0.5).too_many);
  CHECK(JudgeFailures(rejected, 0.4).message ==
        "50 % of 2 requests failed (1 rejected), above the limit of 40 % (--max-failures); first error: Error: boom");
  CHECK_FALSE(JudgeFailures(RequestOutcomes(), 0.0).too_many);
}
