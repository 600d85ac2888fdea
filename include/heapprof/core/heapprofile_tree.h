// Internal: the DevTools sampling-profile import on an already parsed JSON
// value, so the DevTools client (heapprof/remote) does not parse a
// multi-megabyte getSamplingProfile reply twice.
#pragma once

#include <nlohmann/json.hpp>

#include "heapprof/core/heapprofile.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/stack_table.h"

namespace heapprof {

// DecodeSamplingProfile on the bare {head, samples} object, interning frames
// and stacks into `table` (shared by several windows of one profile); the
// snapshot's frames and stacks are left empty for the caller to take from `table`.
Result<RawSnapshot> SamplingProfileSnapshot(const nlohmann::json& profile, const SampledWindow& window,
                                            internal::StackTable& table);

}  // namespace heapprof
