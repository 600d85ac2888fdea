// Profile queries on hand-made snapshots: pattern totals count each sample
// once, top stacks are ordered, retained bytes follow liveness.
#include <cmath>

#include <catch2/catch.hpp>

#include "heapprof/core/profile_builder.h"
#include "heapprof/core/query.h"
#include "heapprof/core/stack_table.h"

using namespace heapprof;

namespace {

// handler -> leak (live), handler -> garbage (dead), and a recursive
// walk -> walk -> leak stack (live) in another script.
RawSnapshot QuerySnapshot() {
  internal::StackTable table;
  FrameId handler = table.InternFrame({"handler", "app/worker.js", 1, 10, 3});
  FrameId leak = table.InternFrame({"leak", "app/worker.js", 1, 20, 3});
  FrameId garbage = table.InternFrame({"garbage", "app/worker.js", 1, 30, 3});
  FrameId walk = table.InternFrame({"walk", "lib/tree.js", 2, 5, 1});
  StackId h = table.InternStack(StackId{0}, handler);
  StackId hl = table.InternStack(h, leak);
  StackId hg = table.InternStack(h, garbage);
  StackId w = table.InternStack(StackId{0}, walk);
  StackId ww = table.InternStack(w, walk);
  StackId wwl = table.InternStack(ww, leak);
  RawSnapshot snap;
  snap.info.interval_bytes = 1;  // scale ~1: values equal the raw sizes
  uint64_t id = 1;
  for (int i = 0; i < 10; ++i) snap.samples.push_back({id++, hl, 1000, true});
  for (int i = 0; i < 30; ++i) snap.samples.push_back({id++, hg, 1000, false});
  for (int i = 0; i < 5; ++i) snap.samples.push_back({id++, wwl, 2000, true});
  snap.samples.push_back({id++, h, 500, true});  // allocated in handler itself
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  return snap;
}

const Profile& QueryProfile() {
  static const Profile p = BuildProfile(QuerySnapshot());
  return p;
}

MatchTotals Totals(const FrameFilter& filter, int index) {
  auto r = TotalForFrames(QueryProfile(), filter, index);
  REQUIRE(r.ok());
  return r.value();
}

}  // namespace

TEST_CASE("query: total of a sample type by name") {
  const Profile& p = QueryProfile();
  auto inuse = TotalOf(p, "inuse_space");
  REQUIRE(inuse.ok());
  CHECK(inuse.value() == 10 * 1000 + 5 * 2000 + 500);
  auto alloc = TotalOf(p, "alloc_space");
  REQUIRE(alloc.ok());
  CHECK(alloc.value() == 40 * 1000 + 5 * 2000 + 500);
  auto bad = TotalOf(p, "cpu");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("cpu") != std::string::npos);
}

TEST_CASE("query: flat and cumulative totals by function regex") {
  MatchTotals leak = Totals({"^leak$", "", PatternSyntax::kRegex}, kInuseSpace);
  CHECK(leak.flat == 10 * 1000 + 5 * 2000);
  CHECK(leak.cum == leak.flat);
  MatchTotals handler = Totals({"handler", "", PatternSyntax::kRegex}, kAllocSpace);
  CHECK(handler.flat == 500);
  CHECK(handler.cum == 40 * 1000 + 500);
  // A regex is searched anywhere in the name: "a" hits handler, leak, garbage and walk.
  CHECK(Totals({"a", "", PatternSyntax::kRegex}, kAllocSpace).cum == 40 * 1000 + 5 * 2000 + 500);
}

TEST_CASE("query: a recursive function counts each sample once") {
  MatchTotals walk = Totals({"^walk$", "", PatternSyntax::kRegex}, kInuseSpace);
  CHECK(walk.cum == 5 * 2000);
  CHECK(walk.flat == 0);
  CHECK(walk.samples == 1);  // the five merge into one (stack, size) sample
}

TEST_CASE("query: script patterns, globs and both together") {
  CHECK(Totals({"", "tree\\.js$", PatternSyntax::kRegex}, kInuseSpace).cum == 5 * 2000);
  CHECK(Totals({"", "app/*.js", PatternSyntax::kGlob}, kInuseSpace).cum == 10 * 1000 + 5 * 2000 + 500);
  // Globs match the whole name.
  CHECK(Totals({"lea", "", PatternSyntax::kGlob}, kInuseSpace).cum == 0);
  CHECK(Totals({"le?k", "", PatternSyntax::kGlob}, kInuseSpace).cum == 10 * 1000 + 5 * 2000);
  // leak exists only in worker.js, so leak-in-tree.js matches nothing.
  CHECK(Totals({"leak", "tree", PatternSyntax::kRegex}, kInuseSpace).cum == 0);
  CHECK(Totals({"leak", "worker", PatternSyntax::kRegex}, kInuseSpace).cum == 10 * 1000 + 5 * 2000);
}

TEST_CASE("query: a malformed regex is an error value") {
  auto r = TotalForFrames(QueryProfile(), FrameFilter{"leak(", "", PatternSyntax::kRegex}, kInuseSpace);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  CHECK(r.status().message().find("leak(") != std::string::npos);
  CHECK_FALSE(RetainedBy(QueryProfile(), {"[", "", PatternSyntax::kRegex}).ok());
}

TEST_CASE("query: retained by counts in-use bytes through a function") {
  auto handler = RetainedBy(QueryProfile(), {"^handler$", "", PatternSyntax::kRegex});
  REQUIRE(handler.ok());
  CHECK(handler.value() == 10 * 1000 + 500);  // garbage's bytes were freed
  auto garbage = RetainedBy(QueryProfile(), {"garbage", "", PatternSyntax::kRegex});
  REQUIRE(garbage.ok());
  CHECK(garbage.value() == 0);
}

TEST_CASE("query: top stacks are heaviest first and can be focused") {
  const Profile& p = QueryProfile();
  auto top = TopStacks(p, kAllocSpace, 10);
  REQUIRE(top.size() == 4);
  CHECK(top[0].value == 30 * 1000);
  CHECK(p.FunctionName(top[0].locations.front()) == "garbage");
  CHECK(top[1].value == 10 * 1000);
  CHECK(top[2].value == 10 * 1000);
  CHECK(top[3].value == 500);
  CHECK(TopStacks(p, kAllocSpace, 2).size() == 2);
  // In-use: garbage is gone.
  for (const StackTotal& s : TopStacks(p, kInuseSpace, 10)) CHECK(p.FunctionName(s.locations.front()) != "garbage");

  auto walk = FrameMatcher::Compile({"walk", "", PatternSyntax::kRegex});
  REQUIRE(walk.ok());
  auto focused = TopStacks(p, kInuseSpace, 10, &walk.value());
  REQUIRE(focused.size() == 1);
  CHECK(focused[0].locations.size() == 3);

  std::string text = FormatStacks(p, focused, "bytes");
  CHECK(text == "  9.8 KiB  leak (worker.js:20) <- walk (tree.js:5) <- walk (tree.js:5)\n");
  CHECK(FormatStacks(p, focused, "bytes", 1) == "  9.8 KiB  leak (worker.js:20) <- ... (2 more)\n");
  CHECK(walk->Describe() == "functions matching /walk/");
}
