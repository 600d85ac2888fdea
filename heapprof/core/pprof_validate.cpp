// ValidateProfile: pprof's invariants checked on the model before it is
// written, so heapprof never emits a file that pprof would reject.
#include <fmt/format.h>

#include "heapprof/pprof.h"

namespace heapprof {
namespace {

class Checker {
 public:
  explicit Checker(const Profile& p) : p_(p) {}

  Status Run() {
    if (p_.strings.empty() || !p_.strings[0].empty()) {
      return Error(ErrorCode::kInvalidArgument, "string table must start with the empty string");
    }
    for (size_t i = 0; i < p_.sample_types.size(); ++i) {
      Check(p_.sample_types[i].type, "sample_types[{}].type", i);
      Check(p_.sample_types[i].unit, "sample_types[{}].unit", i);
    }
    Check(p_.period_type.type, "period_type.type");
    Check(p_.period_type.unit, "period_type.unit");
    Check(p_.default_sample_type, "default_sample_type");
    for (size_t i = 0; i < p_.comments.size(); ++i) Check(p_.comments[i], "comments[{}]", i);
    if (!status_.ok()) return status_;

    for (size_t i = 0; i < p_.functions.size() && status_.ok(); ++i) {
      const Function& f = p_.functions[i];
      if (static_cast<size_t>(f.id) != i + 1) {
        return Error(ErrorCode::kInvalidArgument,
                     fmt::format("functions[{}] has id {}; ids must be dense (index + 1)", i,
                                 static_cast<uint32_t>(f.id)));
      }
      Check(f.name, "function {}: name", i + 1);
      Check(f.system_name, "function {}: system_name", i + 1);
      Check(f.filename, "function {}: filename", i + 1);
    }
    if (!status_.ok()) return status_;

    for (size_t i = 0; i < p_.locations.size(); ++i) {
      const Location& loc = p_.locations[i];
      if (static_cast<size_t>(loc.id) != i + 1) {
        return Error(ErrorCode::kInvalidArgument,
                     fmt::format("locations[{}] has id {}; ids must be dense (index + 1)", i,
                                 static_cast<uint32_t>(loc.id)));
      }
      for (size_t j = 0; j < loc.lines.size(); ++j) {
        uint32_t fid = static_cast<uint32_t>(loc.lines[j].function);
        if (fid == 0 || fid > p_.functions.size()) {
          return Error(ErrorCode::kInvalidArgument,
                       fmt::format("location {} line {} names function {}, which does not exist", i + 1, j, fid));
        }
      }
    }

    if (p_.sample_types.empty() && !p_.samples.empty()) {
      return Error(ErrorCode::kInvalidArgument, "profile has samples but no sample types");
    }
    for (size_t i = 0; i < p_.samples.size(); ++i) {
      const Sample& s = p_.samples[i];
      if (s.values.size() != p_.sample_types.size()) {
        return Error(ErrorCode::kInvalidArgument,
                     fmt::format("sample {} has {} values but the profile has {} sample types", i,
                                 s.values.size(), p_.sample_types.size()));
      }
      for (size_t j = 0; j < s.locations.size(); ++j) {
        uint32_t lid = static_cast<uint32_t>(s.locations[j]);
        if (lid == 0 || lid > p_.locations.size()) {
          return Error(ErrorCode::kInvalidArgument,
                       fmt::format("sample {} names location {}, which does not exist", i, lid));
        }
      }
      for (size_t j = 0; j < s.labels.size(); ++j) {
        Check(s.labels[j].key, "sample {} label {}: key", i, j);
        Check(s.labels[j].str, "sample {} label {}: str", i, j);
        Check(s.labels[j].num_unit, "sample {} label {}: num_unit", i, j);
      }
      if (!status_.ok()) return status_;
    }
    return status_;
  }

 private:
  // Inline test, out-of-line message: this runs for every label of every sample.
  template <typename... Args>
  void Check(StringId id, fmt::format_string<Args...> where, Args&&... args) {
    uint32_t index = static_cast<uint32_t>(id);
    if (index < p_.strings.size()) [[likely]] return;
    if (status_.ok()) OutOfRange(index, fmt::format(where, std::forward<Args>(args)...));
  }
  [[gnu::noinline]] void OutOfRange(uint32_t index, const std::string& where) {
    status_ = Error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: string index {} is out of range (the string table has {} entries)", where, index,
                                p_.strings.size()));
  }

  const Profile& p_;
  Status status_;
};

}  // namespace

Status ValidateProfile(const Profile& profile) { return Checker(profile).Run(); }

Status CheckValueTotals(const Profile& profile) {
  for (size_t t = 0; t < profile.sample_types.size(); ++t) {
    uint64_t total = 0;  // grows by at most 2^63 a step, so it stops below 2^64 at the first excess
    for (const Sample& sample : profile.samples) {
      if (t >= sample.values.size()) continue;
      int64_t v = sample.values[t];
      total += v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      if (total > kMaxValueTotal) {
        return Error(ErrorCode::kDataLoss,
                     fmt::format("the values of sample type {} add up to more than 2^61 in magnitude, beyond any "
                                 "real measurement (sums of them would overflow)",
                                 t < profile.sample_types.size() ? std::string(profile.str(profile.sample_types[t].type))
                                                                 : std::to_string(t)));
      }
    }
  }
  return Status::Ok();
}

}  // namespace heapprof
