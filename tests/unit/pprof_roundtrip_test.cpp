// Model -> pprof -> model is lossless, and what we write obeys pprof's rules
// when read with the generated protobuf classes (an independent view).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <set>

#include "heapprof/core/file_io.h"
#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/proto/profile.pb.h"
#include "unit/test_dirs.h"
#include "unit/test_profiles.h"

using namespace heapprof;
using heapprof::testing::HandMadeSnapshot;
namespace pb = perftools::profiles;

namespace {

void RequireSameProfile(const Profile& a, const Profile& b) {
  REQUIRE(a.strings == b.strings);
  REQUIRE(a.sample_types.size() == b.sample_types.size());
  for (size_t i = 0; i < a.sample_types.size(); ++i) {
    CHECK(a.sample_types[i].type == b.sample_types[i].type);
    CHECK(a.sample_types[i].unit == b.sample_types[i].unit);
  }
  REQUIRE(a.functions.size() == b.functions.size());
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const Function& x = a.functions[i];
    const Function& y = b.functions[i];
    CHECK(x.id == y.id);
    CHECK(x.name == y.name);
    CHECK(x.system_name == y.system_name);
    CHECK(x.filename == y.filename);
    CHECK(x.start_line == y.start_line);
  }
  REQUIRE(a.locations.size() == b.locations.size());
  for (size_t i = 0; i < a.locations.size(); ++i) {
    const Location& x = a.locations[i];
    const Location& y = b.locations[i];
    CHECK(x.id == y.id);
    CHECK(x.address == y.address);
    REQUIRE(x.lines.size() == y.lines.size());
    for (size_t j = 0; j < x.lines.size(); ++j) {
      CHECK(x.lines[j].function == y.lines[j].function);
      CHECK(x.lines[j].line == y.lines[j].line);
      CHECK(x.lines[j].column == y.lines[j].column);
    }
  }
  REQUIRE(a.samples.size() == b.samples.size());
  for (size_t i = 0; i < a.samples.size(); ++i) {
    const Sample& x = a.samples[i];
    const Sample& y = b.samples[i];
    CHECK(x.locations == y.locations);
    CHECK(x.values == y.values);
    REQUIRE(x.labels.size() == y.labels.size());
    for (size_t j = 0; j < x.labels.size(); ++j) {
      CHECK(x.labels[j].key == y.labels[j].key);
      CHECK(x.labels[j].str == y.labels[j].str);
      CHECK(x.labels[j].num == y.labels[j].num);
      CHECK(x.labels[j].num_unit == y.labels[j].num_unit);
    }
  }
  CHECK(a.comments == b.comments);
  CHECK(a.time_nanos == b.time_nanos);
  CHECK(a.duration_nanos == b.duration_nanos);
  CHECK(a.period_type.type == b.period_type.type);
  CHECK(a.period_type.unit == b.period_type.unit);
  CHECK(a.period == b.period);
  CHECK(a.default_sample_type == b.default_sample_type);
}

std::string TempPath(const std::string& name) {
  return (heapprof::testing::BinaryDir() / name).string() + "." + std::to_string(::getpid());
}

}  // namespace

TEST_CASE("pprof round trip of a built profile is lossless") {
  Profile original = BuildProfile(HandMadeSnapshot());
  REQUIRE(ValidateProfile(original).ok());

  SECTION("raw protobuf") {
    Result<std::string> bytes = EncodePprof(original);
    REQUIRE(bytes.ok());
    CHECK_FALSE(IsGzip(*bytes));
    Result<Profile> back = DecodePprof(*bytes);
    REQUIRE(back.ok());
    RequireSameProfile(original, *back);
  }
  SECTION("gzipped") {
    Result<std::string> bytes = EncodePprofGzip(original);
    REQUIRE(bytes.ok());
    CHECK(IsGzip(*bytes));
    Result<Profile> back = DecodePprof(*bytes);
    REQUIRE(back.ok());
    RequireSameProfile(original, *back);
  }
  SECTION("through a file") {
    std::string path = TempPath("roundtrip.pb.gz");
    REQUIRE(WritePprofFile(path, original).ok());
    Result<std::string> on_disk = ReadFileBytes(path);
    REQUIRE(on_disk.ok());
    CHECK(IsGzip(*on_disk));  // files on disk are gzipped
    Result<Profile> back = ReadPprofFile(path);
    ::unlink(path.c_str());
    REQUIRE(back.ok());
    RequireSameProfile(original, *back);
  }
  SECTION("twice: encode(decode(encode(p))) == encode(p)") {
    Result<std::string> first = EncodePprof(original);
    REQUIRE(first.ok());
    Result<Profile> back = DecodePprof(*first);
    REQUIRE(back.ok());
    Result<std::string> second = EncodePprof(*back);
    REQUIRE(second.ok());
    CHECK(*first == *second);
  }
}

