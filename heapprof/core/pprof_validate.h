// pprof's invariants of the model in two parts, so the writer can check each
// sample just before it writes it: one pass over the samples' memory instead
// of two. ValidateProfile (pprof.h) runs both parts over a whole profile.
#pragma once

#include <fmt/format.h>
#include <cstddef>
#include <cstdint>
#include <string>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof::internal {

class ProfileChecker {
 public:
  explicit ProfileChecker(const Profile& p);

  // The string table, sample types, period type, comments, functions and
  // locations, and that samples have sample types to carry.
  Status CheckTables();
  // Sample `i`: its value count, location ids and label strings. Meaningful
  // after CheckTables() passed.
  Status CheckSample(size_t i);
  // The same but the location ids, for a caller that checks them as it reads
  // them anyway (the writer) and calls CheckSample when one is out of range.
  Status CheckSampleExceptIds(size_t i);

 private:
  // Inline test, out-of-line message: this runs for every label of every sample.
  template <typename... Args>
  void Check(StringId id, fmt::format_string<Args...> where, Args&&... args) {
    uint32_t index = static_cast<uint32_t>(id);
    if (index < p_.strings.size()) [[likely]]
      return;
    if (status_.ok()) OutOfRange(index, fmt::format(where, std::forward<Args>(args)...));
  }
  [[gnu::noinline]] void OutOfRange(uint32_t index, const std::string& where);

  const Profile& p_;
  Status status_;
};

}  // namespace heapprof::internal
