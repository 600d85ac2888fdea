// Internal: BuildProfile with a numeric label "age" (seconds, written without a unit) on each
// sample, for leak sessions (BuildLeakProfile in heapprof/core/leaks.h).
#pragma once

#include <cstdint>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/raw_snapshot.h"

namespace heapprof::internal {

// ages[i] for snapshot.samples[i], -1 for none; samples of one stack and
// size but another age stay apart.
Profile BuildProfileWithAges(const RawSnapshot& snapshot, const std::vector<int64_t>& ages);

}  // namespace heapprof::internal
