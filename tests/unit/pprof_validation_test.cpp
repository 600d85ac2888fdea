// A corpus of malformed pprof inputs, each breaking one invariant: every one
// must be rejected with its own message naming the problem, never a crash.
#include <catch2/catch.hpp>
#include <functional>
#include <random>
#include <set>

#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/proto/profile.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/wire_format_lite.h>

using namespace heapprof;
namespace pb = perftools::profiles;

namespace {

// A small valid heap profile written with the generated classes:
// strings: 0 "", 1..4 sample types, 5 count, 6 bytes, 7 space, 8 main, 9 leak, 10 a.js
pb::Profile ValidMessage() {
  pb::Profile m;
  for (const char* s : {"", "alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "count", "bytes", "space",
                        "main", "leak", "a.js"}) {
    m.add_string_table(s);
  }
  for (int t = 1; t <= 4; ++t) {
    pb::ValueType* vt = m.add_sample_type();
    vt->set_type(t);
    vt->set_unit(t % 2 == 1 ? 5 : 6);
  }
  m.mutable_period_type()->set_type(7);
  m.mutable_period_type()->set_unit(6);
  m.set_period(524288);
  m.set_default_sample_type(4);
  m.add_mapping()->set_id(1);
  for (int f = 1; f <= 2; ++f) {
    pb::Function* fn = m.add_function();
    fn->set_id(f);
    fn->set_name(7 + f);
    fn->set_filename(10);
    fn->set_start_line(f * 10);
    pb::Location* loc = m.add_location();
    loc->set_id(f);
    loc->set_mapping_id(1);
    pb::Line* line = loc->add_line();
    line->set_function_id(f);
    line->set_line(f * 10);
  }
  pb::Sample* s = m.add_sample();
  s->add_location_id(2);  // leak
  s->add_location_id(1);  // main
  for (int v : {3, 300, 1, 100}) s->add_value(v);
  pb::Label* label = s->add_label();
  label->set_key(6);
  label->set_num(100);
  label->set_num_unit(6);
  m.add_comment(8);
  return m;
}

std::string Mutated(const std::function<void(pb::Profile&)>& mutate) {
  pb::Profile m = ValidMessage();
  mutate(m);
  return m.SerializeAsString();
}

std::string Gzip(std::string_view bytes) {
  Result<std::string> z = GzipCompress(bytes);
  REQUIRE(z.ok());
  return *z;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

// protobuf logs every non-UTF-8 string it meets to stderr; the corpus has many.
class QuietProtobuf {
 public:
  QuietProtobuf() : previous_(google::protobuf::SetLogHandler(nullptr)) {}
  ~QuietProtobuf() { google::protobuf::SetLogHandler(previous_); }
  QuietProtobuf(const QuietProtobuf&) = delete;
  QuietProtobuf& operator=(const QuietProtobuf&) = delete;

 private:
  google::protobuf::LogHandler* previous_;
};

struct Case {
  const char* name;
  std::string bytes;
  const char* expected;  // a substring of the error message
};

std::vector<Case> Corpus() {
  std::string valid = ValidMessage().SerializeAsString();
  std::string valid_gz = Gzip(valid);
  std::string bad_crc = valid_gz;
  bad_crc[bad_crc.size() - 5] ^= 0x55;  // the CRC-32 sits in the trailer's first 4 bytes
  std::string random = RandomBytes(512, 12345);
  std::string truncated_raw = valid.substr(0, valid.find("leak") + 2);  // inside a string

  std::vector<Case> c;
  c.push_back({"empty input", "", "input is empty (0 bytes)"});
  c.push_back(
      {"random bytes", random, "not a pprof profile: byte 0 starts field 61020, which profile.proto does not have"});
  c.push_back({"truncated raw protobuf", truncated_raw, "profile is truncated: field 6 (string_table)"});
  c.push_back({"JSON instead of pprof", R"({"head":{},"samples":[]})", "the input looks like JSON"});
  c.push_back({"string that is not UTF-8",
               Mutated([](pb::Profile& m) { m.set_string_table(9, std::string("le\xff", 3) + "ak"); }),
               "string_table[9] is not valid UTF-8"});
  // A fourth location whose body is not protobuf (field 1 with the invalid wire type 7).
  c.push_back({"malformed nested message", valid + std::string("\x22\x02\x0f\x0f", 4), "location[2] at byte"});
  c.push_back({"truncated gzip", valid_gz.substr(0, valid_gz.size() / 2), "gzip data is truncated"});
  c.push_back({"gzip with a bad CRC", bad_crc, "gzip data is corrupt: incorrect data check"});
  c.push_back({"gzip with a broken header", std::string("\x1f\x8b\x09", 3) + valid_gz.substr(3),
               "gzip data is corrupt: unknown compression method"});
  c.push_back({"gzip of random bytes", Gzip(random), "gzip data does not hold a pprof profile: "});
  c.push_back({"gzip of nothing", Gzip(""), "gzip data decompresses to 0 bytes"});
  c.push_back({"garbage after gzip", valid_gz + "garbage", "7 bytes of trailing garbage after the gzip data"});
  c.push_back({"no string table", Mutated([](pb::Profile& m) { m.clear_string_table(); }), "string_table is empty"});
  c.push_back({"string 0 not empty", Mutated([](pb::Profile& m) { m.set_string_table(0, "oops"); }),
               "string_table[0] must be the empty string, found \"oops\""});
  c.push_back({"sample type index out of range",
               Mutated([](pb::Profile& m) { m.mutable_sample_type(1)->set_unit(11); }),
               "sample_type[1].unit is string index 11, out of range (string_table has 11 entries)"});
  c.push_back({"negative comment index", Mutated([](pb::Profile& m) { m.set_comment(0, -1); }),
               "comment[0] is string index -1, out of range"});
  c.push_back({"default sample type out of range", Mutated([](pb::Profile& m) { m.set_default_sample_type(99); }),
               "default_sample_type is string index 99"});
  c.push_back({"period type out of range", Mutated([](pb::Profile& m) { m.mutable_period_type()->set_type(50); }),
               "period_type.type is string index 50"});
  c.push_back({"function name out of range", Mutated([](pb::Profile& m) { m.mutable_function(1)->set_name(12); }),
               "function[1] (id 2).name is string index 12"});
  c.push_back({"label key out of range",
               Mutated([](pb::Profile& m) { m.mutable_sample(0)->mutable_label(0)->set_key(1000); }),
               "sample[0] label[0].key is string index 1000"});
  c.push_back({"mapping filename out of range", Mutated([](pb::Profile& m) { m.mutable_mapping(0)->set_filename(40); }),
               "mapping[0].filename is string index 40"});
  c.push_back({"function id 0", Mutated([](pb::Profile& m) { m.mutable_function(1)->set_id(0); }),
               "function[1] has id 0 (ids must be >= 1)"});
  c.push_back({"duplicate function id", Mutated([](pb::Profile& m) { m.mutable_function(1)->set_id(1); }),
               "function id 1 is used twice (function[0] and function[1])"});
  c.push_back(
      {"location id 0", Mutated([](pb::Profile& m) { m.mutable_location(0)->set_id(0); }), "location[0] has id 0"});
  c.push_back({"duplicate location id", Mutated([](pb::Profile& m) { m.mutable_location(0)->set_id(2); }),
               "location id 2 is used twice"});
  c.push_back(
      {"mapping id 0", Mutated([](pb::Profile& m) { m.mutable_mapping(0)->set_id(0); }), "mapping[0] has id 0"});
  c.push_back({"duplicate mapping id", Mutated([](pb::Profile& m) { m.add_mapping()->set_id(1); }),
               "mapping id 1 is used twice"});
  c.push_back({"sample names a missing location",
               Mutated([](pb::Profile& m) { m.mutable_sample(0)->set_location_id(1, 77); }),
               "sample[0] location_id[1] = 77 names no location"});
  c.push_back({"line names a missing function",
               Mutated([](pb::Profile& m) { m.mutable_location(1)->mutable_line(0)->set_function_id(5); }),
               "location[1] (id 2) line[0] names function id 5, which does not exist"});
  c.push_back({"line with function id 0",
               Mutated([](pb::Profile& m) { m.mutable_location(0)->mutable_line(0)->set_function_id(0); }),
               "location[0] (id 1) line[0] has function_id 0"});
  c.push_back({"location names a missing mapping",
               Mutated([](pb::Profile& m) { m.mutable_location(1)->set_mapping_id(9); }),
               "location[1] (id 2) names mapping id 9, which does not exist"});
  c.push_back({"too few values", Mutated([](pb::Profile& m) { m.mutable_sample(0)->mutable_value()->RemoveLast(); }),
               "sample[0] has 3 values but the profile has 4 sample types"});
  c.push_back({"too many values", Mutated([](pb::Profile& m) { m.mutable_sample(0)->add_value(1); }),
               "sample[0] has 5 values but the profile has 4 sample types"});
  c.push_back({"samples without sample types", Mutated([](pb::Profile& m) { m.clear_sample_type(); }),
               "profile has 1 samples but no sample_type"});
  return c;
}

}  // namespace

TEST_CASE("the valid base of the corpus decodes") {
  Result<Profile> p = DecodePprof(ValidMessage().SerializeAsString());
  REQUIRE(p.ok());
  CHECK(p->Total(kInuseSpace) == 100);
  CHECK(p->FunctionName(p->samples[0].locations[0]) == "leak");
  REQUIRE(DecodePprof(Gzip(ValidMessage().SerializeAsString())).ok());
}

TEST_CASE("each malformed input gives its own clear error") {
  QuietProtobuf quiet;
  std::set<std::string> messages;
  std::vector<Case> corpus = Corpus();
  for (const Case& c : corpus) {
    INFO("case: " << c.name);
    Result<Profile> p = DecodePprof(c.bytes);
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Matchers::Contains(c.expected));
    CHECK((p.status().code() == ErrorCode::kDataLoss));
    messages.insert(p.status().message());
  }
  // No two broken invariants share a message.
  CHECK(messages.size() == corpus.size());
}

