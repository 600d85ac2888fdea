// heapprof's own version, recorded in every profile it writes.
#pragma once

namespace heapprof {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace heapprof
