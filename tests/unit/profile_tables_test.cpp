// The interning every Profile producer shares (heapprof/core/profile_tables.h).
#include <catch2/catch.hpp>

#include "heapprof/core/profile_tables.h"

using namespace heapprof;
using namespace heapprof::internal;

TEST_CASE("profile tables: the interner reuses the strings a profile already holds", "[profile_tables]") {
  Profile p;
  p.strings = {"", "kept", "also kept"};
  StringInterner intern(p);
  CHECK(intern("") == StringId{0});
  CHECK(intern("kept") == StringId{1});
  CHECK(intern("also kept") == StringId{2});
  StringId added = intern("new");
  CHECK(added == StringId{3});
  CHECK(intern(std::string("new")) == added);
  CHECK(p.strings.size() == 4);
  CHECK(p.strings[3] == "new");
}

TEST_CASE("profile tables: one function per (name, file, start line), one location per frame", "[profile_tables]") {
  Profile p;
  StringInterner intern(p);
  LocationTable locations(p, intern);
  Frame handler{"handler", "w.js", 1, 10, 3};
  Frame same_function_other_column{"handler", "w.js", 1, 10, 7};
  Frame anonymous_a{"", "dist/w.js", 1, 20, 5};
  Frame anonymous_b{"", "dist/w.js", 1, 30, 5};

  LocationId first = locations.Of(handler);
  CHECK(first == LocationId{1});
  CHECK(locations.Of(handler) == first);
  LocationId second = locations.Of(same_function_other_column);
  CHECK(second == LocationId{2});
  REQUIRE(p.functions.size() == 1);  // the column splits locations, not functions
  CHECK(p.locations[1].lines[0].function == p.functions[0].id);
  CHECK(p.str(p.functions[0].name) == "handler");
  CHECK(p.str(p.functions[0].filename) == "w.js");
  CHECK(p.functions[0].start_line == 10);

  // Anonymous functions stay apart, named by FrameDisplayName.
  LocationId a = locations.Of(anonymous_a);
  LocationId b = locations.Of(anonymous_b);
  CHECK(a != b);
  REQUIRE(p.functions.size() == 3);
  CHECK(p.str(p.functions[1].name) == "(anonymous w.js:20:5)");
  CHECK(p.str(p.functions[2].name) == "(anonymous w.js:30:5)");
  CHECK(p.functions[2].id == FunctionId{3});
}
