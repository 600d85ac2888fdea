// pprof bytes (gzipped or raw) -> Profile model, validated as strictly as
// pprof itself: every broken invariant is reported by name, never crashes.
// Ids of foreign profiles may be sparse; they are renumbered densely here.
#include <google/protobuf/arena.h>

#include <fmt/format.h>
#include <climits>
#include <unordered_map>

#include "heapprof/core/file_io.h"
#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/pprof_wire_check.h"
#include "heapprof/proto/profile.pb.h"

namespace heapprof {
namespace {

namespace pb = perftools::profiles;

Status Corrupt(std::string message) { return Error(ErrorCode::kDataLoss, std::move(message)); }

// Maps a table's ids to dense 1-based ids; ids in order 1..n need no hashing.
class IdMap {
 public:
  // `kind` names the table in messages ("function"); ids are read by `id_of`.
  template <typename Table, typename IdOf>
  Status Build(const char* kind, const Table& table, IdOf id_of) {
    size_ = static_cast<size_t>(table.size());
    dense_ = true;
    for (int i = 0; i < table.size(); ++i) {
      if (id_of(table.Get(i)) != static_cast<uint64_t>(i) + 1) {
        dense_ = false;
        break;
      }
    }
    if (dense_) return Status::Ok();
    sparse_.reserve(size_);
    for (int i = 0; i < table.size(); ++i) {
      uint64_t id = id_of(table.Get(i));
      if (id == 0) return Corrupt(fmt::format("{}[{}] has id 0 (ids must be >= 1)", kind, i));
      auto [it, inserted] = sparse_.emplace(id, static_cast<uint32_t>(i + 1));
      if (!inserted) {
        return Corrupt(
            fmt::format("{} id {} is used twice ({}[{}] and {}[{}])", kind, id, kind, it->second - 1, kind, i));
      }
    }
    return Status::Ok();
  }
  // The dense id for `id`, or 0 when no entry has it.
  uint32_t Find(uint64_t id) const {
    if (dense_) return id >= 1 && id <= size_ ? static_cast<uint32_t>(id) : 0;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? 0 : it->second;
  }

 private:
  bool dense_ = true;
  size_t size_ = 0;
  std::unordered_map<uint64_t, uint32_t> sparse_;
};

class Converter {
 public:
  explicit Converter(const pb::Profile& msg) : msg_(msg) {}

