// Profile model -> pprof wire format in one pass over the model, varints
// written straight into a byte buffer: no message objects. Field numbers and
// wire types come from the generated classes
// (perftools::profiles::*::k*FieldNumber). The bytes are the ones the
// generated code would serialize for the same profile (proto3 zero scalars
// left out, shortest varints), with one difference: a Sample's fields go in
// the order value, label, location_id instead of location_id, value, label.
// Protobuf readers must accept fields in any order (the encoding spec says
// so, and the decoded message is the same), and gzip likes it: the short
// fields that change from sample to sample come first, and the stack, which
// repeats, runs to the end of the sample, so a greedy deflate matches it whole
// instead of stopping at the sample's header. encode_bench's profiles with
// libdeflate 3 (docs/formats.md): 1k locations 482,997 B, 10k 626,542 B, 50k
// 1,263,108 B, against 582,112 / 712,482 / 1,334,687 B in number order.
// tests/unit/pprof_stream_test.cpp checks the
// bytes against the generated code's. The model's string table and ids are
// written as they are, so a profile read back is the same profile.
//
// Why not CodedOutputStream: its per-call bounds checks and buffer refills
// cost 3-4x the encoding itself here (~5 MB of mostly 1-2 byte varints for a
// 100k-sample profile). Room for a message's largest encoding is reserved
// once, and the message is then written without checks.
#include <google/protobuf/wire_format_lite.h>

#include <fmt/format.h>
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "heapprof/core/file_io.h"
#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/pprof_validate.h"
#include "heapprof/proto/profile.pb.h"

