// The builder on hand-made, V8-shaped snapshots: no V8 needed.
#include <cmath>

#include <catch2/catch.hpp>

#include "heapprof/core/profile_builder.h"
#include "heapprof/core/stack_table.h"

using namespace heapprof;

namespace {

// root -> handler -> (leak | garbage); sizes and liveness chosen by the test.
RawSnapshot TwoFunctionSnapshot() {
  internal::StackTable table;
  FrameId handler = table.InternFrame({"handler", "worker.js", 1, 10, 3});
  FrameId leak = table.InternFrame({"leak", "worker.js", 1, 20, 3});
  FrameId garbage = table.InternFrame({"garbage", "worker.js", 1, 30, 3});
  StackId h = table.InternStack(StackId{0}, handler);
  StackId hl = table.InternStack(h, leak);
  StackId hg = table.InternStack(h, garbage);
  RawSnapshot snap;
  snap.info.interval_bytes = 1024;
  uint64_t id = 1;
  for (int i = 0; i < 10; ++i) snap.samples.push_back({id++, hl, 64, true});
  for (int i = 0; i < 30; ++i) snap.samples.push_back({id++, hg, 64, false});
  snap.samples.push_back({id++, hg, 4096, false});
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  return snap;
}

}  // namespace

TEST_CASE("samples are scaled with V8's formula") {
  CHECK(SampleScale(64, 1024) == Approx(1.0 / (1.0 - std::exp(-64.0 / 1024))));
  // Objects much larger than the interval are always sampled: scale ~ 1.
  CHECK(SampleScale(1 << 24, 1024) == Approx(1.0));
}

TEST_CASE("builder lays out the heap profile contract") {
  Profile p = BuildProfile(TwoFunctionSnapshot());
  REQUIRE(p.sample_types.size() == 4);
  CHECK(p.str(p.sample_types[0].type) == "alloc_objects");
  CHECK(p.str(p.sample_types[0].unit) == "count");
  CHECK(p.str(p.sample_types[1].type) == "alloc_space");
  CHECK(p.str(p.sample_types[1].unit) == "bytes");
  CHECK(p.str(p.sample_types[2].type) == "inuse_objects");
  CHECK(p.str(p.sample_types[3].type) == "inuse_space");
  CHECK(p.str(p.default_sample_type) == "inuse_space");
  CHECK(p.str(p.period_type.type) == "space");
  CHECK(p.period == 1024);
  CHECK(p.strings[0].empty());
  CHECK(!p.CommentValue("heapprof").empty());
}

TEST_CASE("builder merges samples by stack and size") {
  Profile p = BuildProfile(TwoFunctionSnapshot());
  // (leak, 64), (garbage, 64), (garbage, 4096)
  REQUIRE(p.samples.size() == 3);
  double s64 = SampleScale(64, 1024);
  double s4k = SampleScale(4096, 1024);
  CHECK(p.Total(kAllocObjects) == std::llround(10 * s64) + std::llround(30 * s64) + std::llround(s4k));
  CHECK(p.Total(kInuseSpace) == std::llround(10 * s64 * 64));
  CHECK(p.Total(kInuseObjects) == std::llround(10 * s64));
  for (const Sample& s : p.samples) {
    REQUIRE(s.values.size() == 4);
    CHECK(s.values[kInuseSpace] <= s.values[kAllocSpace]);
    int64_t size = p.NumLabel(s, "bytes");
    CHECK((size == 64 || size == 4096));
  }
}

TEST_CASE("stacks are leaf first and the root is dropped") {
  Profile p = BuildProfile(TwoFunctionSnapshot());
  for (const Sample& s : p.samples) {
    REQUIRE(s.locations.size() == 2);
    CHECK(p.FunctionName(s.locations.back()) == "handler");
    std::string_view leaf = p.FunctionName(s.locations.front());
    CHECK((leaf == "leak" || leaf == "garbage"));
  }
  // Functions and locations are deduplicated with dense ids from 1.
  CHECK(p.functions.size() == 3);
  CHECK(p.locations.size() == 3);
  for (size_t i = 0; i < p.functions.size(); ++i) CHECK(static_cast<size_t>(p.functions[i].id) == i + 1);
  for (size_t i = 0; i < p.locations.size(); ++i) CHECK(static_cast<size_t>(p.locations[i].id) == i + 1);
}

TEST_CASE("anonymous functions stay distinguishable, and VM-state frames have no file") {
  internal::StackTable table;
  FrameId a = table.InternFrame({"", "/srv/app/worker.js", 1, 5, 10});
  FrameId b = table.InternFrame({"", "/srv/app/worker.js", 1, 9, 2});
  FrameId gc = table.InternFrame({"(GC)", "", 0, 0, 0});
  RawSnapshot snap;
  snap.samples.push_back({1, table.InternStack(StackId{0}, a), 100, true});
  snap.samples.push_back({2, table.InternStack(StackId{0}, b), 100, true});
  snap.samples.push_back({3, table.InternStack(StackId{0}, gc), 100, false});
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  Profile p = BuildProfile(snap);
  std::vector<std::string> names;
  for (const Function& f : p.functions) names.emplace_back(p.str(f.name));
  CHECK_THAT(names, Catch::Matchers::UnorderedEquals(
                        std::vector<std::string>{"(anonymous worker.js:5:10)", "(anonymous worker.js:9:2)", "(GC)"}));
  for (const Function& f : p.functions) {
    if (p.str(f.name) == "(GC)") CHECK(p.str(f.filename).empty());
  }
}

TEST_CASE("stack table interns frames and stacks") {
  internal::StackTable t;
  FrameId f1 = t.InternFrame({"f", "a.js", 1, 1, 1});
  FrameId f1again = t.InternFrame({"f", "a.js", 1, 1, 1});
  FrameId f2 = t.InternFrame({"f", "a.js", 1, 2, 1});
  CHECK(f1 == f1again);
  CHECK(f1 != f2);
  StackId s1 = t.InternStack(StackId{0}, f1);
  CHECK(t.InternStack(StackId{0}, f1) == s1);
  CHECK(t.InternStack(s1, f2) != t.InternStack(StackId{0}, f2));
  CHECK(t.stacks().size() == 4);
}
