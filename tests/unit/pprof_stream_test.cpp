// The streaming pprof writer against protobuf's generated code: for each
// profile, the generated classes filled field by field and serialized are the
// reference; the streamed bytes must parse to an equal message, have the same
// size, and be the very same bytes once each sample's fields are put in the
// writer's order (value, label, location_id, which protobuf allows).
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/wire_format_lite.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <limits>
#include <random>

#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/proto/profile.pb.h"
#include "unit/test_profiles.h"

using namespace heapprof;
namespace pb = perftools::profiles;

namespace {

int64_t Index(StringId id) { return static_cast<int64_t>(static_cast<uint32_t>(id)); }

void FillValueType(const ValueType& in, pb::ValueType* out) {
  out->set_type(Index(in.type));
  out->set_unit(Index(in.unit));
}

// The reference: every model field copied into the generated message.
pb::Profile ToMessage(const Profile& p) {
  pb::Profile msg;
  for (const std::string& s : p.strings) msg.add_string_table(s);
  for (const ValueType& vt : p.sample_types) FillValueType(vt, msg.add_sample_type());
  for (const Function& f : p.functions) {
    pb::Function* out = msg.add_function();
    out->set_id(static_cast<uint32_t>(f.id));
    out->set_name(Index(f.name));
    out->set_system_name(Index(f.system_name));
    out->set_filename(Index(f.filename));
    out->set_start_line(f.start_line);
  }
  for (const Location& loc : p.locations) {
    pb::Location* out = msg.add_location();
    out->set_id(static_cast<uint32_t>(loc.id));
    out->set_address(loc.address);
    for (const Line& line : loc.lines) {
      pb::Line* l = out->add_line();
      l->set_function_id(static_cast<uint32_t>(line.function));
      l->set_line(line.line);
      l->set_column(line.column);
    }
  }
  for (const Sample& s : p.samples) {
    pb::Sample* out = msg.add_sample();
    for (LocationId id : s.locations) out->add_location_id(static_cast<uint32_t>(id));
    for (int64_t v : s.values) out->add_value(v);
    for (const Label& label : s.labels) {
      pb::Label* l = out->add_label();
      l->set_key(Index(label.key));
      l->set_str(Index(label.str));
      l->set_num(label.num);
      l->set_num_unit(Index(label.num_unit));
    }
  }
  msg.set_time_nanos(p.time_nanos);
  msg.set_duration_nanos(p.duration_nanos);
  FillValueType(p.period_type, msg.mutable_period_type());
  msg.set_period(p.period);
  for (StringId c : p.comments) msg.add_comment(Index(c));
  msg.set_default_sample_type(Index(p.default_sample_type));
  return msg;
}

// The generated code's bytes with each Sample's fields in the writer's order
// (value, label, location_id; the generated code writes them in number order).
// Built from generated pieces: the sample types (field 1), then every sample
// as its fields serialized one by one, then the profile without fields 1-2.
std::string GeneratedWithWriterSampleOrder(const pb::Profile& reference) {
  using google::protobuf::internal::WireFormatLite;
  pb::Profile head;
  *head.mutable_sample_type() = reference.sample_type();
  std::string out = head.SerializeAsString();
  for (const pb::Sample& s : reference.sample()) {
    pb::Sample values, ids, labels;
    *values.mutable_value() = s.value();
    *ids.mutable_location_id() = s.location_id();
    *labels.mutable_label() = s.label();
    std::string body = values.SerializeAsString() + labels.SerializeAsString() + ids.SerializeAsString();
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteTag(WireFormatLite::MakeTag(pb::Profile::kSampleFieldNumber, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    coded.WriteVarint32(static_cast<uint32_t>(body.size()));
    coded.WriteRaw(body.data(), static_cast<int>(body.size()));
  }
  pb::Profile tail = reference;
  tail.clear_sample_type();
  tail.clear_sample();
  return out + tail.SerializeAsString();
}

void RequireSameAsGeneratedCode(const Profile& p) {
  Result<std::string> streamed = EncodePprof(p);
  REQUIRE(streamed.ok());
  pb::Profile reference = ToMessage(p);
  pb::Profile parsed;
  REQUIRE(parsed.ParseFromString(*streamed));
  std::string differences;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&differences);
  CHECK(differ.Compare(reference, parsed));
  CHECK(differences.empty());
  std::string generated;
  REQUIRE(reference.SerializeToString(&generated));
  CHECK(streamed->size() == generated.size());
  CHECK(*streamed == GeneratedWithWriterSampleOrder(reference));
}

StringId Add(Profile& p, std::string s) { return p.AddString(std::move(s)); }

// Every field of the model set, at the values where varints change size or sign.
Profile EdgeCaseProfile() {
  Profile p;
  StringId objects = Add(p, "alloc_objects"), count = Add(p, "count"), space = Add(p, "alloc_space"),
           bytes = Add(p, "bytes");
  p.sample_types = {{objects, count}, {space, bytes}, {objects, StringId{0}}};
  p.period_type = {space, bytes};
  p.period = std::numeric_limits<int64_t>::max();
  p.time_nanos = -1;  // before 1970: a 10-byte varint
  p.duration_nanos = 0;
  p.default_sample_type = space;
  StringId nul = Add(p, std::string("a\0b", 3));
  StringId utf8 = Add(p, "\xc3\xa9t\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5");  // valid UTF-8: proto3 checks it
  StringId empty = Add(p, "");
  StringId long_name = Add(p, std::string(300, 'x'));  // a two-byte length prefix
  StringId huge = Add(p, std::string(20000, 'y'));     // a three-byte one
  p.functions.push_back(Function{FunctionId{1}, nul, utf8, long_name, 0});
  p.functions.push_back(Function{FunctionId{2}, empty, StringId{0}, StringId{0}, -7});
  p.functions.push_back(Function{FunctionId{3}, long_name, nul, utf8, std::numeric_limits<int64_t>::min()});
  p.locations.push_back(Location{LocationId{1}, 0, {}});  // no line at all
  p.locations.push_back(Location{LocationId{2}, 0xdeadbeefcafe, {Line{FunctionId{1}, 1, 1}}});
  p.locations.push_back(Location{
      LocationId{3}, 0, {Line{FunctionId{2}, 0, 0}, Line{FunctionId{3}, -5, 127}, Line{FunctionId{1}, 128, 0}}});
  p.samples.push_back(Sample{{}, {0, 0, 0}, {}});  // no stack, all values zero
  p.samples.push_back(Sample{{LocationId{3}, LocationId{2}, LocationId{1}},
                             {-1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()},
                             {Label{bytes, StringId{0}, -300, bytes}, Label{utf8, nul, 0, StringId{0}},
                              Label{StringId{0}, StringId{0}, 0, StringId{0}}}});
  p.samples.push_back(
      Sample{{LocationId{1}, LocationId{1}}, {127, 128, 16383}, {Label{count, StringId{0}, 16384, count}}});
  p.comments = {utf8, empty, nul, StringId{0}, huge};
  return p;
}

// Many locations (ids with three-byte varints), long stacks, random values.
Profile RandomProfile(uint64_t seed, int locations, int samples) {
  std::mt19937_64 rng(seed);
  Profile p;
  StringId type = Add(p, "inuse_space"), unit = Add(p, "bytes");
  p.sample_types = {{type, unit}, {type, unit}, {type, unit}, {type, unit}};
  p.period_type = {type, unit};
  p.period = 512 * 1024;
  p.default_sample_type = type;
  p.time_nanos = static_cast<int64_t>(rng() >> 1);
  p.duration_nanos = static_cast<int64_t>(rng() % 1'000'000'000'000);
  for (int i = 0; i < locations; ++i) {
    StringId name = Add(p, "fn_" + std::to_string(rng() % 100000));
    p.functions.push_back(Function{FunctionId{static_cast<uint32_t>(i + 1)}, name, StringId{0}, unit,
                                   static_cast<int64_t>(rng() % 5000)});
    p.locations.push_back(Location{LocationId{static_cast<uint32_t>(i + 1)},
                                   rng() % 4 == 0 ? rng() : 0,
                                   {Line{FunctionId{static_cast<uint32_t>(i + 1)}, static_cast<int64_t>(rng() % 5000),
                                         static_cast<int64_t>(rng() % 200)}}});
  }
  auto value = [&]() -> int64_t {
    switch (rng() % 4) {
      case 0:
        return 0;
      case 1:
        return -static_cast<int64_t>(rng() % 100000);  // diffs carry negative values
      default:
        return static_cast<int64_t>(rng() >> (rng() % 64));
    }
  };
  for (int i = 0; i < samples; ++i) {
    Sample s;
    size_t depth = rng() % 200;
    for (size_t d = 0; d < depth; ++d) s.locations.push_back(LocationId{static_cast<uint32_t>(1 + rng() % locations)});
    for (int v = 0; v < 4; ++v) s.values.push_back(value());
    if (rng() % 2 == 0) s.labels.push_back(Label{unit, StringId{0}, value(), unit});
    p.samples.push_back(std::move(s));
  }
  p.comments = {type, unit};
  return p;
}

}  // namespace

TEST_CASE("streamed pprof equals the generated code's serialization") {
  SECTION("empty profile") { RequireSameAsGeneratedCode(Profile{}); }
  SECTION("a built heap profile with labels and comments") {
    RequireSameAsGeneratedCode(BuildProfile(testing::HandMadeSnapshot()));
  }
  SECTION("edge cases: empty strings, NUL bytes, UTF-8, zero, negative and extreme values") {
    RequireSameAsGeneratedCode(EdgeCaseProfile());
  }
  SECTION("20k locations, long stacks, random values") {
    for (uint64_t seed : {1u, 2u, 3u}) RequireSameAsGeneratedCode(RandomProfile(seed, 20000, 2000));
  }
}

TEST_CASE("the streaming writer refuses an invalid profile") {
  Profile p = EdgeCaseProfile();
  p.samples[1].locations.push_back(LocationId{99});
  Result<std::string> out = EncodePprof(p);
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(), Catch::Contains("location 99"));

  // Found while writing: the samples are checked as they go out.
  Profile late = RandomProfile(4, 100, 500);
  late.samples.back().labels.push_back(Label{StringId{12345}, StringId{0}, 1, StringId{0}});
  out = EncodePprof(late);
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(), Catch::Contains("sample 499 label") && Catch::Contains("string index 12345"));
}
