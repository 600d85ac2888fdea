// Parse failures of the generated classes say only "failed"; this walks the
// top level of the message with protobuf's own wire reader to say why.
#include "heapprof/core/pprof_wire_check.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "heapprof/core/text.h"
#include "heapprof/proto/profile.pb.h"

namespace heapprof::internal {
namespace {

namespace pb = perftools::profiles;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

const char* FieldName(uint32_t field) {
  switch (field) {
    case 1:
      return "sample_type";
    case 2:
      return "sample";
    case 3:
      return "mapping";
    case 4:
      return "location";
    case 5:
      return "function";
    case 6:
      return "string_table";
    case 11:
      return "period_type";
    default:
      return "field";
  }
}

// Parses one nested message with its generated class; false when malformed.
bool NestedParses(uint32_t field, std::string_view bytes) {
  const void* data = bytes.data();
  int size = static_cast<int>(bytes.size());
  switch (field) {
    case 1:
    case 11:
      return pb::ValueType().ParseFromArray(data, size);
    case 2:
      return pb::Sample().ParseFromArray(data, size);
    case 3:
      return pb::Mapping().ParseFromArray(data, size);
    case 4:
      return pb::Location().ParseFromArray(data, size);
    case 5:
      return pb::Function().ParseFromArray(data, size);
    default:
      return true;
  }
}

}  // namespace

std::string ExplainProfileParseFailure(std::string_view bytes) {
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (bytes[first] == '{' || bytes[first] == '[')) {
    return "not a pprof profile: the input looks like JSON (a Chrome .heapprofile?)";
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const int size = static_cast<int>(bytes.size());
  CodedInputStream in(data, size);
  int string_index = 0;
  int counts[16] = {};
  for (;;) {
    const int offset = in.CurrentPosition();
    if (offset == size) break;
    uint32_t tag = in.ReadTag();
    uint32_t field = tag >> 3;
    auto wire = static_cast<WireFormatLite::WireType>(tag & 7);
    if (tag == 0 || field == 0 || wire == WireFormatLite::WIRETYPE_START_GROUP ||
        wire == WireFormatLite::WIRETYPE_END_GROUP || (tag & 7) > 5) {
      return fmt::format("not a pprof profile: byte {} holds no valid protobuf field (another format?)", offset);
    }
    // Unknown fields are legal, but in a message that failed to parse they mark garbage.
    if (field > 15) {
      return fmt::format(
          "not a pprof profile: byte {} starts field {}, which profile.proto does not have "
          "(another format?)",
          offset, field);
    }
    if (wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) {
        return fmt::format("profile is truncated: the length of field {} at byte {} is cut off", field, offset);
      }
      const int start = in.CurrentPosition();
      if (length > static_cast<uint32_t>(size - start)) {
        return fmt::format("profile is truncated: field {} ({}) at byte {} needs {} bytes but only {} remain", field,
                           FieldName(field), offset, length, size - start);
      }
      std::string_view payload(bytes.data() + start, length);
      in.Skip(static_cast<int>(length));
      int ordinal = field < 16 ? counts[field]++ : 0;
      if (field == 6) {
        if (!internal::IsValidUtf8(payload)) {
          return fmt::format("string_table[{}] is not valid UTF-8 (profile.proto strings must be UTF-8)", string_index);
        }
        ++string_index;
      } else if (!NestedParses(field, payload)) {
        return fmt::format("{}[{}] at byte {} is a malformed message", FieldName(field), ordinal, offset);
      }
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) {
      return fmt::format("profile is truncated: field {} at byte {} is cut off", field, offset);
    }
  }
  return "the bytes are not a valid profile.proto message";
}

}  // namespace heapprof::internal

namespace heapprof::internal {

SampleCounts CountSamples(std::string_view bytes) {
  SampleCounts counts;
  const int size = static_cast<int>(std::min<size_t>(bytes.size(), INT_MAX));
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), size);
  for (uint32_t tag; (tag = in.ReadTag()) != 0;) {
    if (tag != WireFormatLite::MakeTag(2, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
      if (!WireFormatLite::SkipField(&in, tag)) break;
      continue;
    }
    uint32_t length = 0;
    if (!in.ReadVarint32(&length) || length > static_cast<uint32_t>(size - in.CurrentPosition())) break;
    std::string_view sample(bytes.data() + in.CurrentPosition(), length);
    in.Skip(static_cast<int>(length));
    ++counts.samples;
    // Sample.location_id is field 1: packed (one varint ends at each byte below 0x80) or one id a tag.
    uint64_t depth = 0;
    CodedInputStream s(reinterpret_cast<const uint8_t*>(sample.data()), static_cast<int>(sample.size()));
    for (uint32_t t; (t = s.ReadTag()) != 0;) {
      if (t == WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
        uint32_t n = 0;
        if (!s.ReadVarint32(&n) || n > static_cast<uint32_t>(sample.size()) - s.CurrentPosition()) break;
        std::string_view packed = sample.substr(static_cast<size_t>(s.CurrentPosition()), n);
        depth += static_cast<uint64_t>(
            std::count_if(packed.begin(), packed.end(), [](char c) { return (static_cast<uint8_t>(c) & 0x80) == 0; }));
        s.Skip(static_cast<int>(n));
      } else {
        if (t == WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_VARINT)) ++depth;
        if (!WireFormatLite::SkipField(&s, t)) break;
      }
    }
    counts.frames += depth;
    counts.deepest = std::max(counts.deepest, depth);
  }
  return counts;
}

}  // namespace heapprof::internal