TEST_CASE("every truncation of a gzipped profile is reported as truncated") {
  std::string gz = Gzip(ValidMessage().SerializeAsString());
  for (size_t n = 2; n < gz.size(); ++n) {
    INFO("kept " << n << " of " << gz.size() << " bytes");
    Result<Profile> p = DecodePprof(std::string_view(gz).substr(0, n));
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::Matchers::Contains("gzip data is truncated"));
  }
}

TEST_CASE("no truncation or bit flip of a raw profile crashes the reader") {
  QuietProtobuf quiet;
  std::string raw = ValidMessage().SerializeAsString();
  for (size_t n = 0; n < raw.size(); ++n) {
    Result<Profile> p = DecodePprof(std::string_view(raw).substr(0, n));
    // A cut on a field boundary can still be a valid profile; otherwise an error with a message.
    if (!p.ok()) CHECK_FALSE(p.status().message().empty());
    if (p.ok()) CHECK(ValidateProfile(*p).ok());
  }
  for (size_t i = 0; i < raw.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = raw;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      Result<Profile> p = DecodePprof(flipped);
      if (!p.ok()) CHECK_FALSE(p.status().message().empty());
      if (p.ok()) CHECK(ValidateProfile(*p).ok());
    }
  }
}

TEST_CASE("random inputs never crash the reader") {
  QuietProtobuf quiet;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::string bytes = RandomBytes(1 + seed * 3, seed);
    if (seed % 2 == 0) bytes = Gzip(bytes);
    Result<Profile> p = DecodePprof(bytes);
    if (p.ok()) CHECK(ValidateProfile(*p).ok());
  }
}

