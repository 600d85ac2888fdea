// gzip (RFC 1952), as pprof files on disk are stored: written with libdeflate
// (or zlib, for comparison), read with zlib.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "heapprof/core/status.h"

namespace heapprof {

// Decompressed output beyond this is refused, so a "zip bomb" is an error, not an OOM.
inline constexpr size_t kMaxDecompressedBytes = size_t{1} << 30;  // 1 GiB
// Below that ceiling a stream may inflate to kMaxInflateRatio times its own
// size, or kInflateAllowance whatever its size. Real profiles inflate 2-10x;
// deflate reaches 1032x, so a bomb is refused after at most 64x its size.
inline constexpr size_t kMaxInflateRatio = 64;
inline constexpr size_t kInflateAllowance = size_t{64} << 20;  // 64 MiB

// The most GzipDecompress inflates `compressed_bytes` of gzip data to.
size_t InflateLimit(size_t compressed_bytes, size_t ceiling = kMaxDecompressedBytes);

// True when `bytes` starts with the gzip magic number (1f 8b).
bool IsGzip(std::string_view bytes);
// The compressor behind GzipCompress. Both write standard gzip; libdeflate
// compresses a whole buffer at once, faster and smaller than zlib at the same
// level (docs/formats.md has the measurements).
enum class GzipLibrary { kLibdeflate, kZlib };
// Compresses into one gzip member at `level`: 0..12 for libdeflate, 0..9 for zlib.
Result<std::string> GzipCompress(std::string_view bytes, int level = 6, GzipLibrary library = GzipLibrary::kLibdeflate);
// Decompresses every gzip member in `bytes`; truncated, corrupt or oversized
// input (beyond InflateLimit(bytes.size(), max_output)) gives a kDataLoss /
// kResourceExhausted error naming the problem.
Result<std::string> GzipDecompress(std::string_view bytes, size_t max_output = kMaxDecompressedBytes);

}  // namespace heapprof
