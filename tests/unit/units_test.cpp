// Sizes and durations as users type them on the command line.
#include <catch2/catch.hpp>

#include "heapprof/core/units.h"

using heapprof::ParseDuration;
using heapprof::ParseSize;

TEST_CASE("sizes accept plain bytes and binary suffixes") {
  CHECK(ParseSize("0").value() == 0);
  CHECK(ParseSize("4096").value() == 4096);
  CHECK(ParseSize("12B").value() == 12);
  CHECK(ParseSize("512KiB").value() == 512u * 1024);
  CHECK(ParseSize("64k").value() == 64u * 1024);
  CHECK(ParseSize("64KB").value() == 64u * 1024);
  CHECK(ParseSize("1MiB").value() == 1024u * 1024);
  CHECK(ParseSize("1m").value() == 1024u * 1024);
  CHECK(ParseSize("1.5MiB").value() == 1536u * 1024);
  CHECK(ParseSize("2GiB").value() == 2ull * 1024 * 1024 * 1024);
  CHECK(ParseSize(" 128 MiB ").value() == 128u * 1024 * 1024);
  // Every unit heapprof top prints is taken back.
  CHECK(ParseSize("1.5 TiB").value() == 3ull << 39);
  CHECK(ParseSize("2t").value() == 2ull << 40);
  CHECK(ParseSize("3PB").value() == 3ull << 50);
  CHECK(ParseSize("15 EiB").value() == 15ull << 60);
}

TEST_CASE("sizes reject negatives, junk, unknown units and overflow") {
  for (const char* bad : {"", "-1", "-4KiB", "abc", "12x", "KiB", "1.2.3", "12 KiB extra", "1e3",
                          "99999999999999999999", "20000000000GiB"}) {
    INFO(bad);
    auto r = ParseSize(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == heapprof::ErrorCode::kInvalidArgument);
    CHECK_FALSE(r.status().message().empty());
  }
  CHECK_THAT(ParseSize("12QB").status().message(), Catch::Contains("unit"));
  CHECK_THAT(ParseSize("16EiB").status().message(), Catch::Contains("too large"));
}

TEST_CASE("durations accept units, fractions, compounds and plain seconds") {
  CHECK(ParseDuration("10").value() == 10'000'000'000);
  CHECK(ParseDuration("10s").value() == 10'000'000'000);
  CHECK(ParseDuration("250ms").value() == 250'000'000);
  CHECK(ParseDuration("1.5s").value() == 1'500'000'000);
  CHECK(ParseDuration("3us").value() == 3'000);
  CHECK(ParseDuration("7ns").value() == 7);
  CHECK(ParseDuration("2m").value() == 120'000'000'000);
  CHECK(ParseDuration("1h").value() == 3'600'000'000'000);
  CHECK(ParseDuration("1m30s").value() == 90'000'000'000);
  CHECK(ParseDuration("0").value() == 0);
}

TEST_CASE("durations reject negatives, junk and unknown units") {
  for (const char* bad : {"", "-1s", "s", "10x", "10 days", "1.5.2s", "1s2", "abc", "1e400s"}) {
    INFO(bad);
    auto r = ParseDuration(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == heapprof::ErrorCode::kInvalidArgument);
  }
  CHECK_THAT(ParseDuration("3d").status().message(), Catch::Contains("unit"));
  CHECK_FALSE(ParseDuration("9999999999h").ok());
}
