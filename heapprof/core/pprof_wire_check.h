// Explains why bytes failed to parse as a profile.proto message: truncation,
// non-protobuf garbage, a malformed nested message or a non-UTF-8 string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace heapprof::internal {

// A one-line reason for a parse failure of `bytes` as perftools.profiles.Profile.
std::string ExplainProfileParseFailure(std::string_view bytes);

// How many samples and location ids a serialized profile holds, counted on
// the wire before protobuf builds any object; malformed input stops the count.
struct SampleCounts {
  uint64_t samples = 0;
  uint64_t frames = 0;   // location ids over all samples
  uint64_t deepest = 0;  // location ids of the largest sample
};
SampleCounts CountSamples(std::string_view bytes);

}  // namespace heapprof::internal