TEST_CASE("decompression is bounded: a zip bomb is an error, not an OOM") {
  std::string zeros(8 << 20, '\0');
  std::string bomb = Gzip(zeros);
  CHECK(bomb.size() < zeros.size() / 100);
  Result<std::string> capped = GzipDecompress(bomb, 1 << 20);
  REQUIRE_FALSE(capped.ok());
  CHECK(capped.status().code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(capped.status().message(), Catch::Matchers::Contains("expands beyond the 1 MiB limit"));
  // The same data within the cap decompresses exactly.
  Result<std::string> whole = GzipDecompress(bomb, 8 << 20);
  REQUIRE(whole.ok());
  CHECK(*whole == zeros);
  CHECK(kMaxDecompressedBytes == size_t{1} << 30);
}

TEST_CASE("decompression stops at 64x the compressed size (or 64 MiB), long before the 1 GiB ceiling") {
  // 16 members of 8 MiB of zeros: 128 MiB from about 130 KB.
  std::string member = Gzip(std::string(8 << 20, '\0'));
  std::string bomb;
  for (int i = 0; i < 16; ++i) bomb += member;
  REQUIRE(bomb.size() * kMaxInflateRatio < kInflateAllowance);
  CHECK(InflateLimit(bomb.size()) == kInflateAllowance);
  Result<std::string> out = GzipDecompress(bomb);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(out.status().message(), Catch::Matchers::Contains("beyond the 64 MiB limit"));
  // The ratio rules above the allowance, and the ceiling above the ratio.
  CHECK(InflateLimit(2 << 20) == (size_t{128} << 20));
  CHECK(InflateLimit(size_t{100} << 20) == kMaxDecompressedBytes);
  CHECK(InflateLimit(SIZE_MAX) == kMaxDecompressedBytes);
  CHECK(InflateLimit(10, 4096) == 4096);
  Result<Profile> p = DecodePprof(bomb);
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == ErrorCode::kResourceExhausted);
}

