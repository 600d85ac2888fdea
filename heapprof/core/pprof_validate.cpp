// ValidateProfile: pprof's invariants checked on the model before it is
// written, so heapprof never emits a file that pprof would reject. The
// writer runs the same checks sample by sample as it writes.
#include <fmt/format.h>
#include <algorithm>
#include <vector>

#include "heapprof/core/pprof.h"
#include "heapprof/core/pprof_validate.h"

namespace heapprof {
namespace internal {
namespace {

// True when every id is in 1..n (id 0 wraps around to the largest value).
// One running maximum, no early exit: this runs for every frame of every sample.
bool IdsInRange(const std::vector<LocationId>& ids, uint64_t n) {
  uint32_t worst = 0;
  for (LocationId id : ids) worst = std::max(worst, static_cast<uint32_t>(id) - 1u);
  return ids.empty() || worst < n;
}

}  // namespace

ProfileChecker::ProfileChecker(const Profile& p) : p_(p) {}

Status ProfileChecker::CheckTables() {
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
      return Error(ErrorCode::kInvalidArgument, fmt::format("functions[{}] has id {}; ids must be dense (index + 1)", i,
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
      return Error(ErrorCode::kInvalidArgument, fmt::format("locations[{}] has id {}; ids must be dense (index + 1)", i,
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
  return status_;
}

Status ProfileChecker::CheckSample(size_t i) {
  HEAPPROF_RETURN_IF_ERROR(CheckSampleExceptIds(i));
  // Location ids are 32-bit; the offending id is looked up only when there is one.
  const Sample& s = p_.samples[i];
  const uint64_t locations = p_.locations.size();
  if (!IdsInRange(s.locations, locations)) [[unlikely]] {
    for (LocationId id : s.locations) {
      uint32_t lid = static_cast<uint32_t>(id);
      if (lid == 0 || lid > locations) {
        return Error(ErrorCode::kInvalidArgument,
                     fmt::format("sample {} names location {}, which does not exist", i, lid));
      }
    }
  }
  return Status::Ok();
}

Status ProfileChecker::CheckSampleExceptIds(size_t i) {
  const Sample& s = p_.samples[i];
  if (s.values.size() != p_.sample_types.size()) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("sample {} has {} values but the profile has {} sample types",
                                                          i, s.values.size(), p_.sample_types.size()));
  }
  for (size_t j = 0; j < s.labels.size(); ++j) {
    Check(s.labels[j].key, "sample {} label {}: key", i, j);
    Check(s.labels[j].str, "sample {} label {}: str", i, j);
    Check(s.labels[j].num_unit, "sample {} label {}: num_unit", i, j);
  }
  return status_;
}

void ProfileChecker::OutOfRange(uint32_t index, const std::string& where) {
  status_ = Error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: string index {} is out of range (the string table has {} entries)", where, index,
                              p_.strings.size()));
}

}  // namespace internal

Status ValidateProfile(const Profile& profile) {
  internal::ProfileChecker checker(profile);
  HEAPPROF_RETURN_IF_ERROR(checker.CheckTables());
  for (size_t i = 0; i < profile.samples.size(); ++i) HEAPPROF_RETURN_IF_ERROR(checker.CheckSample(i));
  return Status::Ok();
}

Status CheckValueTotals(const Profile& profile) {
  for (size_t t = 0; t < profile.sample_types.size(); ++t) {
    uint64_t total = 0;  // grows by at most 2^63 a step, so it stops below 2^64 at the first excess
    for (const Sample& sample : profile.samples) {
      if (t >= sample.values.size()) continue;
      int64_t v = sample.values[t];
      total += v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      if (total > kMaxValueTotal) {
        return Error(
            ErrorCode::kDataLoss,
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
