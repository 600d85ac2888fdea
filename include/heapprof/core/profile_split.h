// Splitting one profile into parts that each stay within a store's limits
// (a continuous-profiling store refuses profiles with too many samples or
// too many bytes): every part is a whole, valid profile of some of the
// samples, with only the functions, locations and strings those samples use,
// and the parts' values add up to the original's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof {

struct SplitLimits {
  uint64_t max_samples = 16'000;           // samples in one part
  uint64_t max_bytes = uint64_t{4} << 20;  // one part's serialized, uncompressed size
};

// One part: the model and its uncompressed encoding (the size checked).
struct ProfilePart {
  Profile profile;
  std::string pprof;  // EncodePprof(profile)
};

// `profile` as it is (one part) when it is within `limits`, else parts of at
// most max_samples samples each, halved again while a part's encoding is
// larger than max_bytes. Each part of several carries the comment
// "split: part I of N (...)". kResourceExhausted when one sample alone is
// larger than max_bytes.
Result<std::vector<ProfilePart>> SplitProfile(const Profile& profile, const SplitLimits& limits);

}  // namespace heapprof