  Result<Profile> Run() {
    const int nstrings = msg_.string_table_size();
    if (nstrings == 0) return Corrupt("string_table is empty (string_table[0] must be the empty string)");
    if (!msg_.string_table(0).empty()) {
      return Corrupt(
          fmt::format("string_table[0] must be the empty string, found \"{}\"", Shorten(msg_.string_table(0))));
    }
    if (msg_.sample_type_size() == 0 && msg_.sample_size() > 0) {
      return Corrupt(fmt::format("profile has {} samples but no sample_type", msg_.sample_size()));
    }
    if (nstrings > static_cast<int>(UINT32_MAX >> 1)) return Corrupt("string_table is too large");

    Profile p;
    p.strings.assign(msg_.string_table().begin(), msg_.string_table().end());
    for (int i = 0; i < msg_.sample_type_size(); ++i) {
      p.sample_types.push_back(Value(msg_.sample_type(i), fmt::format("sample_type[{}]", i)));
    }
    p.period_type = Value(msg_.period_type(), "period_type");
    p.default_sample_type = Str(msg_.default_sample_type(), "default_sample_type");
    Str(msg_.drop_frames(), "drop_frames");
    Str(msg_.keep_frames(), "keep_frames");
    Str(msg_.doc_url(), "doc_url");
    for (int i = 0; i < msg_.comment_size(); ++i) {
      p.comments.push_back(Str(msg_.comment(i), [i] { return fmt::format("comment[{}]", i); }));
    }
    p.time_nanos = msg_.time_nanos();
    p.duration_nanos = msg_.duration_nanos();
    p.period = msg_.period();
    if (!status_.ok()) return status_;

    // Mappings carry no data the model keeps, but pprof checks them, so do we.
    if (Status s = mappings_.Build("mapping", msg_.mapping(), [](const pb::Mapping& m) { return m.id(); }); !s.ok()) {
      return s;
    }
    for (int i = 0; i < msg_.mapping_size(); ++i) {
      Str(msg_.mapping(i).filename(), [i] { return fmt::format("mapping[{}].filename", i); });
      Str(msg_.mapping(i).build_id(), [i] { return fmt::format("mapping[{}].build_id", i); });
    }
    if (!status_.ok()) return status_;

    if (Status s = functions_.Build("function", msg_.function(), [](const pb::Function& f) { return f.id(); });
        !s.ok()) {
      return s;
    }
    p.functions.reserve(msg_.function_size());
    for (int i = 0; i < msg_.function_size(); ++i) {
      const pb::Function& f = msg_.function(i);
      auto where = [&](const char* field) {
        return [&f, i, field] { return fmt::format("function[{}] (id {}).{}", i, f.id(), field); };
      };
      p.functions.push_back(Function{FunctionId{static_cast<uint32_t>(i + 1)}, Str(f.name(), where("name")),
                                     Str(f.system_name(), where("system_name")), Str(f.filename(), where("filename")),
                                     f.start_line()});
      if (!status_.ok()) return status_;
    }

    if (Status s = locations_.Build("location", msg_.location(), [](const pb::Location& l) { return l.id(); });
        !s.ok()) {
      return s;
    }
    p.locations.reserve(msg_.location_size());
    for (int i = 0; i < msg_.location_size(); ++i) {
      const pb::Location& l = msg_.location(i);
      if (l.mapping_id() != 0 && mappings_.Find(l.mapping_id()) == 0) {
        return Corrupt(
            fmt::format("location[{}] (id {}) names mapping id {}, which does not exist", i, l.id(), l.mapping_id()));
      }
      Location loc{LocationId{static_cast<uint32_t>(i + 1)}, l.address(), {}};
      loc.lines.reserve(l.line_size());
      for (int j = 0; j < l.line_size(); ++j) {
        const pb::Line& line = l.line(j);
        if (line.function_id() == 0) {
          return Corrupt(fmt::format("location[{}] (id {}) line[{}] has function_id 0", i, l.id(), j));
        }
        uint32_t fid = functions_.Find(line.function_id());
        if (fid == 0) {
          return Corrupt(fmt::format("location[{}] (id {}) line[{}] names function id {}, which does not exist", i,
                                     l.id(), j, line.function_id()));
        }
        loc.lines.push_back(Line{FunctionId{fid}, line.line(), line.column()});
      }
      p.locations.push_back(std::move(loc));
    }

    const size_t ntypes = static_cast<size_t>(msg_.sample_type_size());
    p.samples.reserve(msg_.sample_size());
    for (int i = 0; i < msg_.sample_size(); ++i) {
      const pb::Sample& s = msg_.sample(i);
      if (static_cast<size_t>(s.value_size()) != ntypes) {
        return Corrupt(
            fmt::format("sample[{}] has {} values but the profile has {} sample types", i, s.value_size(), ntypes));
      }
      Sample out;
      out.values.assign(s.value().begin(), s.value().end());
      out.locations.reserve(s.location_id_size());
      for (int j = 0; j < s.location_id_size(); ++j) {
        uint32_t lid = locations_.Find(s.location_id(j));
        if (lid == 0) {
          return Corrupt(fmt::format("sample[{}] location_id[{}] = {} names no location", i, j, s.location_id(j)));
        }
        out.locations.push_back(LocationId{lid});
      }
      for (int j = 0; j < s.label_size(); ++j) {
        const pb::Label& l = s.label(j);
        auto where = [i, j](const char* field) {
          return [i, j, field] { return fmt::format("sample[{}] label[{}].{}", i, j, field); };
        };
        out.labels.push_back(Label{Str(l.key(), where("key")), Str(l.str(), where("str")), l.num(),
                                   Str(l.num_unit(), where("num_unit"))});
      }
      if (!status_.ok()) return status_;
      p.samples.push_back(std::move(out));
    }
    return p;
  }

