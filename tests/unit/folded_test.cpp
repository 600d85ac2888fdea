// Folded stacks: root first, one line per stack, values summed per stack.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <sstream>

#include "heapprof/core/folded.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/core/stack_table.h"
#include "unit/test_profiles.h"

using namespace heapprof;
using heapprof::testing::HandMadeSnapshot;

namespace {

// Parses "a;b;c 123" lines the way flamegraph tools do: the value follows the last space.
std::map<std::string, int64_t> ParseFolded(const std::string& text) {
  std::map<std::string, int64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t space = line.rfind(' ');
    REQUIRE(space != std::string::npos);
    auto [it, inserted] = out.emplace(line.substr(0, space), std::stoll(line.substr(space + 1)));
    CHECK(inserted);  // each stack appears once
  }
  return out;
}

int64_t Space(int n, uint64_t size) { return std::llround(n * SampleScale(size, 4096) * static_cast<double>(size)); }

}  // namespace

TEST_CASE("folded stacks are root first with summed values per stack") {
  Profile p = BuildProfile(HandMadeSnapshot());
  Result<std::string> text = EncodeFolded(p, {"inuse_space", false});
  REQUIRE(text.ok());
  std::map<std::string, int64_t> lines = ParseFolded(*text);
  // In use: 25 leak objects and 10 of the 40 anonymous ones; parse's big objects and (GC) died.
  CHECK(lines == std::map<std::string, int64_t>{{"main;handler;leak", Space(25, 128)},
                                                {"main;handler;parse;(anonymous worker.js:44:9)", Space(10, 64)}});
}

TEST_CASE("folded output covers every sample type and sums to the profile total") {
  Profile p = BuildProfile(HandMadeSnapshot());
  for (const char* type : {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"}) {
    INFO(type);
    Result<std::string> text = EncodeFolded(p, {type, false});
    REQUIRE(text.ok());
    int64_t sum = 0;
    for (const auto& [stack, value] : ParseFolded(*text)) sum += value;
    CHECK(sum == p.Total(p.FindSampleType(type)));
  }
  Result<std::string> alloc = EncodeFolded(p, {"alloc_space", false});
  REQUIRE(alloc.ok());
  std::map<std::string, int64_t> lines = ParseFolded(*alloc);
  CHECK(lines.at("(GC)") == Space(1, 32));
  CHECK(lines.at("main;handler;parse") == Space(3, 100000));
  CHECK(lines.at("main;handler;parse;(anonymous worker.js:44:9)") == Space(40, 64));
}

TEST_CASE("folded output defaults to the profile's default sample type") {
  Profile p = BuildProfile(HandMadeSnapshot());
  Result<std::string> by_default = EncodeFolded(p);
  Result<std::string> inuse = EncodeFolded(p, {"inuse_space", false});
  REQUIRE(by_default.ok());
  REQUIRE(inuse.ok());
  CHECK(*by_default == *inuse);
  Result<std::string> bad = EncodeFolded(p, {"cpu", false});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Matchers::Contains("cpu"));
}

TEST_CASE("folded output keeps lines parseable and can name files") {
  internal::StackTable t;
  FrameId odd = t.InternFrame({"weird;name\nwith breaks", "/srv/a.js", 1, 7, 1});
  FrameId caller = t.InternFrame({"caller", "/srv/b.js", 2, 3, 1});
  RawSnapshot snap;
  snap.info.interval_bytes = 4096;
  StackId s = t.InternStack(t.InternStack(StackId{0}, caller), odd);
  snap.samples.push_back({1, s, 100, true});
  snap.samples.push_back({2, s, 200, true});  // same stack, other size: one folded line
  snap.frames = t.TakeFrames();
  snap.stacks = t.TakeStacks();
  Profile p = BuildProfile(snap);

  Result<std::string> plain = EncodeFolded(p, {"inuse_space", false});
  REQUIRE(plain.ok());
  CHECK(ParseFolded(*plain) == std::map<std::string, int64_t>{{"caller;weird,name with breaks", p.Total(kInuseSpace)}});

  Result<std::string> named = EncodeFolded(p, {"inuse_space", true});
  REQUIRE(named.ok());
  CHECK(ParseFolded(*named) ==
        std::map<std::string, int64_t>{
            {"caller (/srv/b.js:3);weird,name with breaks (/srv/a.js:7)", p.Total(kInuseSpace)}});
}

TEST_CASE("folded output of an empty profile is empty") {
  Profile p = BuildProfile(RawSnapshot{});
  Result<std::string> text = EncodeFolded(p);
  REQUIRE(text.ok());
  CHECK(text->empty());
}