namespace heapprof {
namespace {

namespace pb = perftools::profiles;
using google::protobuf::internal::WireFormatLite;

uint64_t Index(StringId id) { return static_cast<uint32_t>(id); }
uint64_t Id(FunctionId id) { return static_cast<uint32_t>(id); }
uint64_t Id(LocationId id) { return static_cast<uint32_t>(id); }
// int64 fields travel as their two's complement: a negative value takes 10 bytes.
uint64_t Int(int64_t v) { return static_cast<uint64_t>(v); }

// Every field number of profile.proto is below 16, so every tag is one byte.
constexpr uint8_t VarintTag(int field) {
  return static_cast<uint8_t>(WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_VARINT));
}
constexpr uint8_t LengthTag(int field) {
  return static_cast<uint8_t>(WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
}
static_assert(WireFormatLite::MakeTag(pb::Profile::kDefaultSampleTypeFieldNumber,
                                      WireFormatLite::WIRETYPE_LENGTH_DELIMITED) < 0x80,
              "a field number of profile.proto no longer fits a one-byte tag");

// Longest varint (a 64-bit value, or a negative int64).
constexpr size_t kMaxVarint = 10;
// Room for a varint field, or for a length-delimited field's header: a tag
// byte, the length byte kept by Open() and the 4 more bytes Close() may need
// (messages stay below protobuf's 2 GiB limit).
constexpr size_t kMaxField = 1 + kMaxVarint;
constexpr size_t kMaxHeader = 1 + 5;

// Writes `v` as a varint at `p`; returns the byte after it.
inline char* EncodeVarint(char* p, uint64_t v) {
  if (v < 0x80) [[likely]] {  // most ids, string indices and lengths of a profile
    *p = static_cast<char>(v);
    return p + 1;
  }
  if (v < 0x4000) {  // the rest of the ids of a profile with fewer than 16k locations
    p[0] = static_cast<char>(v | 0x80);
    p[1] = static_cast<char>(v >> 7);
    return p + 2;
  }
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p = static_cast<char>(v);
  return p + 1;
}

// A growable byte buffer written through a raw cursor. Room(n) makes sure
// `n` more bytes fit; the Put calls after it do no checks of their own.
//
// A length-delimited field is written before its length is known: Open()
// keeps one byte for the length, Close() fills it in and, in the rare case
// the payload reached 128 bytes, moves the payload up to make room for a
// longer length. The result is the canonical encoding (shortest varints),
// written in one pass without summing sizes first.
class WireBuffer {
 public:
  // Storage is left uninitialized: zero-filling megabytes that are about to
  // be overwritten cost as much as a tenth of the encoding.
  explicit WireBuffer(size_t size_hint)
      : capacity_(std::max<size_t>(size_hint, 64)), buf_(new char[capacity_]), cur_(buf_.get()) {}

  void Room(size_t n) {
    if (static_cast<size_t>(buf_.get() + capacity_ - cur_) < n) [[unlikely]]
      Grow(n);
  }
  void PutVarint(uint64_t v) { cur_ = EncodeVarint(cur_, v); }
  // A packed repeated field's payload. The cursor stays in a local: a store
  // through char* could alias cur_ itself, which would reload it per byte.
  template <typename T, typename ToWire>
  void PutVarints(const std::vector<T>& values, ToWire to_wire) {
    char* p = cur_;
    for (const T& v : values) p = EncodeVarint(p, to_wire(v));
    cur_ = p;
  }
  // Location ids; returns the largest id - 1 (id 0 wraps around to the
  // largest value), the checker's range test done while the ids are at hand.
  uint32_t PutLocationIds(const std::vector<LocationId>& ids) {
    char* p = cur_;
    uint32_t worst = 0;
    for (LocationId id : ids) {
      uint32_t v = static_cast<uint32_t>(id);
      worst = std::max(worst, v - 1u);
      p = EncodeVarint(p, v);
    }
    cur_ = p;
    return worst;
  }
  // Proto3: a zero scalar is left out.
  void PutVarintField(int field, uint64_t v) {
    if (v == 0) return;
    *cur_++ = static_cast<char>(VarintTag(field));
    PutVarint(v);
  }
  void PutBytesField(int field, std::string_view bytes) {
    size_t at = Open(field);
    if (!bytes.empty()) std::memcpy(cur_, bytes.data(), bytes.size());
    cur_ += bytes.size();
    Close(at);
  }

  // Starts a length-delimited field; returns what Close() needs.
  size_t Open(int field) {
    *cur_++ = static_cast<char>(LengthTag(field));
    return static_cast<size_t>(cur_++ - buf_.get());
  }
  void Close(size_t length_at) {
    char* length = buf_.get() + length_at;
    size_t n = static_cast<size_t>(cur_ - length - 1);
    if (n < 0x80) [[likely]] {
      *length = static_cast<char>(n);
      return;
    }
    size_t extra = 0;
    for (size_t rest = n >> 7; rest != 0; rest >>= 7) ++extra;
    std::memmove(length + 1 + extra, length + 1, n);
    char* end = cur_ + extra;
    cur_ = length;
    PutVarint(n);
    cur_ = end;
  }

  std::string_view bytes() const { return {buf_.get(), static_cast<size_t>(cur_ - buf_.get())}; }

 private:
  [[gnu::noinline]] void Grow(size_t n) {
    size_t used = static_cast<size_t>(cur_ - buf_.get());
    capacity_ = std::max(capacity_ * 2, used + n);
    std::unique_ptr<char[]> bigger(new char[capacity_]);
    std::memcpy(bigger.get(), buf_.get(), used);
    buf_ = std::move(bigger);
    cur_ = buf_.get() + used;
  }

  size_t capacity_;
  std::unique_ptr<char[]> buf_;
  char* cur_;  // next byte to write, inside buf_
};

// Each sample's three vectors live wherever the allocator put them; after a
// fragmented heap that is a cache miss each. Asking for them a few samples
// ahead overlaps the misses with the writing (encode_bench's 10k-location
// profile, built after the 1k one: 12.9-15.0 ms -> 6.9-7.4 ms CPU).
constexpr size_t kPrefetchAhead = 8;
void Prefetch(const Sample& s) {
  __builtin_prefetch(s.locations.data());
  __builtin_prefetch(s.values.data());
  __builtin_prefetch(s.labels.data());
}

class Writer {
 public:
  explicit Writer(WireBuffer* out) : out_(*out) {}

  // Checks each sample just before writing it (the tables were checked
  // before): the samples' memory is walked once.
  Status WriteProfile(const Profile& p, internal::ProfileChecker& checker) {
    for (const ValueType& vt : p.sample_types) WriteValueType(pb::Profile::kSampleTypeFieldNumber, vt);
    for (size_t i = 0; i < p.samples.size(); ++i) {
      if (i + kPrefetchAhead < p.samples.size()) Prefetch(p.samples[i + kPrefetchAhead]);
      HEAPPROF_RETURN_IF_ERROR(checker.CheckSampleExceptIds(i));
      if (!WriteSample(p.samples[i], p.locations.size())) return checker.CheckSample(i);  // says which id
    }
    for (const Location& loc : p.locations) WriteLocation(loc);
    for (const Function& f : p.functions) WriteFunction(f);
    for (const std::string& s : p.strings) {
      out_.Room(kMaxHeader + s.size());
      out_.PutBytesField(pb::Profile::kStringTableFieldNumber, s);
    }
    out_.Room(3 * kMaxField);
    out_.PutVarintField(pb::Profile::kTimeNanosFieldNumber, Int(p.time_nanos));
    out_.PutVarintField(pb::Profile::kDurationNanosFieldNumber, Int(p.duration_nanos));
    WriteValueType(pb::Profile::kPeriodTypeFieldNumber, p.period_type);  // a present message, even when empty
    out_.PutVarintField(pb::Profile::kPeriodFieldNumber, Int(p.period));
    out_.Room(kMaxHeader + kMaxField + p.comments.size() * 5);
    if (!p.comments.empty()) {  // packed: one field, absent when empty
      size_t at = out_.Open(pb::Profile::kCommentFieldNumber);
      out_.PutVarints(p.comments, [](StringId c) { return Index(c); });
      out_.Close(at);
    }
    out_.PutVarintField(pb::Profile::kDefaultSampleTypeFieldNumber, Index(p.default_sample_type));
    return Status::Ok();
  }

 private:
  void WriteValueType(int field, const ValueType& vt) {
    out_.Room(kMaxHeader + 2 * kMaxField);
    size_t at = out_.Open(field);
    out_.PutVarintField(pb::ValueType::kTypeFieldNumber, Index(vt.type));
    out_.PutVarintField(pb::ValueType::kUnitFieldNumber, Index(vt.unit));
    out_.Close(at);
  }

  // False when a location id is not in 1..locations (the sample is written
  // anyway; the caller fails the encode).
  bool WriteSample(const Sample& s, uint64_t locations) {
    uint32_t worst_id = 0;
    out_.Room(kMaxHeader * 3 + s.locations.size() * 5 + s.values.size() * kMaxVarint +
              s.labels.size() * (kMaxHeader + 4 * kMaxField));
    // Values, labels, then location ids (see the top of the file).
    size_t sample = out_.Open(pb::Profile::kSampleFieldNumber);
    if (!s.values.empty()) {  // packed repeated fields: absent when empty
      size_t at = out_.Open(pb::Sample::kValueFieldNumber);
      out_.PutVarints(s.values, Int);
      out_.Close(at);
    }
    for (const Label& l : s.labels) {
      size_t at = out_.Open(pb::Sample::kLabelFieldNumber);
      out_.PutVarintField(pb::Label::kKeyFieldNumber, Index(l.key));
      out_.PutVarintField(pb::Label::kStrFieldNumber, Index(l.str));
      out_.PutVarintField(pb::Label::kNumFieldNumber, Int(l.num));
      out_.PutVarintField(pb::Label::kNumUnitFieldNumber, Index(l.num_unit));
      out_.Close(at);
    }
    if (!s.locations.empty()) {
      size_t at = out_.Open(pb::Sample::kLocationIdFieldNumber);
      worst_id = out_.PutLocationIds(s.locations);
      out_.Close(at);
    }
    out_.Close(sample);
    return s.locations.empty() || worst_id < locations;
  }

  void WriteLocation(const Location& loc) {
    out_.Room(kMaxHeader + 2 * kMaxField + loc.lines.size() * (kMaxHeader + 3 * kMaxField));
    size_t at = out_.Open(pb::Profile::kLocationFieldNumber);
    out_.PutVarintField(pb::Location::kIdFieldNumber, Id(loc.id));
    out_.PutVarintField(pb::Location::kAddressFieldNumber, loc.address);
    for (const Line& l : loc.lines) {
      size_t line = out_.Open(pb::Location::kLineFieldNumber);
      out_.PutVarintField(pb::Line::kFunctionIdFieldNumber, Id(l.function));
      out_.PutVarintField(pb::Line::kLineFieldNumber, Int(l.line));
      out_.PutVarintField(pb::Line::kColumnFieldNumber, Int(l.column));
      out_.Close(line);
    }
    out_.Close(at);
  }

  void WriteFunction(const Function& f) {
    out_.Room(kMaxHeader + 5 * kMaxField);
    size_t at = out_.Open(pb::Profile::kFunctionFieldNumber);
    out_.PutVarintField(pb::Function::kIdFieldNumber, Id(f.id));
    out_.PutVarintField(pb::Function::kNameFieldNumber, Index(f.name));
    out_.PutVarintField(pb::Function::kSystemNameFieldNumber, Index(f.system_name));
    out_.PutVarintField(pb::Function::kFilenameFieldNumber, Index(f.filename));
    out_.PutVarintField(pb::Function::kStartLineFieldNumber, Int(f.start_line));
    out_.Close(at);
  }

  WireBuffer& out_;
};

// A first guess at the output size, so the buffer rarely grows: a heap
// profile's sample is typically 40-80 bytes on the wire.
size_t SizeHint(const Profile& p) {
  size_t strings = 0;
  for (const std::string& s : p.strings) strings += s.size() + 3;
  return strings + 64 * p.samples.size() + 16 * (p.locations.size() + p.functions.size()) + 256;
}

// The wire bytes of a valid profile, in a buffer the caller copies or gzips.
Status Encode(const Profile& profile, WireBuffer& buffer) {
  auto invalid = [](const Status& s) { return Error(s.code(), "cannot encode an invalid profile: " + s.message()); };
  internal::ProfileChecker checker(profile);
  if (Status tables = checker.CheckTables(); !tables.ok()) return invalid(tables);
  if (Status written = Writer(&buffer).WriteProfile(profile, checker); !written.ok()) return invalid(written);
  if (buffer.bytes().size() > static_cast<size_t>(INT_MAX)) {
    return Error(
        ErrorCode::kResourceExhausted,
        fmt::format("profile encodes to {} bytes, over protobuf's 2 GiB message limit", buffer.bytes().size()));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> EncodePprof(const Profile& profile) {
  WireBuffer buffer(SizeHint(profile));
  HEAPPROF_RETURN_IF_ERROR(Encode(profile, buffer));
  return std::string(buffer.bytes());
}

Result<std::string> EncodePprofGzip(const Profile& profile) { return EncodePprofGzip(profile, kPprofGzipLevel); }

Result<std::string> EncodePprofGzip(const Profile& profile, int gzip_level) {
  WireBuffer buffer(SizeHint(profile));
  HEAPPROF_RETURN_IF_ERROR(Encode(profile, buffer));
  return GzipCompress(buffer.bytes(), gzip_level);
}

Status WritePprofFile(const std::string& path, const Profile& profile) {
  return WritePprofFile(path, profile, kPprofGzipLevel);
}

Status WritePprofFile(const std::string& path, const Profile& profile, int gzip_level) {
  HEAPPROF_ASSIGN_OR_RETURN(std::string bytes, EncodePprofGzip(profile, gzip_level));
  return WriteFileAtomic(path, bytes);
}

}  // namespace heapprof
