#include "heapprof/core/gzip.h"

#include <libdeflate.h>
#include <zlib.h>

#include <fmt/format.h>
#include <algorithm>
#include <limits>
#include <memory>

namespace heapprof {
namespace {

// zlib counts in uInt; feed larger buffers in slices of this size.
constexpr size_t kMaxChunk = std::numeric_limits<uInt>::max();

std::string ZlibMessage(const z_stream& stream, int rc) {
  if (stream.msg != nullptr) return stream.msg;
  return fmt::format("zlib error {}", rc);
}

// Why decompression stopped: the limit and where it comes from.
std::string TooLarge(size_t compressed, size_t limit) {
  std::string shown = limit % (1 << 20) == 0 ? fmt::format("{} MiB", limit >> 20) : fmt::format("{} bytes", limit);
  return fmt::format(
      "gzip data expands beyond the {} limit for its {} compressed bytes ({}x their size, at least {} MiB, at most "
      "{} MiB): a corrupt or hostile file?",
      shown, compressed, kMaxInflateRatio, kInflateAllowance >> 20, kMaxDecompressedBytes >> 20);
}

}  // namespace

size_t InflateLimit(size_t compressed_bytes, size_t ceiling) {
  size_t by_ratio = compressed_bytes > ceiling / kMaxInflateRatio ? ceiling : compressed_bytes * kMaxInflateRatio;
  return std::min(ceiling, std::max(by_ratio, kInflateAllowance));
}

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

namespace {

Result<std::string> LibdeflateCompress(std::string_view bytes, int level) {
  if (level < 0 || level > 12) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("gzip level {} is not in 0..12", level));
  }
  libdeflate_compressor* compressor = libdeflate_alloc_compressor(level);
  if (compressor == nullptr) return Error(ErrorCode::kResourceExhausted, "gzip: out of memory");
  // Uninitialized: only the pages libdeflate writes are ever touched (a
  // profile gzips to about a tenth of the bound), then copied out.
  size_t bound = libdeflate_gzip_compress_bound(compressor, bytes.size());
  std::unique_ptr<char[]> out(new char[bound]);
  size_t n = libdeflate_gzip_compress(compressor, bytes.data(), bytes.size(), out.get(), bound);
  libdeflate_free_compressor(compressor);
  // The bound is libdeflate's promise; 0 would mean it was broken.
  if (n == 0) return Error(ErrorCode::kInternal, "gzip: libdeflate found its output bound too small");
  return std::string(out.get(), n);
}

Result<std::string> ZlibCompress(std::string_view bytes, int level) {
  if (level < Z_NO_COMPRESSION || level > Z_BEST_COMPRESSION) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("gzip level {} is not in 0..9", level));
  }
  z_stream stream{};
  // 15 window bits + 16 asks zlib for a gzip header and trailer.
  int rc = deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  if (rc != Z_OK) return Error(ErrorCode::kInternal, "gzip: deflateInit2 failed: " + ZlibMessage(stream, rc));

  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(std::min(bytes.size(), kMaxChunk))) + 64);
  size_t in_pos = 0;
  size_t out_pos = 0;
  for (;;) {
    size_t in_chunk = std::min(bytes.size() - in_pos, kMaxChunk);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + in_pos));
    stream.avail_in = static_cast<uInt>(in_chunk);
    bool last = in_pos + in_chunk == bytes.size();
    if (out.size() - out_pos < 64) out.resize(out.size() * 2);
    size_t out_chunk = std::min(out.size() - out_pos, kMaxChunk);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    stream.avail_out = static_cast<uInt>(out_chunk);
    rc = deflate(&stream, last ? Z_FINISH : Z_NO_FLUSH);
    in_pos += in_chunk - stream.avail_in;
    out_pos += out_chunk - stream.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string message = ZlibMessage(stream, rc);
      deflateEnd(&stream);
      return Error(ErrorCode::kInternal, "gzip: compression failed: " + message);
    }
  }
  deflateEnd(&stream);
  out.resize(out_pos);
  return out;
}

}  // namespace

Result<std::string> GzipCompress(std::string_view bytes, int level, GzipLibrary library) {
  return library == GzipLibrary::kZlib ? ZlibCompress(bytes, level) : LibdeflateCompress(bytes, level);
}

Result<std::string> GzipDecompress(std::string_view bytes, size_t max_output) {
  if (bytes.empty()) return Error(ErrorCode::kDataLoss, "gzip data is empty");
  if (!IsGzip(bytes)) return Error(ErrorCode::kDataLoss, "not gzip data (missing the 1f 8b magic number)");

  max_output = InflateLimit(bytes.size(), max_output);
  z_stream stream{};
  int rc = inflateInit2(&stream, 15 + 16);  // gzip only
  if (rc != Z_OK) return Error(ErrorCode::kInternal, "gzip: inflateInit2 failed: " + ZlibMessage(stream, rc));

  std::string out;
  // Grow geometrically from a guess; the cap is checked on every step.
  out.resize(std::min(max_output + 1, std::max<size_t>(bytes.size() * 4, 4096)));
  size_t in_pos = 0;
  size_t out_pos = 0;
  auto fail = [&](ErrorCode code, std::string message) -> Result<std::string> {
    inflateEnd(&stream);
    return Error(code, std::move(message));
  };
  for (;;) {
    if (out_pos == out.size()) {
      if (out.size() > max_output) {
        return fail(ErrorCode::kResourceExhausted, TooLarge(bytes.size(), max_output));
      }
      out.resize(std::min(max_output + 1, out.size() * 2));
    }
    size_t in_chunk = std::min(bytes.size() - in_pos, kMaxChunk);
    size_t out_chunk = std::min(out.size() - out_pos, kMaxChunk);
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + in_pos));
    stream.avail_in = static_cast<uInt>(in_chunk);
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
    stream.avail_out = static_cast<uInt>(out_chunk);
    rc = inflate(&stream, Z_NO_FLUSH);
    in_pos += in_chunk - stream.avail_in;
    out_pos += out_chunk - stream.avail_out;
    if (out_pos > max_output) {
      return fail(ErrorCode::kResourceExhausted, TooLarge(bytes.size(), max_output));
    }
    if (rc == Z_STREAM_END) {
      if (in_pos == bytes.size()) break;
      // Concatenated gzip members form one stream (RFC 1952, section 2.2).
      if (!IsGzip(bytes.substr(in_pos))) {
        return fail(ErrorCode::kDataLoss,
                    fmt::format("{} bytes of trailing garbage after the gzip data", bytes.size() - in_pos));
      }
      inflateReset(&stream);
      continue;
    }
    if (rc == Z_DATA_ERROR) return fail(ErrorCode::kDataLoss, "gzip data is corrupt: " + ZlibMessage(stream, rc));
    if (rc == Z_MEM_ERROR) return fail(ErrorCode::kResourceExhausted, "gzip: out of memory");
    if (rc == Z_NEED_DICT || rc == Z_STREAM_ERROR) {
      return fail(ErrorCode::kDataLoss, "gzip data is corrupt: " + ZlibMessage(stream, rc));
    }
    // Z_OK or Z_BUF_ERROR: either more output room is needed or input ran out.
    if (in_pos == bytes.size() && out_pos < out.size()) {
      return fail(ErrorCode::kDataLoss, "gzip data is truncated (the stream ends before its end marker)");
    }
  }
  inflateEnd(&stream);
  out.resize(out_pos);
  return out;
}

}  // namespace heapprof
