// Parts are built by copying each sample with its locations and functions
// into a fresh profile whose strings, functions and locations are interned
// anew, so a part carries nothing its samples do not use and its ids are
// dense from 1, as the model requires.
#include "heapprof/core/profile_split.h"

#include <fmt/format.h>

#include <unordered_map>

#include "heapprof/core/pprof.h"

namespace heapprof {
namespace {

constexpr uint64_t kSplitCommentRoom = 512;

class PartBuilder {
 public:
  explicit PartBuilder(const Profile& from) : from_(from) {
    p_.sample_types.reserve(from.sample_types.size());
    for (const ValueType& t : from.sample_types) p_.sample_types.push_back(Type(t));
    p_.period_type = Type(from.period_type);
    p_.period = from.period;
    p_.time_nanos = from.time_nanos;
    p_.duration_nanos = from.duration_nanos;
    p_.default_sample_type = Str(from.default_sample_type);
    for (StringId c : from.comments) p_.comments.push_back(Str(c));
  }

  void Add(const Sample& s) {
    Sample out;
    out.values = s.values;
    out.locations.reserve(s.locations.size());
    for (LocationId id : s.locations) out.locations.push_back(Loc(id));
    for (const Label& l : s.labels) out.labels.push_back({Str(l.key), Str(l.str), l.num, Str(l.num_unit)});
    p_.samples.push_back(std::move(out));
  }

  void Comment(const std::string& text) { p_.comments.push_back(Str(text)); }
  Profile Take() && { return std::move(p_); }

 private:
  StringId Str(StringId id) {
    if (static_cast<uint32_t>(id) == 0) return StringId{0};
    return Str(std::string(from_.str(id)));
  }
  StringId Str(const std::string& s) {
    if (s.empty()) return StringId{0};
    auto [it, added] = strings_.try_emplace(s, StringId{static_cast<uint32_t>(p_.strings.size())});
    if (added) p_.strings.push_back(s);
    return it->second;
  }
  ValueType Type(const ValueType& t) { return {Str(t.type), Str(t.unit)}; }
  FunctionId Fn(FunctionId id) {
    auto [it, added] = functions_.try_emplace(static_cast<uint32_t>(id), FunctionId{});
    if (added) {
      const Function& f = from_.function(id);
      it->second = FunctionId{static_cast<uint32_t>(p_.functions.size() + 1)};
      p_.functions.push_back({it->second, Str(f.name), Str(f.system_name), Str(f.filename), f.start_line});
    }
    return it->second;
  }
  LocationId Loc(LocationId id) {
    auto [it, added] = locations_.try_emplace(static_cast<uint32_t>(id), LocationId{});
    if (added) {
      const Location& l = from_.location(id);
      Location out{LocationId{static_cast<uint32_t>(p_.locations.size() + 1)}, l.address, {}};
      for (const Line& line : l.lines) out.lines.push_back({Fn(line.function), line.line, line.column});
      it->second = out.id;
      p_.locations.push_back(std::move(out));
    }
    return it->second;
  }

  const Profile& from_;
  Profile p_;
  std::unordered_map<std::string, StringId> strings_;
  std::unordered_map<uint32_t, FunctionId> functions_;
  std::unordered_map<uint32_t, LocationId> locations_;
};

// Samples [begin, end) of `from` as one part, encoded; halves itself while too large.
Status Build(const Profile& from, size_t begin, size_t end, const SplitLimits& limits, std::vector<ProfilePart>& out) {
  PartBuilder b(from);
  for (size_t i = begin; i < end; ++i) b.Add(from.samples[i]);
  Profile part = std::move(b).Take();
  HEAPPROF_ASSIGN_OR_RETURN(std::string bytes, EncodePprof(part));
  // Room for the "split:" comment added later (a few hundred bytes).
  const uint64_t budget =
      limits.max_bytes > 4 * kSplitCommentRoom ? limits.max_bytes - kSplitCommentRoom : limits.max_bytes;
  if (bytes.size() > budget) {
    if (end - begin <= 1) {
      return Error(ErrorCode::kResourceExhausted,
                   fmt::format("one sample's profile takes {} bytes, more than the limit of {} bytes per profile",
                               bytes.size(), limits.max_bytes));
    }
    size_t mid = begin + (end - begin) / 2;
    HEAPPROF_RETURN_IF_ERROR(Build(from, begin, mid, limits, out));
    return Build(from, mid, end, limits, out);
  }
  out.push_back({std::move(part), std::move(bytes)});
  return Status::Ok();
}

}  // namespace

Result<std::vector<ProfilePart>> SplitProfile(const Profile& profile, const SplitLimits& limits) {
  if (limits.max_samples == 0 || limits.max_bytes == 0) {
    return Error(ErrorCode::kInvalidArgument, "split limits must be positive");
  }
  std::vector<ProfilePart> parts;
  if (profile.samples.size() <= limits.max_samples) {
    HEAPPROF_ASSIGN_OR_RETURN(std::string whole, EncodePprof(profile));
    if (whole.size() <= limits.max_bytes) {
      parts.push_back({profile, std::move(whole)});
      return parts;
    }
  }
  const size_t n = profile.samples.size();
  for (size_t begin = 0; begin < n; begin += limits.max_samples) {
    size_t end = std::min<size_t>(n, begin + limits.max_samples);
    HEAPPROF_RETURN_IF_ERROR(Build(profile, begin, end, limits, parts));
  }
  if (parts.empty()) return Error(ErrorCode::kInternal, "a profile too large to encode had no samples to split");
  // Each part says what it is, then is encoded again with that comment.
  for (size_t i = 0; i < parts.size(); ++i) {
    Profile& p = parts[i].profile;
    p.comments.push_back(p.AddString(fmt::format(
        "split: part {} of {} ({} of the window's {} samples; limits {} samples and {} bytes per profile: the "
        "parts together are the window)",
        i + 1, parts.size(), p.samples.size(), n, limits.max_samples, limits.max_bytes)));
    HEAPPROF_ASSIGN_OR_RETURN(parts[i].pprof, EncodePprof(p));
  }
  return parts;
}

}  // namespace heapprof