 private:
  static std::string Shorten(const std::string& s) { return s.size() <= 40 ? s : s.substr(0, 40) + "..."; }

  // Where a string index sits, for messages: text, or a callable built only on error.
  static std::string Describe(const char* where) { return where; }
  static std::string Describe(const std::string& where) { return where; }
  template <typename F>
  static auto Describe(const F& where) -> decltype(std::string(where())) {
    return where();
  }

  // Checks a string index; records the first bad one in status_.
  template <typename Where>
  StringId Str(int64_t index, const Where& where) {
    if (index < 0 || index >= msg_.string_table_size()) {
      if (status_.ok()) {
        status_ = Corrupt(fmt::format("{} is string index {}, out of range (string_table has {} entries)",
                                      Describe(where), index, msg_.string_table_size()));
      }
      return StringId{0};
    }
    return StringId{static_cast<uint32_t>(index)};
  }
  ValueType Value(const pb::ValueType& vt, const std::string& where) {
    return {Str(vt.type(), where + ".type"), Str(vt.unit(), where + ".unit")};
  }

  const pb::Profile& msg_;
  Status status_;
  IdMap mappings_;
  IdMap functions_;
  IdMap locations_;
};

}  // namespace

Result<Profile> DecodePprof(std::string_view bytes) {
  if (bytes.empty()) return Corrupt("input is empty (0 bytes); a pprof profile is never empty");
  std::string inflated;
  bool gzipped = IsGzip(bytes);
  if (gzipped) {
    HEAPPROF_ASSIGN_OR_RETURN(std::string raw, GzipDecompress(bytes));
    inflated = std::move(raw);
    if (inflated.empty()) return Corrupt("gzip data decompresses to 0 bytes; a pprof profile is never empty");
    bytes = inflated;
  }
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return Error(ErrorCode::kResourceExhausted, "profile is larger than protobuf's 2 GiB message limit");
  }
  const internal::SampleCounts counts = internal::CountSamples(bytes);
  auto refuse = [](std::string what) { return Error(ErrorCode::kResourceExhausted, std::move(what)); };
  if (counts.samples > kMaxPprofSamples) {
    return refuse(
        fmt::format("profile holds {} samples, more than the {} heapprof reads (aggregate identical "
                    "stacks first: real heap profiles hold thousands)",
                    counts.samples, kMaxPprofSamples));
  }
  if (counts.deepest > kMaxPprofStackDepth) {
    return refuse(fmt::format("a sample's stack is {} frames deep, more than the {} heapprof reads", counts.deepest,
                              kMaxPprofStackDepth));
  }
  if (counts.frames > kMaxPprofFrames) {
    return refuse(fmt::format("the samples' stacks hold {} frames in all, more than the {} heapprof reads",
                              counts.frames, kMaxPprofFrames));
  }
  google::protobuf::Arena arena;
  auto* msg = google::protobuf::Arena::CreateMessage<pb::Profile>(&arena);
  if (!msg->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    std::string why = internal::ExplainProfileParseFailure(bytes);
    return Corrupt(gzipped ? "gzip data does not hold a pprof profile: " + why : why);
  }
  Result<Profile> profile = Converter(*msg).Run();
  if (profile.ok()) {
    HEAPPROF_RETURN_IF_ERROR(CheckValueTotals(*profile));
  }
  return profile;
}

Result<Profile> ReadPprofFile(const std::string& path) {
  HEAPPROF_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  Result<Profile> profile = DecodePprof(bytes);
  if (!profile.ok()) return Error(profile.status().code(), fmt::format("{}: {}", path, profile.status().message()));
  return profile;
}

}  // namespace heapprof