TEST_CASE("gzip: concatenated members form one stream") {
  std::string two = Gzip("hello, ") + Gzip("world");
  Result<std::string> out = GzipDecompress(two);
  REQUIRE(out.ok());
  CHECK(*out == "hello, world");
  CHECK_FALSE(GzipDecompress("plain text").ok());
  CHECK_THAT(GzipDecompress("plain text").status().message(), Catch::Matchers::Contains("missing the 1f 8b magic"));
  CHECK_FALSE(GzipCompress("x", 13).ok());
  CHECK_FALSE(GzipCompress("x", 10, GzipLibrary::kZlib).ok());
}

TEST_CASE("ValidateProfile names each broken invariant of the model") {
  auto valid = [] {
    Result<Profile> p = DecodePprof(ValidMessage().SerializeAsString());
    REQUIRE(p.ok());
    return std::move(p).value();
  };
  REQUIRE(ValidateProfile(valid()).ok());
  struct ModelCase {
    std::function<void(Profile&)> mutate;
    const char* expected;
  };
  std::vector<ModelCase> cases = {
      {[](Profile& p) { p.strings.clear(); }, "string table must start with the empty string"},
      {[](Profile& p) { p.strings[0] = "x"; }, "string table must start with the empty string"},
      {[](Profile& p) { p.sample_types[2].type = StringId{500}; },
       "sample_types[2].type: string index 500 is out of range (the string table has 11 entries)"},
      {[](Profile& p) { p.comments.push_back(StringId{11}); }, "comments[1]: string index 11 is out of range"},
      {[](Profile& p) { p.functions[1].filename = StringId{20}; }, "function 2: filename: string index 20"},
      {[](Profile& p) { p.functions[1].id = FunctionId{7}; }, "functions[1] has id 7; ids must be dense"},
      {[](Profile& p) { p.locations[0].id = LocationId{0}; }, "locations[0] has id 0; ids must be dense"},
      {[](Profile& p) { p.locations[0].lines[0].function = FunctionId{3}; },
       "location 1 line 0 names function 3, which does not exist"},
      {[](Profile& p) { p.samples[0].locations.push_back(LocationId{0}); },
       "sample 0 names location 0, which does not exist"},
      {[](Profile& p) { p.samples[0].values.push_back(1); }, "sample 0 has 5 values but the profile has 4"},
      {[](Profile& p) { p.samples[0].labels[0].num_unit = StringId{99}; },
       "sample 0 label 0: num_unit: string index 99"},
      {[](Profile& p) { p.sample_types.clear(); }, "profile has samples but no sample types"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("model case " << i);
    Profile p = valid();
    cases[i].mutate(p);
    Status s = ValidateProfile(p);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Matchers::Contains(cases[i].expected));
  }
}

