// gzip (RFC 1952) compression with zlib, as pprof files on disk are stored.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "heapprof/status.h"

namespace heapprof {

// Decompressed output beyond this is refused, so a "zip bomb" is an error, not an OOM.
inline constexpr size_t kMaxDecompressedBytes = size_t{1} << 30;  // 1 GiB

// True when `bytes` starts with the gzip magic number (1f 8b).
bool IsGzip(std::string_view bytes);
// Compresses into one gzip member at `level` 0..9 (6 is zlib's default).
Result<std::string> GzipCompress(std::string_view bytes, int level = 6);
// Decompresses every gzip member in `bytes`; truncated, corrupt or oversized
// input gives a kDataLoss / kResourceExhausted error naming the problem.
Result<std::string> GzipDecompress(std::string_view bytes, size_t max_output = kMaxDecompressedBytes);

}  // namespace heapprof
