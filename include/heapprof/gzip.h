// gzip (RFC 1952) compression with zlib, as pprof files on disk are stored.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "heapprof/status.h"

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
// Compresses into one gzip member at `level` 0..9 (6 is zlib's default).
Result<std::string> GzipCompress(std::string_view bytes, int level = 6);
// Decompresses every gzip member in `bytes`; truncated, corrupt or oversized
// input (beyond InflateLimit(bytes.size(), max_output)) gives a kDataLoss /
// kResourceExhausted error naming the problem.
Result<std::string> GzipDecompress(std::string_view bytes, size_t max_output = kMaxDecompressedBytes);

}  // namespace heapprof