// A valid profile whose one sample is repeated `copies` times on the wire
// (233 KB gzipped for 10 million: what took `top` to 3.8 GB before the cap).
std::string RepeatedSamples(size_t copies) {
  pb::Profile m = ValidMessage();
  std::string one = m.sample(0).SerializeAsString();
  m.clear_sample();
  std::string bytes = m.SerializeAsString();
  std::string sample_field;
  google::protobuf::io::StringOutputStream out(&sample_field);
  {
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.WriteTag(google::protobuf::internal::WireFormatLite::MakeTag(
        2, google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    coded.WriteVarint32(static_cast<uint32_t>(one.size()));
    coded.WriteString(one);
  }
  bytes.reserve(bytes.size() + copies * sample_field.size());
  for (size_t i = 0; i < copies; ++i) bytes += sample_field;
  return bytes;
}

TEST_CASE("pprof reader: sample count, stack depth and value totals are capped before parsing") {
  // At the cap the profile reads; one sample more is refused by count, before protobuf allocates.
  Result<Profile> at_cap = DecodePprof(RepeatedSamples(kMaxPprofSamples));
  REQUIRE(at_cap.ok());
  CHECK(at_cap->samples.size() == kMaxPprofSamples);
  Result<Profile> over = DecodePprof(Gzip(RepeatedSamples(kMaxPprofSamples + 1)));
  REQUIRE_FALSE(over.ok());
  CHECK(over.status().code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(over.status().message(), Catch::Matchers::Contains("holds 262145 samples, more than the 262144"));

  // One sample of 2 million frames (packed and unpacked ids count alike).
  for (bool packed : {true, false}) {
    std::string deep = Mutated([](pb::Profile& m) {
      for (uint64_t i = 0; i < kMaxPprofStackDepth; ++i) m.mutable_sample(0)->add_location_id(1);
    });
    if (!packed) {
      // Unpacked: the same ids, one tag each, appended to the sample on the wire.
      pb::Profile m = ValidMessage();
      pb::Sample* s = m.mutable_sample(0);
      std::string extra;
      for (uint64_t i = 0; i < kMaxPprofStackDepth; ++i) extra += std::string("\x08\x01", 2);
      std::string sample = s->SerializeAsString() + extra;
      m.clear_sample();
      deep = m.SerializeAsString() + std::string("\x12", 1);
      std::string len;
      for (uint64_t n = sample.size();; n >>= 7) {
        len += static_cast<char>((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
        if (n < 0x80) break;
      }
      deep += len + sample;
    }
    Result<Profile> p = DecodePprof(deep);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == ErrorCode::kResourceExhausted);
    CHECK_THAT(p.status().message(), Catch::Matchers::Contains("frames deep, more than the 65536"));
  }

  // INT64_MAX and a negative value: the total is beyond 2^61, refused by name.
  Result<Profile> huge = DecodePprof(Mutated([](pb::Profile& m) {
    m.mutable_sample(0)->set_value(1, INT64_MAX);
    *m.add_sample() = m.sample(0);
    m.mutable_sample(1)->set_value(1, -102);
  }));
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.status().code() == ErrorCode::kDataLoss);
  CHECK_THAT(huge.status().message(), Catch::Matchers::Contains("sample type alloc_space add up to more than 2^61"));
  // Two values of 2^60 each pass one by one but not together; negative values count by magnitude.
  Result<Profile> two = DecodePprof(Mutated([](pb::Profile& m) {
    m.mutable_sample(0)->set_value(3, int64_t{1} << 60);
    *m.add_sample() = m.sample(0);
    m.mutable_sample(1)->set_value(3, -(int64_t{1} << 60) - 1);
  }));
  REQUIRE_FALSE(two.ok());
  CHECK_THAT(two.status().message(), Catch::Matchers::Contains("inuse_space"));
  // Diff profiles hold negative values; within the bound they read.
  Result<Profile> diff = DecodePprof(Mutated([](pb::Profile& m) { m.mutable_sample(0)->set_value(3, -100); }));
  REQUIRE(diff.ok());
}
