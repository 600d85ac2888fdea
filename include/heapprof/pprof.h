// pprof (profile.proto, gzipped) out of and back into the Profile model.
#pragma once

#include <string>
#include <string_view>

#include "heapprof/profile.h"
#include "heapprof/status.h"

namespace heapprof {

// Checks pprof's invariants: strings[0] == "", string indexes in range, ids
// non-zero, unique and resolvable, values per sample == sample types.
Status ValidateProfile(const Profile& profile);

// Serialized perftools.profiles.Profile, not compressed.
Result<std::string> EncodePprof(const Profile& profile);
// gzip level of pprof files: zlib's default, so files are no larger than those
// of Node's pprof encoders; 1 (Go's choice) is about 2x faster and ~15% larger.
inline constexpr int kPprofGzipLevel = 6;

// Serialized and gzipped, as pprof files on disk are.
Result<std::string> EncodePprofGzip(const Profile& profile);
// The same at an explicit gzip level (1 fastest .. 9 smallest).
Result<std::string> EncodePprofGzip(const Profile& profile, int gzip_level);
// Parses gzipped or raw bytes and validates them; dense ids in the result.
Result<Profile> DecodePprof(std::string_view bytes);

// Writes a gzipped profile atomically (temp file in the same folder + rename).
Status WritePprofFile(const std::string& path, const Profile& profile);
Status WritePprofFile(const std::string& path, const Profile& profile, int gzip_level);
Result<Profile> ReadPprofFile(const std::string& path);

}  // namespace heapprof
