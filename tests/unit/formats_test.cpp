// One entry point per direction: content-sniffing reads and format-named writes.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "heapprof/core/file_io.h"
#include "heapprof/core/formats.h"
#include "heapprof/core/gzip.h"
#include "heapprof/core/heapprofile.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "unit/test_dirs.h"
#include "unit/test_profiles.h"

using namespace heapprof;
using heapprof::testing::HandMadeSnapshot;

TEST_CASE("format names and file extensions") {
  for (ProfileFormat f : {ProfileFormat::kPprof, ProfileFormat::kHeapProfile, ProfileFormat::kFolded}) {
    Result<ProfileFormat> parsed = ParseProfileFormat(FormatName(f));
    REQUIRE(parsed.ok());
    CHECK(*parsed == f);
  }
  Result<ProfileFormat> bad = ParseProfileFormat("svg");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Matchers::Contains("unknown profile format \"svg\""));
  CHECK(FormatForPath("out/heap.pb.gz") == ProfileFormat::kPprof);
  CHECK(FormatForPath("Heap.20240101.heapprofile") == ProfileFormat::kHeapProfile);
  CHECK(FormatForPath("stacks.folded") == ProfileFormat::kFolded);
}

TEST_CASE("DecodeProfile recognises pprof and .heapprofile, gzipped or not") {
  Profile p = BuildProfile(HandMadeSnapshot());
  int64_t inuse = p.Total(kInuseSpace);
  Result<std::string> pprof_gz = EncodeProfile(p, ProfileFormat::kPprof);
  Result<std::string> pprof_raw = EncodePprof(p);
  Result<std::string> heap = EncodeProfile(p, ProfileFormat::kHeapProfile);
  REQUIRE(pprof_gz.ok());
  REQUIRE(pprof_raw.ok());
  REQUIRE(heap.ok());
  Result<std::string> heap_gz = GzipCompress("\n  " + *heap);
  REQUIRE(heap_gz.ok());
  for (const std::string* bytes : {&*pprof_gz, &*pprof_raw, &*heap, &*heap_gz}) {
    Result<Profile> back = DecodeProfile(*bytes);
    REQUIRE(back.ok());
    CHECK(back->Total(kInuseSpace) == inuse);
  }
  // Only pprof carries the alloc/in-use split.
  CHECK(DecodeProfile(*pprof_gz)->Total(kAllocSpace) == p.Total(kAllocSpace));
  CHECK(DecodeProfile(*heap)->Total(kAllocSpace) == inuse);

  CHECK_THAT(DecodeProfile("").status().message(), Catch::Matchers::Contains("input is empty"));
  CHECK_THAT(DecodeProfile("{\"head\": 3}").status().message(), Catch::Matchers::Contains("heapprofile:"));
  CHECK_THAT(DecodeProfile("\x01\x02garbage").status().message(), Catch::Matchers::Contains("not a pprof profile"));
}

TEST_CASE("WriteProfileFile and ReadProfileFile go through every format") {
  Profile p = BuildProfile(HandMadeSnapshot());
  std::string base = (heapprof::testing::BinaryDir() / "formats_test.").string() + std::to_string(::getpid());
  for (ProfileFormat f : {ProfileFormat::kPprof, ProfileFormat::kHeapProfile}) {
    std::string path = base + "." + std::string(FormatName(f));
    REQUIRE(WriteProfileFile(path, p, f, {"alloc_space", false}).ok());
    Result<Profile> back = ReadProfileFile(path);
    ::unlink(path.c_str());
    REQUIRE(back.ok());
    CHECK(back->Total(kAllocSpace) == p.Total(kAllocSpace));
  }
  std::string folded = base + ".folded";
  REQUIRE(WriteProfileFile(folded, p, ProfileFormat::kFolded, {"inuse_space", false}).ok());
  Result<std::string> text = ReadFileBytes(folded);
  ::unlink(folded.c_str());
  REQUIRE(text.ok());
  CHECK_THAT(*text, Catch::Matchers::StartsWith("main;handler;leak "));

  Result<Profile> missing = ReadProfileFile(base + ".absent");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::kNotFound);
}
