// gzip writing: every level of both compressors gives standard gzip that
// zlib's reader (the one every pprof reader uses) restores byte for byte.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "unit/test_profiles.h"

using namespace heapprof;

namespace {

std::vector<std::string> Inputs() {
  std::mt19937_64 rng(7);
  std::string noise(300'000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  std::string text;
  while (text.size() < 1'000'000) text += "function_" + std::to_string(rng() % 1000) + " file:///srv/app.js\n";
  return {"", "x", noise, text, EncodePprof(BuildProfile(testing::HandMadeSnapshot())).value()};
}

}  // namespace

TEST_CASE("gzip: libdeflate and zlib output at every level reads back through zlib") {
  std::vector<std::string> inputs = Inputs();
  for (auto [library, max_level] : {std::pair{GzipLibrary::kLibdeflate, 12}, std::pair{GzipLibrary::kZlib, 9}}) {
    for (int level = 0; level <= max_level; ++level) {
      for (const std::string& in : inputs) {
        INFO("library " << (library == GzipLibrary::kZlib ? "zlib" : "libdeflate") << ", level " << level
                        << ", input of " << in.size() << " bytes");
        Result<std::string> gz = GzipCompress(in, level, library);
        REQUIRE(gz.ok());
        CHECK(IsGzip(*gz));
        Result<std::string> back = GzipDecompress(*gz);
        REQUIRE(back.ok());
        CHECK(*back == in);
      }
    }
  }
}

TEST_CASE("gzip: pprof files are written by libdeflate at kPprofGzipLevel") {
  std::string raw = EncodePprof(BuildProfile(testing::HandMadeSnapshot())).value();
  Result<std::string> file = EncodePprofGzip(BuildProfile(testing::HandMadeSnapshot()));
  REQUIRE(file.ok());
  CHECK(*file == GzipCompress(raw, kPprofGzipLevel, GzipLibrary::kLibdeflate).value());
  CHECK(GzipDecompress(*file).value() == raw);
}

TEST_CASE("gzip: a level out of the compressor's range is an error naming the range") {
  CHECK_THAT(GzipCompress("x", -1).status().message(), Catch::Contains("0..12"));
  CHECK_THAT(GzipCompress("x", 13).status().message(), Catch::Contains("0..12"));
  CHECK_THAT(GzipCompress("x", 10, GzipLibrary::kZlib).status().message(), Catch::Contains("0..9"));
  CHECK_FALSE(EncodePprofGzip(BuildProfile(testing::HandMadeSnapshot()), 13).ok());
}
