// Explains why bytes failed to parse as a profile.proto message: truncation,
// non-protobuf garbage, a malformed nested message or a non-UTF-8 string.
#pragma once

#include <string>
#include <string_view>

namespace heapprof::internal {

// A one-line reason for a parse failure of `bytes` as perftools.profiles.Profile.
std::string ExplainProfileParseFailure(std::string_view bytes);

}  // namespace heapprof::internal