TEST_CASE("pprof output obeys the heap profile contract seen through protobuf") {
  Profile original = BuildProfile(HandMadeSnapshot());
  Result<std::string> bytes = EncodePprof(original);
  REQUIRE(bytes.ok());
  pb::Profile msg;
  REQUIRE(msg.ParseFromString(*bytes));
  auto str = [&](int64_t i) {
    REQUIRE(i >= 0);
    REQUIRE(i < msg.string_table_size());
    return msg.string_table(static_cast<int>(i));
  };

  REQUIRE(msg.string_table_size() > 0);
  CHECK(msg.string_table(0).empty());
  REQUIRE(msg.sample_type_size() == 4);
  CHECK(str(msg.sample_type(0).type()) == "alloc_objects");
  CHECK(str(msg.sample_type(0).unit()) == "count");
  CHECK(str(msg.sample_type(1).type()) == "alloc_space");
  CHECK(str(msg.sample_type(1).unit()) == "bytes");
  CHECK(str(msg.sample_type(2).type()) == "inuse_objects");
  CHECK(str(msg.sample_type(3).type()) == "inuse_space");
  CHECK(str(msg.default_sample_type()) == "inuse_space");
  CHECK(str(msg.period_type().type()) == "space");
  CHECK(str(msg.period_type().unit()) == "bytes");
  CHECK(msg.period() == 4096);
  CHECK(msg.time_nanos() == 1'700'000'000'123'456'789);
  CHECK(msg.duration_nanos() == 2'500'000'000);

  std::vector<std::string> comments;
  for (int64_t c : msg.comment()) comments.push_back(str(c));
  CHECK_THAT(comments, Catch::Matchers::VectorContains(std::string("v8: 10.2.154.26")));
  CHECK_THAT(comments, Catch::Matchers::VectorContains(std::string("isolate: worker-a")));
  CHECK_THAT(comments, Catch::Matchers::VectorContains(std::string("strategy: gc-prologue-ledger")));
  CHECK_THAT(comments, Catch::Matchers::VectorContains(std::string("heap_used_bytes: 12345678")));
  CHECK_THAT(comments, Catch::Matchers::VectorContains(std::string("heap_limit_bytes: 134217728")));

  std::set<uint64_t> function_ids;
  for (const pb::Function& f : msg.function()) {
    CHECK(f.id() != 0);
    CHECK(function_ids.insert(f.id()).second);
  }
  std::set<uint64_t> location_ids;
  for (const pb::Location& l : msg.location()) {
    CHECK(l.id() != 0);
    CHECK(location_ids.insert(l.id()).second);
    REQUIRE(l.line_size() == 1);
    CHECK(function_ids.count(l.line(0).function_id()) == 1);
  }
  std::set<std::string> leaves;
  for (const pb::Sample& s : msg.sample()) {
    CHECK(s.value_size() == 4);
    REQUIRE(s.location_id_size() > 0);
    for (uint64_t id : s.location_id()) CHECK(location_ids.count(id) == 1);
    REQUIRE(s.label_size() == 1);
    CHECK(str(s.label(0).key()) == "bytes");
    CHECK(str(s.label(0).num_unit()) == "bytes");
    const pb::Location& leaf = msg.location(static_cast<int>(s.location_id(0) - 1));
    leaves.insert(str(msg.function(static_cast<int>(leaf.line(0).function_id() - 1)).name()));
  }
  // Leaf first: the leaves are the innermost frames, never "main".
  CHECK(leaves == std::set<std::string>{"leak", "(anonymous worker.js:44:9)", "parse", "(GC)"});
}

TEST_CASE("a foreign profile with sparse ids is renumbered densely") {
  pb::Profile msg;
  for (const char* s : {"", "alloc_space", "bytes", "f", "g", "a.go"}) msg.add_string_table(s);
  pb::ValueType* vt = msg.add_sample_type();
  vt->set_type(1);
  vt->set_unit(2);
  pb::Mapping* m = msg.add_mapping();
  m->set_id(42);
  pb::Function* f = msg.add_function();
  f->set_id(900);
  f->set_name(3);
  f->set_filename(5);
  pb::Function* g = msg.add_function();
  g->set_id(7);
  g->set_name(4);
  g->set_filename(5);
  pb::Location* lf = msg.add_location();
  lf->set_id(1000);
  lf->set_mapping_id(42);
  lf->set_address(0x1234);
  pb::Line* line = lf->add_line();
  line->set_function_id(900);
  line->set_line(12);
  pb::Location* lg = msg.add_location();
  lg->set_id(3);
  lg->add_line()->set_function_id(7);
  pb::Sample* s = msg.add_sample();
  s->add_location_id(1000);
  s->add_location_id(3);
  s->add_value(777);

  Result<Profile> p = DecodePprof(msg.SerializeAsString());
  REQUIRE(p.ok());
  REQUIRE(ValidateProfile(*p).ok());
  REQUIRE(p->functions.size() == 2);
  CHECK(p->functions[0].id == FunctionId{1});
  CHECK(p->str(p->functions[0].name) == "f");
  CHECK(p->functions[1].id == FunctionId{2});
  REQUIRE(p->locations.size() == 2);
  CHECK(p->locations[0].address == 0x1234);
  CHECK(p->locations[0].lines[0].function == FunctionId{1});
  CHECK(p->locations[0].lines[0].line == 12);
  CHECK(p->locations[1].lines[0].function == FunctionId{2});
  REQUIRE(p->samples.size() == 1);
  CHECK(p->samples[0].locations == std::vector<LocationId>{LocationId{1}, LocationId{2}});
  CHECK(p->FunctionName(p->samples[0].locations[0]) == "f");
  CHECK(p->FunctionName(p->samples[0].locations[1]) == "g");
  CHECK(p->Total(0) == 777);
}

TEST_CASE("an empty but valid profile round-trips") {
  Profile empty;
  Result<std::string> bytes = EncodePprofGzip(empty);
  REQUIRE(bytes.ok());
  Result<Profile> back = DecodePprof(*bytes);
  REQUIRE(back.ok());
  RequireSameProfile(empty, *back);
}

TEST_CASE("the writer refuses a profile that breaks pprof's rules") {
  Profile p = BuildProfile(HandMadeSnapshot());
  p.samples[0].values.pop_back();
  Result<std::string> bytes = EncodePprof(p);
  REQUIRE_FALSE(bytes.ok());
  CHECK_THAT(bytes.status().message(), Catch::Matchers::Contains("has 3 values but the profile has 4 sample types"));
}
