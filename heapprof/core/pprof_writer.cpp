// Profile model -> perftools.profiles.Profile (the generated protobuf classes).
// The model's string table and ids are copied as they are, so a profile read
// back is the same profile.
#include <google/protobuf/arena.h>

#include <climits>
#include <fmt/format.h>

#include "heapprof/file_io.h"
#include "heapprof/gzip.h"
#include "heapprof/pprof.h"
#include "heapprof/proto/profile.pb.h"

namespace heapprof {
namespace {

namespace pb = perftools::profiles;

int64_t Index(StringId id) { return static_cast<int64_t>(static_cast<uint32_t>(id)); }

void FillValueType(const ValueType& in, pb::ValueType* out) {
  out->set_type(Index(in.type));
  out->set_unit(Index(in.unit));
}

void FillMessage(const Profile& p, pb::Profile* msg) {
  msg->mutable_string_table()->Reserve(static_cast<int>(p.strings.size()));
  for (const std::string& s : p.strings) msg->add_string_table(s);

  for (const ValueType& vt : p.sample_types) FillValueType(vt, msg->add_sample_type());

  msg->mutable_function()->Reserve(static_cast<int>(p.functions.size()));
  for (const Function& f : p.functions) {
    pb::Function* out = msg->add_function();
    out->set_id(static_cast<uint32_t>(f.id));
    out->set_name(Index(f.name));
    out->set_system_name(Index(f.system_name));
    out->set_filename(Index(f.filename));
    out->set_start_line(f.start_line);
  }

  msg->mutable_location()->Reserve(static_cast<int>(p.locations.size()));
  for (const Location& loc : p.locations) {
    pb::Location* out = msg->add_location();
    out->set_id(static_cast<uint32_t>(loc.id));
    out->set_address(loc.address);
    for (const Line& line : loc.lines) {
      pb::Line* l = out->add_line();
      l->set_function_id(static_cast<uint32_t>(line.function));
      l->set_line(line.line);
      l->set_column(line.column);
    }
  }

  msg->mutable_sample()->Reserve(static_cast<int>(p.samples.size()));
  for (const Sample& s : p.samples) {
    pb::Sample* out = msg->add_sample();
    auto* ids = out->mutable_location_id();
    ids->Reserve(static_cast<int>(s.locations.size()));
    for (LocationId id : s.locations) ids->AddAlreadyReserved(static_cast<uint32_t>(id));
    auto* values = out->mutable_value();
    values->Reserve(static_cast<int>(s.values.size()));
    for (int64_t v : s.values) values->AddAlreadyReserved(v);
    for (const Label& label : s.labels) {
      pb::Label* l = out->add_label();
      l->set_key(Index(label.key));
      l->set_str(Index(label.str));
      l->set_num(label.num);
      l->set_num_unit(Index(label.num_unit));
    }
  }

  msg->set_time_nanos(p.time_nanos);
  msg->set_duration_nanos(p.duration_nanos);
  FillValueType(p.period_type, msg->mutable_period_type());
  msg->set_period(p.period);
  for (StringId c : p.comments) msg->add_comment(Index(c));
  msg->set_default_sample_type(Index(p.default_sample_type));
}

}  // namespace

Result<std::string> EncodePprof(const Profile& profile) {
  if (Status valid = ValidateProfile(profile); !valid.ok()) {
    return Error(valid.code(), "cannot encode an invalid profile: " + valid.message());
  }
  // One arena for the whole message: 100k samples mean 100k small allocations.
  google::protobuf::Arena arena;
  auto* msg = google::protobuf::Arena::CreateMessage<pb::Profile>(&arena);
  FillMessage(profile, msg);
  size_t size = msg->ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX)) {
    return Error(ErrorCode::kResourceExhausted,
                 fmt::format("profile encodes to {} bytes, over protobuf's 2 GiB message limit", size));
  }
  // Serialize with the sizes just computed: SerializeToString would compute them again.
  std::string out(size, '\0');
  uint8_t* end = msg->SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data()));
  if (end != reinterpret_cast<uint8_t*>(out.data()) + size) {
    return Error(ErrorCode::kInternal, "protobuf serialization wrote an unexpected size");
  }
  return out;
}

Result<std::string> EncodePprofGzip(const Profile& profile) { return EncodePprofGzip(profile, kPprofGzipLevel); }

Result<std::string> EncodePprofGzip(const Profile& profile, int gzip_level) {
  Result<std::string> raw = EncodePprof(profile);
  if (!raw.ok()) return raw.status();
  return GzipCompress(*raw, gzip_level);
}

Status WritePprofFile(const std::string& path, const Profile& profile) {
  return WritePprofFile(path, profile, kPprofGzipLevel);
}

Status WritePprofFile(const std::string& path, const Profile& profile, int gzip_level) {
  Result<std::string> bytes = EncodePprofGzip(profile, gzip_level);
  if (!bytes.ok()) return bytes.status();
  return WriteFileAtomic(path, *bytes);
}

}  // namespace heapprof
