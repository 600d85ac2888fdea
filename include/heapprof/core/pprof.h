// pprof (profile.proto, gzipped) out of and back into the Profile model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof {

// Checks pprof's invariants: strings[0] == "", string indexes in range, ids
// non-zero, unique and resolvable, values per sample == sample types.
Status ValidateProfile(const Profile& profile);

// Serialized perftools.profiles.Profile, not compressed.
Result<std::string> EncodePprof(const Profile& profile);
// libdeflate level of pprof files: the fastest level whose files are no
// larger than what @datadog/pprof writes (pprof-format + zlib 6) on
// encode_bench's 1k, 10k and 50k-location profiles; chosen from its level table
// (docs/formats.md).
inline constexpr int kPprofGzipLevel = 3;

// Serialized and gzipped, as pprof files on disk are.
Result<std::string> EncodePprofGzip(const Profile& profile);
// The same at an explicit libdeflate level (0 stored, 1 fastest .. 12 smallest).
Result<std::string> EncodePprofGzip(const Profile& profile, int gzip_level);
// What DecodePprof accepts, checked before protobuf builds anything, so a
// small hostile file cannot take gigabytes: heapprof's own profiles hold a
// few thousand aggregated samples of at most a few hundred frames.
inline constexpr uint64_t kMaxPprofSamples = uint64_t{1} << 18;     // 262,144 samples
inline constexpr uint64_t kMaxPprofStackDepth = uint64_t{1} << 16;  // 65,536 frames in one sample
inline constexpr uint64_t kMaxPprofFrames = uint64_t{1} << 24;      // 16,777,216 frames over all samples
// The magnitudes of one sample type's values may add up to at most 2^61
// (2 EiB): then no total, subtotal or difference of two profiles' totals
// that the tools compute can overflow int64.
inline constexpr uint64_t kMaxValueTotal = uint64_t{1} << 61;

// kDataLoss naming the sample type whose values add up beyond kMaxValueTotal.
Status CheckValueTotals(const Profile& profile);

// Parses gzipped or raw bytes and validates them; dense ids in the result.
// Beyond the limits above: kResourceExhausted (kDataLoss for value totals).
Result<Profile> DecodePprof(std::string_view bytes);

// Writes a gzipped profile atomically (temp file in the same folder + rename).
Status WritePprofFile(const std::string& path, const Profile& profile);
Status WritePprofFile(const std::string& path, const Profile& profile, int gzip_level);
Result<Profile> ReadPprofFile(const std::string& path);

}  // namespace heapprof
