// Parsing of user-given sizes ("512KiB", "64k", "1MB") and durations ("10s", "250ms").
#pragma once

#include <cstdint>
#include <string_view>

#include "heapprof/core/status.h"

namespace heapprof {

// Bytes. Accepts a plain number or a suffix: B, K/KB/KiB, M/MB/MiB, G/GB/GiB
// (all binary multiples). Rejects negatives, overflow and trailing junk.
Result<uint64_t> ParseSize(std::string_view text);
// Nanoseconds. Accepts ns, us, ms, s, m, h; a plain number means seconds.
Result<int64_t> ParseDuration(std::string_view text);

}  // namespace heapprof
