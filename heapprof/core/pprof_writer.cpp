// Profile model -> pprof wire format, streamed in one pass with protobuf's
// CodedOutputStream: no message objects, field numbers from the generated
// classes (perftools::profiles::*::k*FieldNumber). The bytes are the ones the
// generated code would serialize for the same profile (fields in number
// order, proto3 zero scalars left out); tests/unit/pprof_stream_test.cpp
// checks that on edge cases. The model's string table and ids are written as
// they are, so a profile read back is the same profile.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>
#include <fmt/format.h>

#include "heapprof/file_io.h"
#include "heapprof/gzip.h"
#include "heapprof/pprof.h"
#include "heapprof/proto/profile.pb.h"

namespace heapprof {
namespace {

namespace pb = perftools::profiles;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::internal::WireFormatLite;

uint64_t Index(StringId id) { return static_cast<uint32_t>(id); }
uint64_t Id(FunctionId id) { return static_cast<uint32_t>(id); }
uint64_t Id(LocationId id) { return static_cast<uint32_t>(id); }
// int64 fields travel as their two's complement: a negative value takes 10 bytes.
uint64_t Int(int64_t v) { return static_cast<uint64_t>(v); }

constexpr uint32_t VarintTag(int field) { return WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_VARINT); }
constexpr uint32_t LengthTag(int field) {
  return WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
}

// Size of a varint field as proto3 writes it: absent when zero.
size_t VarintFieldSize(int field, uint64_t v) {
  return v == 0 ? 0 : CodedOutputStream::VarintSize32(VarintTag(field)) + CodedOutputStream::VarintSize64(v);
}
// Size of a length-delimited field whose payload is `n` bytes.
size_t LengthFieldSize(int field, size_t n) {
  return CodedOutputStream::VarintSize32(LengthTag(field)) + CodedOutputStream::VarintSize64(n) + n;
}

class Writer {
 public:
  explicit Writer(CodedOutputStream* out) : out_(*out) {}

  void WriteProfile(const Profile& p) {
    for (const ValueType& vt : p.sample_types) WriteValueType(pb::Profile::kSampleTypeFieldNumber, vt);
    for (const Sample& s : p.samples) WriteSample(s);
    for (const Location& loc : p.locations) WriteLocation(loc);
    for (const Function& f : p.functions) WriteFunction(f);
    for (const std::string& s : p.strings) {
      Length(pb::Profile::kStringTableFieldNumber, s.size());
      out_.WriteRaw(s.data(), static_cast<int>(s.size()));
    }
    Varint(pb::Profile::kTimeNanosFieldNumber, Int(p.time_nanos));
    Varint(pb::Profile::kDurationNanosFieldNumber, Int(p.duration_nanos));
    WriteValueType(pb::Profile::kPeriodTypeFieldNumber, p.period_type);  // a present message, even when empty
    Varint(pb::Profile::kPeriodFieldNumber, Int(p.period));
    size_t comments = 0;
    for (StringId c : p.comments) comments += CodedOutputStream::VarintSize64(Index(c));
    if (comments != 0) {
      Length(pb::Profile::kCommentFieldNumber, comments);
      for (StringId c : p.comments) out_.WriteVarint64(Index(c));
    }
    Varint(pb::Profile::kDefaultSampleTypeFieldNumber, Index(p.default_sample_type));
  }

 private:
  void Varint(int field, uint64_t v) {
    if (v == 0) return;
    out_.WriteTag(VarintTag(field));
    out_.WriteVarint64(v);
  }
  void Length(int field, size_t n) {
    out_.WriteTag(LengthTag(field));
    out_.WriteVarint64(n);
  }

  void WriteValueType(int field, const ValueType& vt) {
    Length(field, VarintFieldSize(pb::ValueType::kTypeFieldNumber, Index(vt.type)) +
                      VarintFieldSize(pb::ValueType::kUnitFieldNumber, Index(vt.unit)));
    Varint(pb::ValueType::kTypeFieldNumber, Index(vt.type));
    Varint(pb::ValueType::kUnitFieldNumber, Index(vt.unit));
  }

  static size_t LabelSize(const Label& l) {
    return VarintFieldSize(pb::Label::kKeyFieldNumber, Index(l.key)) +
           VarintFieldSize(pb::Label::kStrFieldNumber, Index(l.str)) +
           VarintFieldSize(pb::Label::kNumFieldNumber, Int(l.num)) +
           VarintFieldSize(pb::Label::kNumUnitFieldNumber, Index(l.num_unit));
  }

  // A sample's size is summed just before it is written: one pass over the
  // profile, with each message's length known when its header goes out.
  void WriteSample(const Sample& s) {
    size_t ids = 0;
    for (LocationId id : s.locations) ids += CodedOutputStream::VarintSize64(Id(id));
    size_t values = 0;
    for (int64_t v : s.values) values += CodedOutputStream::VarintSize64(Int(v));
    size_t size = 0;
    if (ids != 0) size += LengthFieldSize(pb::Sample::kLocationIdFieldNumber, ids);
    if (values != 0) size += LengthFieldSize(pb::Sample::kValueFieldNumber, values);
    for (const Label& l : s.labels) size += LengthFieldSize(pb::Sample::kLabelFieldNumber, LabelSize(l));

    Length(pb::Profile::kSampleFieldNumber, size);
    if (ids != 0) {
      Length(pb::Sample::kLocationIdFieldNumber, ids);
      for (LocationId id : s.locations) out_.WriteVarint64(Id(id));
    }
    if (values != 0) {
      Length(pb::Sample::kValueFieldNumber, values);
      for (int64_t v : s.values) out_.WriteVarint64(Int(v));
    }
    for (const Label& l : s.labels) {
      Length(pb::Sample::kLabelFieldNumber, LabelSize(l));
      Varint(pb::Label::kKeyFieldNumber, Index(l.key));
      Varint(pb::Label::kStrFieldNumber, Index(l.str));
      Varint(pb::Label::kNumFieldNumber, Int(l.num));
      Varint(pb::Label::kNumUnitFieldNumber, Index(l.num_unit));
    }
  }

  static size_t LineSize(const Line& l) {
    return VarintFieldSize(pb::Line::kFunctionIdFieldNumber, Id(l.function)) +
           VarintFieldSize(pb::Line::kLineFieldNumber, Int(l.line)) +
           VarintFieldSize(pb::Line::kColumnFieldNumber, Int(l.column));
  }

  void WriteLocation(const Location& loc) {
    size_t size = VarintFieldSize(pb::Location::kIdFieldNumber, Id(loc.id)) +
                  VarintFieldSize(pb::Location::kAddressFieldNumber, loc.address);
    for (const Line& l : loc.lines) size += LengthFieldSize(pb::Location::kLineFieldNumber, LineSize(l));
    Length(pb::Profile::kLocationFieldNumber, size);
    Varint(pb::Location::kIdFieldNumber, Id(loc.id));
    Varint(pb::Location::kAddressFieldNumber, loc.address);
    for (const Line& l : loc.lines) {
      Length(pb::Location::kLineFieldNumber, LineSize(l));
      Varint(pb::Line::kFunctionIdFieldNumber, Id(l.function));
      Varint(pb::Line::kLineFieldNumber, Int(l.line));
      Varint(pb::Line::kColumnFieldNumber, Int(l.column));
    }
  }

  void WriteFunction(const Function& f) {
    Length(pb::Profile::kFunctionFieldNumber,
           VarintFieldSize(pb::Function::kIdFieldNumber, Id(f.id)) +
               VarintFieldSize(pb::Function::kNameFieldNumber, Index(f.name)) +
               VarintFieldSize(pb::Function::kSystemNameFieldNumber, Index(f.system_name)) +
               VarintFieldSize(pb::Function::kFilenameFieldNumber, Index(f.filename)) +
               VarintFieldSize(pb::Function::kStartLineFieldNumber, Int(f.start_line)));
    Varint(pb::Function::kIdFieldNumber, Id(f.id));
    Varint(pb::Function::kNameFieldNumber, Index(f.name));
    Varint(pb::Function::kSystemNameFieldNumber, Index(f.system_name));
    Varint(pb::Function::kFilenameFieldNumber, Index(f.filename));
    Varint(pb::Function::kStartLineFieldNumber, Int(f.start_line));
  }

  CodedOutputStream& out_;
};

// A first guess at the output size, so the buffer rarely grows: a heap
// profile's sample is typically 40-80 bytes on the wire.
size_t SizeHint(const Profile& p) {
  size_t strings = 0;
  for (const std::string& s : p.strings) strings += s.size() + 3;
  return strings + 64 * p.samples.size() + 16 * (p.locations.size() + p.functions.size()) + 256;
}

}  // namespace

Result<std::string> EncodePprof(const Profile& profile) {
  if (Status valid = ValidateProfile(profile); !valid.ok()) {
    return Error(valid.code(), "cannot encode an invalid profile: " + valid.message());
  }
  std::string out;
  out.reserve(SizeHint(profile));
  {
    google::protobuf::io::StringOutputStream stream(&out);
    CodedOutputStream coded(&stream);
    Writer(&coded).WriteProfile(profile);
    coded.Trim();  // gives the unused tail of the buffer back before `out` is resized
  }
  if (out.size() > static_cast<size_t>(INT_MAX)) {
    return Error(ErrorCode::kResourceExhausted,
                 fmt::format("profile encodes to {} bytes, over protobuf's 2 GiB message limit", out.size()));
  }
  return out;
}

Result<std::string> EncodePprofGzip(const Profile& profile) { return EncodePprofGzip(profile, kPprofGzipLevel); }

Result<std::string> EncodePprofGzip(const Profile& profile, int gzip_level) {
  HEAPPROF_ASSIGN_OR_RETURN(std::string raw, EncodePprof(profile));
  return GzipCompress(raw, gzip_level);
}

Status WritePprofFile(const std::string& path, const Profile& profile) {
  return WritePprofFile(path, profile, kPprofGzipLevel);
}

Status WritePprofFile(const std::string& path, const Profile& profile, int gzip_level) {
  HEAPPROF_ASSIGN_OR_RETURN(std::string bytes, EncodePprofGzip(profile, gzip_level));
  return WriteFileAtomic(path, bytes);
}

}  // namespace heapprof
